package proxy

import (
	"errors"
	"fmt"

	"github.com/galeon-db/galeon/internal/backend"
	"github.com/galeon-db/galeon/internal/eventlog"
	"github.com/galeon-db/galeon/internal/mysqlproto"
	"github.com/galeon-db/galeon/internal/outcome"
	"github.com/galeon-db/galeon/internal/sqlclass"
)

// Wrapped autocommit writes (galera.commit_outcome). An INSERT, UPDATE,
// DELETE or REPLACE that a session sends outside a transaction commits
// by itself; if its connection to the writer is lost before the answer,
// nothing says whether it committed. galeon sends it as one pipelined
// sequence instead (see outcome.Capture):
//
//	START TRANSACTION; <statement>; Capture; SHOW WARNINGS;
//	<marker with the counts, if still in the transaction>;
//	COMMIT AND NO CHAIN NO RELEASE
//
// in one write, and reads the six answers in one go: no round trip
// more than the bare statement. The client gets the statement's own answer
// (affected rows, insert id, warnings count, info), with the status of
// a statement that ran alone, once the COMMIT's OK is in; if the COMMIT
// failed (a certification conflict, a brute-force abort), it gets that
// error instead, as the bare statement would have. What the statement
// leaves for the next one is kept exact too: its ROW_COUNT() is put back
// into the next statement that reads it, and its warnings (or error),
// which the marker's write clears on the node, are answered by galeon to
// a SHOW WARNINGS / SHOW ERRORS / SHOW COUNT(*) that follows (wrapDiag).
//
// Not wrapped: statements inside a transaction (their COMMIT carries the
// marker), multi-statements, statements with RETURNING (a result set),
// LOAD DATA, CALL and DDL (their own commits), statements that name a
// table of an engine Galera does not replicate (localtables.go: not
// transactional either, so the marker could not vouch for it), statements of a session
// pinned to its connection (LOCK TABLES would be released by BEGIN) or
// with a SET TRANSACTION pending, COM_STMT_BULK_EXECUTE, and compressed
// links.

// wrapDiag is what a wrapped statement left for the statement after it.
type wrapDiag struct {
	on bool
	// rows: the next statement's ROW_COUNT() is rowCount (the node's
	// is the COMMIT's).
	rows     bool
	rowCount int64
	// list is the SHOW WARNINGS result (raw packets) when the statement
	// left warnings or an error, and warnings, errors their counts.
	list             []byte
	warnings, errors uint64
}

// wrapFor returns the marker an autocommit write carries, if it is to be
// wrapped.
func (s *session) wrapFor(st *statement, c *backend.Conn) (outcome.Marker, bool) {
	r := st.class
	switch r.Kind {
	case sqlclass.Insert, sqlclass.Update, sqlclass.Delete, sqlclass.Replace:
	default:
		return outcome.Marker{}, false
	}
	if s.p.cfg.Galera.CommitOutcome != "on" || !s.autocommit || s.hold.kind == holdTx || s.hold.kind == holdPinned ||
		s.hold.nextTxn || r.MultiStatement || st.cursor || s.longData ||
		(st.kind != textStatement && st.kind != executeStatement) || sqlclass.HasReturning(st.sql) || c.WriterEpoch() == 0 ||
		s.readsLocalTable(st.sql) {
		return outcome.Marker{}, false
	}
	if c.Caps.Has(mysqlproto.ClientCompress) || s.p.markers.disabled(s.prof.User) || s.p.markers.noWrap.Load() || len(st.pkt) > wrapMaxCommand {
		s.p.markers.skipped.Add(1)
		return outcome.Marker{}, false
	}
	if s.slot == 0 {
		s.slot, s.slotRow = s.p.markers.slot()
	}
	return outcome.Marker{Slot: s.slot, Token: s.p.markers.token.Add(1)}, true
}

// errUnknownSystemVariable is ER_UNKNOWN_SYSTEM_VARIABLE.
const errUnknownSystemVariable = 1193

// wrapMaxCommand bounds the statements that are wrapped. In the driver
// matrix (test/drivers large_20mib), a 20 MiB COM_STMT_EXECUTE sent
// wrapped made MariaDB 10.11 close the connection ("Got a packet bigger
// than 'max_allowed_packet'") where the same statement sent alone
// passes; why is not understood yet. Such statements go alone (a lost
// one gets 9003); a round trip is nothing next to sending them.
const wrapMaxCommand = 1 << 20

// answer is one answer read whole into the session's wrap buffer.
type answer struct {
	// from, to: its packets (headers included) in s.wrapBuf; last: where
	// its last packet starts.
	from, last, to int
	isErr          bool
	code           mysqlproto.ErrorCode
	status         mysqlproto.StatusFlag
	warnings       uint16
	insertID       uint64
	affected       uint64
}

// payload is the answer's last packet's payload (an OK or ERR for a
// write).
func (s *session) lastPayload(a answer) []byte { return s.wrapBuf[a.last+4 : a.to] }

// sendAnswer writes an answer kept in s.wrapBuf to the client,
// numbered for the current command.
func (s *session) sendAnswer(a answer) error {
	for at := a.from; at < a.to; {
		n := int(uint24(s.wrapBuf[at:]))
		if err := s.pc.WritePacket(s.wrapBuf[at+4 : at+4+n]); err != nil {
			return err
		}
		at += 4 + n
	}
	return nil
}

// inTxFlags are the status flags a statement run inside the wrapped
// transaction has and the bare statement would not.
const inTxFlags = mysqlproto.ServerStatusInTrans | mysqlproto.ServerStatusInTransReadonly

// readAnswer reads one whole answer of kind from c into s.wrapBuf.
func (s *session) readAnswer(c *backend.Conn, kind mysqlproto.ResponseKind) (answer, error) {
	a := answer{from: len(s.wrapBuf)}
	f := &s.framer
	f.Reset(kind, c.Caps)
	c.SetSeq(1)
	for {
		raw, err := c.ReadRawPacket()
		if err == nil && len(raw) > mysqlproto.MaxPayloadLen {
			err = errors.New("a wrapped write's answer is over 16 MiB")
		}
		var st mysqlproto.FrameState
		if err == nil {
			st, err = f.Next(mysqlproto.RawPayload(raw))
		}
		if err == nil && st == mysqlproto.FrameLocalInfile {
			err = errors.New("a wrapped write asked for a local file")
		}
		if err != nil {
			c.MarkBroken()
			return a, &backendErr{c.Server(), err}
		}
		a.last = len(s.wrapBuf)
		s.wrapBuf = append(s.wrapBuf, raw...)
		if st == mysqlproto.FrameDone {
			break
		}
	}
	a.to = len(s.wrapBuf)
	a.status, _ = f.Status()
	a.warnings, a.insertID = f.Warnings(), f.LastInsertID()
	a.code, a.isErr = f.ErrorCode()
	if p := s.lastPayload(a); !a.isErr && mysqlproto.IsOK(p) {
		if ok, err := mysqlproto.ParseOK(p, c.Caps); err == nil {
			a.affected = ok.AffectedRows
		}
	}
	return a, nil
}

// wrapState is how far a wrapped write's answers were read.
type wrapState struct {
	// unwrapped: START TRANSACTION's answer was an error, so the
	// statement ran alone (its marker proves nothing about it).
	unwrapped bool
	// markerRead: the marker's answer was read; marked: it wrote the
	// row (else the statement's commit carries no token).
	markerRead, marked bool
	// got: the statement's answer was read (stmt).
	got  bool
	stmt answer
}

// settleable says whether a wrapped write whose connection broke can be
// settled from its marker.
func (w wrapState) settleable() bool {
	return !w.unwrapped && (!w.markerRead || w.marked) && !(w.got && w.stmt.isErr)
}

// forwardWrapped runs a wrapped autocommit write (out, answered as kind)
// on c and answers the client.
func (s *session) forwardWrapped(c *backend.Conn, out []byte, kind mysqlproto.ResponseKind, m outcome.Marker, mayRetry bool) (res relayResult, w wrapState, err error) {
	s.running.Store(c)
	defer s.running.Store(nil)
	s.wrapBuf = s.wrapBuf[:0]
	s.markBuf = m.Append(mysqlproto.AppendComQuery(s.markBuf[:0], "", c.Caps), s.slotRow, true)
	cmds := [...][]byte{wrapStart, out, wrapCapture, wrapShowWarnings, s.markBuf, wrapCommit}
	if c.Caps.Has(mysqlproto.ClientQueryAttributes) {
		// Prebuilt without the attributes' prefix.
		for i, q := range map[int]string{0: wrapStartSQL, 2: outcome.Capture, 3: "SHOW WARNINGS", 5: wrapCommitSQL} {
			cmds[i] = mysqlproto.AppendComQuery(nil, q, c.Caps)
		}
	}
	for _, p := range cmds {
		c.ResetSeq()
		if err = c.WritePacket(p); err != nil {
			break
		}
	}
	if err == nil {
		err = c.Flush()
	}
	if err != nil {
		c.MarkBroken()
		return res, w, &backendErr{c.Server(), err}
	}
	start, err := s.readAnswer(c, mysqlproto.ResponseQuery)
	if err != nil {
		return res, w, err
	}
	w.unwrapped = start.isErr
	if w.stmt, err = s.readAnswer(c, kind); err != nil {
		return res, w, err
	}
	w.got = true
	// The capture, SHOW WARNINGS, the marker and the COMMIT.
	var after [4]answer
	var markErr *mysqlproto.SQLError
	markFailure := outcome.TxIntact
	for i := range after {
		if after[i], err = s.readAnswer(c, mysqlproto.ResponseQuery); err != nil {
			return res, w, err
		}
		if i == 2 {
			mark := after[2]
			w.markerRead = true
			if mark.isErr {
				markErr, _ = mysqlproto.ParseErr(s.lastPayload(mark))
				markFailure = outcome.MarkerFailed(uint16(mark.code))
				s.slotRow = false
			} else {
				// 0 rows: the transaction was gone (a brute-force
				// abort), or the slot's row is (next time: an insert).
				w.marked = mark.affected > 0
				s.slotRow = w.marked
			}
		}
	}
	show, commit := after[1], after[3]
	if commit.isErr || commit.status.Has(mysqlproto.ServerStatusInTrans) {
		// The sequence's transaction may still be open on c: no later
		// BEGIN may commit it implicitly.
		c.MarkBroken()
	}
	if commit.isErr {
		// A row the marker inserted is not there.
		s.slotRow = false
	}
	if w.stmt.isErr && w.stmt.code == errWsrepNotReady {
		// The node is outside the Primary component and refused the
		// statement: nothing committed, go elsewhere.
		return res, w, &nodeRejects{c.Server()}
	}
	if !w.stmt.isErr && !w.unwrapped && markErr != nil && markErr.Code == errWsrepNotReady && commit.isErr {
		if commit.code == errWsrepNotReady || commit.code == mysqlproto.ErLockDeadlock {
			// The node left the Primary component between the
			// statement and its marker, and refused the marker and
			// then the COMMIT (or aborted it): nothing committed. The
			// statement goes elsewhere, as when the node refuses the
			// statement itself.
			return res, w, &nodeRejects{c.Server()}
		}
		// Any other COMMIT error (1180) ran the COMMIT: the node may
		// have rejoined the Primary component in between and
		// committed the statement, which carries no token.
		return s.wrapUnknown(c, markErr, commit.status), w, s.pc.Flush()
	}
	if !w.stmt.isErr && !w.unwrapped && markErr != nil && markFailure == outcome.TxUnknown && !commit.isErr {
		// The marker's error may have rolled the statement back: the
		// COMMIT's OK proves nothing.
		return s.wrapUnknown(c, markErr, commit.status), w, s.pc.Flush()
	}
	if !w.stmt.isErr && !w.unwrapped && w.marked && commit.isErr && (commit.code == errDuringCommit || commit.code == errWsrepNotReady) {
		// The COMMIT failed as the node lost the Primary component,
		// and may have committed all the same: the marker settles it.
		return res, w, &commitUncertain{c.Server()}
	}
	// The client's answer: the statement's, unless what followed undid
	// it — a brute-force abort (1213) after the statement rolled it
	// back, and the COMMIT then had nothing to commit; or the COMMIT
	// failed. (A marker that failed otherwise — its table or grant
	// missing — leaves the transaction open: the COMMIT commits the
	// statement.)
	give := w.stmt
	if !w.stmt.isErr && !w.unwrapped {
		for i, a := range after[:3] {
			if a.isErr && (a.code == mysqlproto.ErLockDeadlock || i == 2 && markFailure == outcome.TxRolledBack) {
				// A brute-force abort, or the marker's error rolled
				// the transaction back (1180 wsrep_max_ws_rows, 1206):
				// the COMMIT had nothing to commit.
				give = a
				break
			}
		}
		if give.to == w.stmt.to && commit.isErr {
			give = commit
		}
	}
	if mayRetry && give.isErr && give.code == mysqlproto.ErLockDeadlock && !w.unwrapped {
		// A deadlock or a brute-force abort (a conflicting write-set, a
		// TOI schema change) rolled the whole write back: nothing
		// committed. A bare autocommit write is retried by the node
		// itself (wsrep_retry_autocommit, once by default); inside the
		// wrap's transaction it is not, so galeon retries it instead.
		return res, w, errWrapAborted
	}
	switch {
	case markErr == nil || markFailure == outcome.TxRolledBack || markErr.Code == errWsrepNotReady:
	case markErr.Code == errUnknownSystemVariable:
		// A server without @@in_transaction: COMMIT markers still work.
		if !s.p.markers.noWrap.Swap(true) {
			s.p.log.Warn("autocommit writes are not wrapped with commit markers: the nodes have no @@in_transaction (MariaDB 10.3 or later has it); an autocommit write lost with the writer will be reported as of unknown outcome",
				"error", markErr.Error())
		}
	default:
		s.markerFailed(markErr)
	}
	own := give.to == w.stmt.to
	if own {
		mysqlproto.ClearStatus(s.lastPayload(give), c.Caps, inTxFlags)
	}
	if err := s.sendAnswer(give); err != nil {
		c.MarkBroken()
		return res, w, err
	}
	res = relayResult{isErr: give.isErr, written: true, recv: give.to - give.from, warnings: give.warnings, lastInsertID: give.insertID, statusKnown: true}
	res.status = commit.status
	if !give.isErr {
		res.status = give.status &^ inTxFlags
	}
	if give.isErr && endsConnection(give.code) {
		c.MarkBroken()
	}
	if own {
		s.keepDiagnostics(give, show, c.Caps)
	}
	return res, w, s.pc.Flush()
}

// errWrapAborted says a wrapped autocommit write was rolled back by a
// deadlock or a brute-force abort, nothing sent to the client: the
// statement loop runs it again.
var errWrapAborted = errors.New("wrapped write aborted by a deadlock")

// wrapRetries is how often an aborted wrapped write is run again: as
// the nodes' default wsrep_retry_autocommit for a bare one.
const wrapRetries = 1

// wrapUnknown answers a wrapped write whose outcome its answers cannot
// tell (the marker failed in a way that may have rolled the statement
// back) with 9003; the connection goes.
func (s *session) wrapUnknown(c *backend.Conn, markErr *mysqlproto.SQLError, status mysqlproto.StatusFlag) relayResult {
	c.MarkBroken()
	s.slotRow = false
	s.p.counts.backendLost.Add(1)
	_ = s.pc.WriteErr(mysqlproto.NewSQLError(mysqlproto.ErGaleonBackendLost,
		"galeon: your statement ran on %s, but the commit marker galeon wrote after it failed (%d: %s), which may have rolled it back: it may or may not have committed; check before you retry",
		c.Server(), markErr.Code, markErr.Message), s.caps)
	return relayResult{isErr: true, written: true, statusKnown: true, status: status &^ inTxFlags}
}

// The fixed commands of a wrapped write (without query attributes,
// which MariaDB does not take). START TRANSACTION, not BEGIN (which
// sql_mode=ORACLE reads as a block); the COMMIT says NO CHAIN NO
// RELEASE whatever completion_type the session has.
const (
	wrapStartSQL  = "START TRANSACTION"
	wrapCommitSQL = "COMMIT AND NO CHAIN NO RELEASE"
)

var (
	wrapStart        = mysqlproto.AppendComQuery(nil, wrapStartSQL, 0)
	wrapCapture      = mysqlproto.AppendComQuery(nil, outcome.Capture, 0)
	wrapShowWarnings = mysqlproto.AppendComQuery(nil, "SHOW WARNINGS", 0)
	wrapCommit       = mysqlproto.AppendComQuery(nil, wrapCommitSQL, 0)
)

// keepDiagnostics notes what the client's answer a leaves for the next
// statement; show is the SHOW WARNINGS answer read after the statement.
func (s *session) keepDiagnostics(a, show answer, caps mysqlproto.Capability) {
	d := wrapDiag{on: true, rows: true, rowCount: int64(a.affected)}
	if a.isErr {
		d.rowCount = -1
	}
	if (a.isErr || a.warnings > 0) && !show.isErr && show.to > show.from {
		d.list = append([]byte(nil), s.wrapBuf[show.from:show.to]...)
		_, rows, _ := splitResult(d.list, caps)
		d.warnings = uint64(len(rows))
		if !a.isErr && uint64(a.warnings) > d.warnings {
			d.warnings = uint64(a.warnings) // more than max_error_count
		}
		for _, r := range rows {
			if rowLevel(r) == "Error" {
				d.errors++
			}
		}
	}
	s.wrapDiag = d
}

// splitResult splits a text result set's raw packets into its head
// (column count, definitions, the EOF after them), its rows and its
// terminator.
func splitResult(b []byte, caps mysqlproto.Capability) (head []byte, rows [][]byte, term []byte) {
	var pkts [][]byte
	for at := 0; at+4 <= len(b); {
		n := int(uint24(b[at:]))
		pkts = append(pkts, b[at:at+4+n])
		at += 4 + n
	}
	if len(pkts) < 2 {
		return nil, nil, nil
	}
	cols, _, _, err := mysqlproto.ReadLenEncInt(pkts[0][4:])
	headN := 1 + int(cols)
	if !caps.Has(mysqlproto.ClientDeprecateEOF) {
		headN++
	}
	if err != nil || headN >= len(pkts) {
		return nil, nil, nil
	}
	end := 0
	for _, p := range pkts[:headN] {
		end += len(p)
	}
	return b[:end], pkts[headN : len(pkts)-1], pkts[len(pkts)-1]
}

// rowLevel is a SHOW WARNINGS row's first column (Note, Warning, Error).
func rowLevel(raw []byte) string {
	p := raw[4:]
	n, isNull, k, err := mysqlproto.ReadLenEncInt(p)
	if err != nil || isNull || k+int(n) > len(p) {
		return ""
	}
	return string(p[k : k+int(n)])
}

// diagnosticsAfterWrap answers, or readies, a text statement that
// follows a wrapped write at once and reads what that write left: a
// SHOW WARNINGS / SHOW ERRORS is answered from the list galeon kept (if
// the write left one), and ROW_COUNT(), @@warning_count and @@error_count
// are put back in the statement as values. handled: the client has its
// answer (err).
func (s *session) diagnosticsAfterWrap(q string, r sqlclass.Result) (q2 string, r2 sqlclass.Result, handled bool, err error) {
	d := s.afterWrap
	if !d.on || r.MultiStatement {
		return q, r, false, nil
	}
	if sd, ok := sqlclass.ParseShowDiagnostics(q); ok && d.list != nil {
		if !sd.Count {
			return q, r, true, s.answerDiagnostics(sd, d)
		}
		q = "SELECT @@session.warning_count"
		if sd.Errors {
			q = "SELECT @@session.error_count"
		}
		r = sqlclass.Classify(q)
	}
	if !r.NeedsSameConn {
		return q, r, false, nil
	}
	out, done := sqlclass.ReplaceDiagnostics(q, sqlclass.Diagnostics{Rows: d.rows, RowCount: d.rowCount,
		Counts: d.list != nil, WarningCount: d.warnings, ErrorCount: d.errors})
	if len(done) == 0 {
		return q, r, false, nil
	}
	s.rename.exact = s.rename.exact[:0]
	for _, rp := range done {
		s.rename.exact = append(s.rename.exact, exactRename{from: rp.Value, to: rp.Spelling})
	}
	return out, sqlclass.Classify(out), false, nil
}

// keepAfterWrap carries what a wrapped write left over a statement that
// ran on a node and left the diagnostics as they were: one that uses no
// table and had no warning nor error (the node keeps its list then).
// ROW_COUNT() is the node's own again.
func (s *session) keepAfterWrap(carry bool) {
	if carry && !s.wrapDiag.on && !s.lastDiag {
		s.wrapDiag = s.afterWrap
		s.wrapDiag.rows = false
	}
}

// answerDiagnostics answers SHOW WARNINGS / SHOW ERRORS from the list a
// wrapped write left.
func (s *session) answerDiagnostics(sd sqlclass.ShowDiagnostics, d wrapDiag) error {
	head, rows, term := splitResult(d.list, s.caps)
	if term == nil {
		return s.sendErr(mysqlproto.NewSQLError(mysqlproto.ErUnknownComError, "galeon: the warnings of the previous statement could not be kept"))
	}
	if sd.Errors {
		var errs [][]byte
		for _, r := range rows {
			if rowLevel(r) == "Error" {
				errs = append(errs, r)
			}
		}
		rows = errs
	}
	if sd.HasLimit {
		rows = rows[min(uint64(len(rows)), sd.Offset):]
		rows = rows[:min(uint64(len(rows)), sd.Limit)]
	}
	send := func(raw []byte) error { return s.pc.WritePacket(raw[4:]) }
	for at := 0; at < len(head); {
		n := int(uint24(head[at:]))
		if p := head[at+4 : at+4+n]; mysqlproto.IsEOF(p, false) {
			// The EOF after the column definitions: its status is the
			// one inside the wrapped transaction.
			mysqlproto.ClearStatus(p, s.caps&^mysqlproto.ClientDeprecateEOF, inTxFlags)
		}
		if err := send(head[at : at+4+n]); err != nil {
			return err
		}
		at += 4 + n
	}
	for _, r := range rows {
		if err := send(r); err != nil {
			return err
		}
	}
	// The terminator's status is the one inside the wrapped transaction.
	t := append([]byte(nil), term...)
	mysqlproto.ClearStatus(t[4:], s.caps, inTxFlags)
	if err := send(t); err != nil {
		return err
	}
	// The list stays for the next statement (SHOW WARNINGS clears
	// nothing), and its ROW_COUNT() is -1, not the node's.
	d.rows, d.rowCount = true, -1
	s.wrapDiag = d
	return s.pc.Flush()
}

// settleWrapped answers a wrapped write whose connection to the writer
// broke before the COMMIT's answer: from the marker, the statement's own
// answer if it committed, and if it did not (or only the marker did: the
// statement failed), again reports true: the caller runs the statement
// once more, on the writer. Nothing had reached the client.
//
// uncertain: the connection did not break, its COMMIT was answered with
// an error that does not say (commitUncertain).
func (s *session) settleWrapped(c *backend.Conn, m outcome.Marker, w wrapState, uncertain bool) (again bool, err error) {
	old, lidBefore := c.Server(), c.LastInsertID
	v, how, took, looks := s.verdict(c, m)
	rc, lid, counted := outcome.Counts(m, looks)
	// Not run again where the node is up and ended the connection by
	// itself (an operator's KILL, a timeout of the node's): running it
	// again would undo the KILL.
	rerun := v == outcome.NotCommitted || (v == outcome.Committed && !w.got && counted && rc < 0)
	replay := s.replayOn() && rerun && (uncertain || c.Fenced() || !s.nodeAnswers(c))
	note := func(what string) {
		s.p.events.Add(eventlog.Commit, old, fmt.Sprintf("an autocommit write lost with %s was settled in %s: %s (%s)", old, took, what, how))
	}
	switch {
	case v == outcome.Committed && w.got:
		note("committed; the client got its answer")
		a := w.stmt
		mysqlproto.ClearStatus(s.lastPayload(a), s.caps, inTxFlags)
		if err := s.sendAnswer(a); err != nil {
			return false, err
		}
		s.wrapDiag = wrapDiag{on: true, rows: true, rowCount: int64(a.affected)}
		return false, s.pc.Flush()
	case v == outcome.Committed && counted && rc >= 0:
		note(fmt.Sprintf("committed, %d rows affected; the client got its OK", rc))
		ok := mysqlproto.OKPacket{AffectedRows: uint64(rc), Status: mysqlproto.ServerStatusAutocommit}
		if lid != lidBefore {
			ok.LastInsertID = lid
			s.lastInsertID = lid
		}
		s.wrapDiag = wrapDiag{on: true, rows: true, rowCount: rc}
		if err := s.pc.WriteOK(&ok, s.caps); err != nil {
			return false, err
		}
		return false, s.pc.Flush()
	case (v == outcome.NotCommitted || (v == outcome.Committed && counted)) && replay:
		what := "not committed"
		if v == outcome.Committed {
			what = "the statement failed there (only its marker committed)"
		}
		note(what + "; it runs again on the writer")
		s.p.counts.replayed.Add(1)
		return true, nil
	case v == outcome.NotCommitted || (v == outcome.Committed && counted):
		note("not committed; the client got 9002")
		s.p.counts.abortedWriterChanged.Add(1)
		return false, s.sendErr(mysqlproto.NewSQLError(mysqlproto.ErGaleonWriterChanged,
			"galeon: the connection to the writer %s broke while your statement ran there, and the cluster settled that it did not commit (%s): it changed nothing; retry it", old, how))
	case v == outcome.Committed:
		note("committed, its answer lost; the client got 9003")
		s.p.counts.backendLost.Add(1)
		return false, s.sendErr(mysqlproto.NewSQLError(mysqlproto.ErGaleonBackendLost,
			"galeon: the connection to the writer %s broke while your statement ran there; the cluster settled that it committed (%s), but its affected-row count was lost: do not retry it", old, how))
	}
	note("unknown; the client got 9003")
	s.p.counts.backendLost.Add(1)
	return false, s.sendErr(mysqlproto.NewSQLError(mysqlproto.ErGaleonBackendLost,
		"galeon: the connection to the writer %s broke while your statement ran there, and the cluster could not settle its outcome within galera.commit_settle_timeout (%s: %s): it may or may not have committed; check before you retry",
		old, s.p.cfg.Galera.CommitSettleTimeout.D(), how))
}

// uint24 reads a packet header's length.
func uint24(b []byte) uint32 { return uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 }
