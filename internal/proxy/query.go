package proxy

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unsafe"

	"github.com/galeon-db/galeon/internal/backend"
	"github.com/galeon-db/galeon/internal/mysqlproto"
	"github.com/galeon-db/galeon/internal/sqlclass"
	"github.com/galeon-db/galeon/internal/topology"
)

// connFor returns the connection a statement must run on: the held one if
// the session has to stay there, else one from the pool of the hostgroup
// the router picks.
func (s *session) connFor(q string, r sqlclass.Result) (*backend.Conn, route, error) {
	if s.hold.conn != nil && s.hold.conn.WriterEpoch() != 0 && s.hold.conn.WriterEpoch() != s.p.view.Load().Epoch {
		// The writer changed while this session held a writer connection.
		stateful, inTx := s.hold.stateful(), s.hold.kind == holdTx
		c := s.hold.drop()
		s.discard(c)
		if inTx && s.inLoop && r.Kind == sqlclass.Rollback && !r.Chain && !r.MultiStatement {
			// The transaction never committed and no longer can: the
			// ROLLBACK runs on a fresh connection (as a no-op), not
			// after a replay of the transaction (see rollbackLost).
			// Only a ROLLBACK that runs: a PREPARE of one must not
			// drop the transaction.
			s.tx.reset()
			inTx, stateful = false, false
		}
		if inTx && s.replayable() {
			// Its COMMIT was never sent: the transaction runs again on
			// the new writer (replay.go).
			if err := s.replayTx(c.Server()); err != nil {
				return nil, "", err
			}
			return s.hold.conn, routeHeld, nil
		}
		if stateful {
			s.p.counts.abortedWriterChanged.Add(1)
			return nil, "", writerChanged(c.Server(), s.p.view.Load())
		}
	}
	if s.hold.conn != nil && !s.hold.conn.Pool().Unpark(s.hold.conn) &&
		!(s.hold.kind == holdSoft && r.NeedsSameConn && !r.IsWrite()) {
		// The writer role is leaving this node and its writer
		// connections are being drained: one held while idle with no
		// transaction (parked, see after) is about to be fenced. A soft
		// hold just goes — unless this is a read about the previous
		// statement (SHOW WARNINGS, ROW_COUNT()), which runs there,
		// parked: it writes nothing; pinned state is lost with the
		// writer role.
		stateful := s.hold.kind == holdPinned
		c := s.hold.drop()
		s.discard(c)
		if stateful {
			s.p.counts.abortedWriterChanged.Add(1)
			return nil, "", writerChanged(c.Server(), s.p.view.Load())
		}
	}
	if s.hold.conn != nil {
		if s.hold.kind == holdSoft && !r.NeedsSameConn {
			c := s.hold.conn
			s.hold.drop()
			s.releaseLast(c)
		} else {
			if err := s.sync(s.hold.conn); err != nil {
				if h := s.hold.conn; h != nil && s.hold.kind == holdSoft {
					h.Pool().Park(h) // still idle: not waited for
				}
				return nil, "", err
			}
			if c := s.hold.conn; r.UsesLastInsertID && s.hold.kind == holdSoft && c.LastInsertID != s.lastInsertID {
				// Held for a statement about the previous one, which
				// was not the session's last insert.
				s.hold.drop()
				return s.asPrevious(c, r, routeHeld, false)
			}
			return s.hold.conn, routeHeld, nil
		}
	}
	if r.NeedsSameConn && s.hold.last != nil {
		// A statement about the previous one (FOUND_ROWS(), SHOW
		// WARNINGS, ...) after a read that was not held: take that
		// read's connection back if nobody has used it since.
		c := s.hold.last
		s.forgetLast()
		if (!r.IsWrite() || s.isWriter(c.Server())) && c.Pool().TakeBack(c, s.prof, s.hold.lastGen) {
			if r.IsWrite() {
				// A write on the writer: a writer change waits for it
				// or fences it, as for any writer connection.
				s.claim(c, routeWriter, s.p.view.Load())
			}
			return s.asPrevious(c, r, routeHeld, false)
		}
	}
	hg := s.hostgroupFor(q, r)
	c, err := s.acquire(hg)
	if err != nil || !r.NeedsSameConn {
		return c, hg, err
	}
	return s.asPrevious(c, r, hg, true)
}

// writerChanged is the 9002 a session gets for a transaction the writer
// change on old took: it names the new writer only when there is one,
// and otherwise says why there is none (the writes wait for one).
func writerChanged(old string, snap *topology.Snapshot) *mysqlproto.SQLError {
	const retry = "it was rolled back: retry the transaction"
	w, ok := snap.Writer()
	switch {
	case ok && w.Name != old:
		return mysqlproto.NewSQLError(mysqlproto.ErGaleonWriterChanged,
			"galeon: the writer changed from %s to %s while your transaction was open; %s", old, w.Name, retry)
	case ok:
		return mysqlproto.NewSQLError(mysqlproto.ErGaleonWriterChanged,
			"galeon: the writer role left %s and came back to it (epoch %d) while your transaction was open; %s", old, snap.Epoch, retry)
	case snap.Switching && snap.Pending != "":
		return mysqlproto.NewSQLError(mysqlproto.ErGaleonWriterChanged,
			"galeon: the writer role is moving from %s to %s while your transaction was open; %s (writes wait for the switch)", old, snap.Pending, retry)
	}
	return mysqlproto.NewSQLError(mysqlproto.ErGaleonWriterChanged,
		"galeon: the writer %s was fenced while your transaction was open and no node has the writer role yet (%s); %s (writes wait for a writer up to proxy.no_backend_timeout)",
		old, snap.Why("writer"), retry)
}

// clearDiagnostics empties a connection's warnings and errors. MariaDB
// keeps them across statements that use no table (DO 0, SELECT 1), so it
// takes a statement that reads one.
const clearDiagnostics = "(SELECT 1 FROM information_schema.ENGINES LIMIT 0)"

// asPrevious prepares c, about to run a statement about the previous one
// (SHOW WARNINGS, LAST_INSERT_ID(), ...), to answer as the connection of
// that statement would. A statement that reads LAST_INSERT_ID() gets the
// session's last insert id, which another of its connections produced:
// INSERT INTO child VALUES (LAST_INSERT_ID(), ...) after an intervening
// read must see its parent's id. And a connection that was not the
// previous statement's (foreign) must not show the warnings another
// session left on it.
func (s *session) asPrevious(c *backend.Conn, r sqlclass.Result, hg route, foreign bool) (*backend.Conn, route, error) {
	var err error
	if foreign && c.Diag {
		if err = c.Query("DO " + clearDiagnostics); err == nil {
			c.Diag = false
		}
	}
	if err == nil && r.UsesLastInsertID && c.LastInsertID != s.lastInsertID {
		// A SELECT, not DO: the statement this one is about was a read
		// (a write would have kept its connection), and after a SELECT
		// ROW_COUNT() is -1 as it should be; after DO it would be 0.
		if err = c.Query(fmt.Sprintf("SELECT LAST_INSERT_ID(%d)", s.lastInsertID)); err == nil {
			c.LastInsertID = s.lastInsertID
		}
	}
	if err != nil {
		if c.Broken() {
			s.discard(c)
		} else {
			s.release(c)
		}
		return nil, "", err
	}
	return c, hg, nil
}

// isWriter reports whether node is the writer now.
func (s *session) isWriter(node string) bool {
	w, ok := s.p.view.Load().Writer()
	return ok && w.Name == node
}

// releaseLast gives a connection back and remembers it as the session's
// last: for a following statement about this one (see connFor), and, for
// a read on the reader of the session's run (pool.affinity, readerRun),
// for its next read there (takeLast), for which the pool keeps it a
// moment. Other connections go back to be reused most recent first: on
// a node the sessions do not move away from (the writer, reads sent
// there), a few connections shared in turn cost the node less CPU per
// statement than one per session (bench/README.md).
func (s *session) releaseLast(c *backend.Conn) {
	s.forgetLast()
	if s.p.cfg.Pool.Affinity && s.readers.node == c.Server() {
		s.hold.last, s.hold.lastGen, s.hold.lastKept = c, c.Pool().Keep(c, s.prof), true
		return
	}
	s.hold.last, s.hold.lastGen = c, s.release(c)
}

// forgetLast lets the session's last connection, if the pool keeps it
// for the session, go to any session.
func (s *session) forgetLast() {
	if c := s.hold.last; c != nil {
		s.hold.last = nil
		if s.hold.lastKept {
			s.hold.lastKept = false
			c.Pool().Unkeep(c, s.prof, s.hold.lastGen)
		}
	}
}

// takeLast takes back the session's last connection for a read going
// to node, the reader of its run, if the pool kept it (releaseLast) and
// nobody used it since; else nil. Other statements take the connection
// returned most recently, as TryIdle gives it.
func (s *session) takeLast(node string) *backend.Conn {
	c := s.hold.last
	if c == nil || !s.p.cfg.Pool.Affinity || node != s.readers.node || c.Server() != node || c.Pool() != s.p.pool(node) {
		return nil
	}
	if !c.Pool().Reclaim(c, s.prof, s.hold.lastGen) {
		return nil
	}
	s.hold.last, s.hold.lastKept = nil, false
	return c
}

// pinReason says why a successful statement makes the session unable to
// move between connections, or "".
func pinReason(r sqlclass.Result) string {
	switch {
	case r.TempTable == sqlclass.TempCreate:
		return "temporary table"
	case r.AdvisoryLock&sqlclass.LockAcquire != 0:
		return "GET_LOCK"
	case r.Kind == sqlclass.LockTables:
		return "LOCK TABLES"
	case r.UsesUserVars:
		return "user variables"
	case r.Kind == sqlclass.Prepare || r.Kind == sqlclass.Execute:
		return "SQL-level PREPARE"
	case r.Kind == sqlclass.Handler:
		return "HANDLER"
	}
	if r.MultiStatement {
		for _, st := range r.Statements() {
			if st.Result.Kind == sqlclass.Set || st.Result.Kind == sqlclass.Use {
				return "SET or USE inside a multi-statement"
			}
		}
	}
	return ""
}

// after decides, from the server's final status, whether the session keeps
// the connection: inside a transaction, pinned, or softly after a write.
func (s *session) after(c *backend.Conn, r sqlclass.Result, res relayResult) {
	s.lastDiag = res.warnings > 0 || res.isErr
	if res.lastInsertID != 0 {
		s.lastInsertID, c.LastInsertID = res.lastInsertID, res.lastInsertID
	}
	if res.warnings > 0 || res.isErr {
		// Sticky: statements that use no table leave them in place.
		c.Diag = true
	}
	if c.Broken() {
		// The node ended the connection after its answer (killed,
		// shutting down, a network error it reported).
		if s.hold.stateful() || res.status.Has(mysqlproto.ServerStatusInTrans) {
			s.hold.lost = "the node closed the connection that held the session's transaction or state"
		}
		s.hold.drop()
		s.discard(c)
		return
	}
	inTx := s.hold.kind == holdTx
	if res.statusKnown {
		s.autocommit = res.status.Has(mysqlproto.ServerStatusAutocommit)
		inTx = res.status.Has(mysqlproto.ServerStatusInTrans)
	}
	if !inTx {
		s.hold.wrote = false
	} else if !res.isErr && changesData(r) {
		s.hold.wrote = true
	}
	if !res.isErr {
		if why := pinReason(r); why != "" {
			s.hold.pin(c, why)
		}
		s.noteWrite(c, r)
	}
	if s.hold.nextTxn && (r.Kind == sqlclass.Commit || r.Kind == sqlclass.Rollback) && !inTx {
		s.hold.nextTxn = false
	}
	switch {
	case s.hold.kind == holdPinned:
		s.hold.keep(c, holdPinned)
	case inTx || s.hold.nextTxn:
		s.hold.keep(c, holdTx)
	case r.NeedsSameConn || r.Kind == sqlclass.Insert || r.Kind == sqlclass.Update ||
		r.Kind == sqlclass.Delete || r.Kind == sqlclass.Replace || r.Kind == sqlclass.Call ||
		r.Kind == sqlclass.Load || res.warnings > 0 || res.isErr:
		// A statement with effects, warnings or an error is often
		// followed by one about it (ROW_COUNT(), SHOW WARNINGS, SHOW
		// ERRORS): keep its connection until a statement that is not.
		s.hold.keep(c, holdSoft)
	default:
		s.hold.drop()
		s.releaseLast(c)
	}
	// A pinned connection only when its status said so: replies without
	// one (an error, a PREPARE) may come inside its transaction.
	if h := s.hold.conn; h != nil && (s.hold.kind == holdSoft ||
		s.hold.kind == holdPinned && res.statusKnown && !inTx && !s.hold.nextTxn) {
		// Held while idle with no transaction open: a writer change
		// need not wait for this session (it loses nothing there).
		h.Pool().Park(h)
	}
}

// backendFailed handles a connection that broke during a statement: the
// client gets a clear error (unless bytes of the answer already reached
// it, then the connection is closed), the session drops the connection
// and any transaction on it, and the node gets an immediate health check.
func (s *session) backendFailed(c *backend.Conn, err error, res relayResult) error {
	return s.lostDuring(c, sqlclass.Result{Kind: sqlclass.Show}, err, res)
}

// lostDuring is backendFailed for a statement of class r.
func (s *session) lostDuring(c *backend.Conn, r sqlclass.Result, err error, res relayResult) error {
	inTx := s.hold.conn == c && s.hold.kind == holdTx
	if s.hold.conn == c {
		s.hold.drop()
	}
	s.discard(c)
	var be *backendErr
	if !errors.As(err, &be) {
		return err // the client connection itself failed
	}
	switch what, nothing := interrupted(r, inTx, s.autocommit); {
	case c.Fenced() && nothing:
		// 9002 (SQLSTATE 40001, "retry the transaction") only when
		// retrying cannot apply anything twice.
		s.p.counts.abortedWriterChanged.Add(1)
		err = mysqlproto.NewSQLError(mysqlproto.ErGaleonWriterChanged,
			"galeon: the writer role moved away from %s while this statement ran there; %s", c.Server(), what)
	case c.Fenced():
		s.p.counts.abortedWriterChanged.Add(1)
		err = mysqlproto.NewSQLError(mysqlproto.ErGaleonBackendLost,
			"galeon: the writer role moved away from %s while this statement ran there; %s", c.Server(), what)
	case nothing:
		s.p.counts.backendLost.Add(1)
		err = mysqlproto.NewSQLError(mysqlproto.ErGaleonWriterChanged,
			"galeon: lost connection to backend %s (%v) while this statement ran there; %s", be.server, be.err, what)
	default:
		s.p.counts.backendLost.Add(1)
		err = mysqlproto.NewSQLError(mysqlproto.ErGaleonBackendLost,
			"galeon: lost connection to backend %s (%v) while this statement ran there; %s", be.server, be.err, what)
	}
	s.p.suspect(be.server)
	if res.recv > s.bw.Buffered() {
		// Part of the answer reached the client: no clean error is
		// possible any more, so end the connection like a server would.
		return err
	}
	// Nothing reached the client: drop what was buffered and answer
	// with an error in its place, numbered as the client expects after
	// its command (which may have been several packets long).
	s.bw.Reset(s.out)
	s.pc.SetSeq(s.cmdSeq)
	return s.sendErr(asSQLError(err))
}

func (s *session) comQuery(pkt []byte) error {
	qb, err := mysqlproto.QueryText(pkt, s.caps)
	if err != nil {
		return s.sendErr(mysqlproto.NewSQLError(mysqlproto.ErMalformedPacket, "malformed COM_QUERY: %v", err))
	}
	// The text lives in the client read buffer, valid until the next
	// client read: no copy on the hot path.
	q := unsafe.String(unsafe.SliceData(qb), len(qb))
	r := sqlclass.ClassifyLogged(q, &s.toks)
	if r.UsesConnectionID {
		// CONNECTION_ID() is galeon's session id, whichever pooled
		// connection runs the statement.
		if q2, spelling, n := sqlclass.ReplaceConnectionID(q, s.id); n > 0 {
			q, pkt = q2, mysqlproto.AppendComQuery(nil, q2, s.caps)
			s.rename = columnRename{from: strconv.FormatUint(uint64(s.id), 10), to: spelling}
			defer func() { s.rename = columnRename{} }()
		}
	}
	if s.afterWrap.on {
		// The previous statement was a wrapped write (wrap.go).
		q0 := q
		var handled bool
		if q, r, handled, err = s.diagnosticsAfterWrap(q, r); handled {
			return err
		}
		if q != q0 {
			pkt = mysqlproto.AppendComQuery(nil, q, s.caps)
			defer func() { s.rename = columnRename{} }()
		}
		defer s.keepAfterWrap(sqlclass.UsesNoTable(q, r))
	}
	if r.Kind == sqlclass.Kill {
		return s.comKillStatement(q)
	}
	if r.Kind == sqlclass.Show {
		if full, ok := sqlclass.ProcesslistQuery(q); ok {
			return s.comProcesslist(q, full)
		}
	}
	s.infile = false
	if r.Kind == sqlclass.Load && r.Local {
		if why := s.localInfileRefusal(); why != "" {
			return s.sendErr(mysqlproto.NewSQLError(mysqlproto.ErNotAllowedCommand, "%s", why))
		}
		s.infile = true
		// The file's packets are read into the client read buffer that
		// q lives in; the statement's text must outlive them (its digest
		// is taken after the load).
		q = strings.Clone(q)
	}
	var setAs []sqlclass.Assignment
	setParsed := false
	if r.Kind == sqlclass.Set && !r.MultiStatement {
		if as, perr := sqlclass.ParseSet(q); perr == nil {
			setAs, setParsed = as, true
		}
	}
	st := statement{kind: textStatement, sql: q, class: r, pkt: pkt, setAs: setAs, setParsed: setParsed}
	return s.runStatement(&st)
}

// afterText notes what a text statement that succeeded on c did to the
// session: its schema, its variables, the non-replicated tables a DDL
// may have changed.
func (s *session) afterText(st *statement, c *backend.Conn) {
	r := st.class
	switch {
	case r.Kind == sqlclass.Use:
		if db := strings.Clone(useTarget(st.sql)); db != "" {
			s.setSchema(db)
			c.Schema = db
		}
	case r.Kind == sqlclass.Set && st.setParsed:
		if why := s.recordSet(st.setAs, c); why != "" {
			s.hold.pin(c, why)
		}
	case r.Kind == sqlclass.Set:
		s.hold.pin(c, "SET that galeon cannot replay")
	case r.Kind == sqlclass.DDL && !c.Broken():
		s.afterDDL(c)
	}
}

// refused handles c's node refusing a command (1047) before any of it
// ran: another attempt elsewhere (again, with the node to avoid), or the
// client's error, sent (err).
func (s *session) refused(c *backend.Conn, r sqlclass.Result, rt route, attempt int, res relayResult) (avoid string, again bool, err error) {
	nr := &nodeRejects{c.Server()}
	if avoid, again := s.retryElsewhere(c, r, rt, attempt, res, nr); again {
		return avoid, true, nil
	}
	return "", false, s.failed(c, r, nr, res)
}

// retryElsewhere decides whether a statement that failed on c before any
// of its answer reached the client is sent again, transparently, and
// readies that: then it returns true, and the node the next attempt must
// avoid, if any.
//
//   - A node that refused the statement without running it (WSREP not
//     ready) is avoided for the next attempts, up to three.
//   - A lost connection (the node died, or is shutting down) costs an
//     autocommit read nothing: it is retried up to twice. The node's idle
//     connections go too, since they are most likely dead as well; the
//     next attempt dials afresh, which fails fast against a node that is
//     gone, and the router then moves on once the monitor has seen it.
//     Writes and transactions are not retried: they may have run.
func (s *session) retryElsewhere(c *backend.Conn, r sqlclass.Result, hg route, attempt int, res relayResult, err error) (avoid string, again bool) {
	var nr *nodeRejects
	if errors.As(err, &nr) {
		if attempt >= 3 {
			return "", false
		}
		s.after(c, r, relayResult{isErr: true})
		s.p.suspect(nr.server)
		s.p.counts.notReadyRetries.Add(1)
		return nr.server, true
	}
	// A BEGIN outside a transaction is sent again as a read is: it
	// changed nothing on the lost connection.
	var be *backendErr
	if !errors.As(err, &be) || attempt >= 2 || hg == routeHeld || (r.IsWrite() && r.Kind != sqlclass.Begin) || !s.autocommit || res.written {
		return "", false
	}
	s.dropForRetry(c)
	return "", true
}

// dropForRetry drops c, lost under a command that changed nothing and
// goes again: its node's idle connections go too (most likely dead as
// well), and the node gets an immediate check.
func (s *session) dropForRetry(c *backend.Conn) {
	if s.hold.conn == c {
		s.hold.drop()
	}
	s.discard(c)
	c.Pool().CloseIdle(true)
	s.p.suspect(c.Server())
	s.p.counts.readRetries.Add(1)
}

// failed answers the client for a statement that failed on c and is not
// retried: a node that kept refusing it gets its refusal relayed (the
// session goes on); anything else is a lost backend (see backendFailed).
func (s *session) failed(c *backend.Conn, r sqlclass.Result, err error, res relayResult) error {
	var nr *nodeRejects
	if errors.As(err, &nr) {
		s.after(c, r, relayResult{isErr: true})
		// The node's own words first (clients match on them), then what
		// happened: the statement ran nowhere.
		return s.sendErr(mysqlproto.NewSQLError(mysqlproto.ErUnknownComError,
			"WSREP has not yet prepared node for application use (galeon: %s refused the statement without running it — it is outside the Primary component, or refuses queries — and no other node took it; "+
				"retry: statements succeed again once a node in a Primary component can take them; check the nodes: galeon admin SELECT * FROM servers)", nr.server))
	}
	return s.lostDuring(c, r, err, res)
}

// interrupted says what became of a statement of class r cut off on a
// fenced writer, inside a transaction (inTx) or not, and whether it
// certainly committed nothing. The node may still run what it received
// once it answers again (a hung node resumes), so only a statement that
// cannot commit anything is said to have changed nothing: one inside a
// transaction whose COMMIT was never sent, or a read.
func interrupted(r sqlclass.Result, inTx, autocommit bool) (what string, nothing bool) {
	const unknown = "it may or may not have committed (the node may still run it): check before you retry"
	switch {
	case r.Kind == sqlclass.Commit || r.Kind == sqlclass.DDL || (r.MultiStatement && r.IsWrite()):
		return unknown, false
	case inTx && commitsNothing(r):
		return "your transaction was rolled back (its COMMIT was never sent): retry the transaction", true
	case inTx:
		return "it may have committed your transaction (the node may still run it, and it commits implicitly): check before you retry", false
	case autocommit && changesData(r):
		return unknown, false
	case changesData(r):
		return "any transaction it opened was rolled back: retry", true
	}
	return "it was interrupted and changed nothing: retry", true
}

// commitsNothing says whether a statement of class r, run inside a
// transaction, leaves it open: it neither commits it nor runs anything
// that may (a procedure may COMMIT, a BEGIN or a DDL commits implicitly).
func commitsNothing(r sqlclass.Result) bool {
	if r.MultiStatement {
		return false
	}
	switch r.Kind {
	case sqlclass.Select, sqlclass.Insert, sqlclass.Update, sqlclass.Delete, sqlclass.Replace,
		sqlclass.Savepoint, sqlclass.Rollback, sqlclass.Show, sqlclass.Explain, sqlclass.Do, sqlclass.Use:
		return true
	}
	return false
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// connAvoiding waits (up to the no-backend timeout) until the router
// sends the statement to a node other than those in avoid.
func (s *session) connAvoiding(q string, r sqlclass.Result, avoid []string) (*backend.Conn, route, error) {
	deadline := time.Now().Add(s.p.cfg.Proxy.NoBackendWait.D())
	for {
		snap := s.p.view.Load()
		// No run on, and no connection taken back from, a node that
		// refused: each attempt draws a reader.
		s.readers = readerRun{}
		s.forgetLast()
		c, hg, err := s.connFor(q, r)
		if err != nil || hg == routeHeld || !contains(avoid, c.Server()) || staleRead(s.p.view.Load(), hg, c.Server()) {
			// A node that refused, and that the monitor has since found
			// outside the Primary component, is fit again for a read
			// when stale_reads allows it: it is read with
			// wsrep_dirty_reads (see dirtyReads).
			return c, hg, err
		}
		s.release(c)
		if time.Now().After(deadline) {
			return nil, "", &errNoBackend{hostgroup: hg, why: "every candidate refuses queries (WSREP not ready): " + fmt.Sprint(avoid), wait: s.p.cfg.Proxy.NoBackendWait.D(),
				noPrimary: noPrimary(s.p.view.Load().Servers), unreached: unreached(s.p.view.Load().Servers)}
		}
		// The monitor marks such a node soon: look again when the view
		// changes, or after a moment (a reader is drawn at random).
		select {
		case <-snap.Changed():
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// staleRead says whether a read on node (hostgroup hg) is served stale,
// with wsrep_dirty_reads (galera.stale_reads and the node outside the
// Primary component, as the monitor saw it).
func staleRead(snap *topology.Snapshot, hg route, node string) bool {
	if hg == routeWriter || !snap.StaleReads {
		return false
	}
	srv, _ := snap.Server(node)
	return srv.Stale
}

// useTarget extracts the schema of USE db / USE `db`.
func useTarget(q string) string {
	t := strings.TrimSpace(q)
	if len(t) < 4 || !strings.EqualFold(t[:3], "use") {
		return ""
	}
	t = strings.TrimSpace(strings.TrimRight(strings.TrimSpace(t[3:]), ";"))
	if len(t) >= 2 && (t[0] == '`' || t[0] == '"' || t[0] == '\'') && t[len(t)-1] == t[0] {
		t = strings.ReplaceAll(t[1:len(t)-1], string(t[0])+string(t[0]), string(t[0]))
	}
	return t
}

// anyConn returns the held connection or one for reads, for commands that
// are not statements (COM_INIT_DB, COM_FIELD_LIST).
func (s *session) anyConn() (*backend.Conn, error) {
	c, _, err := s.connFor("", sqlclass.Result{Kind: sqlclass.Show})
	return c, err
}

func (s *session) comInitDB(pkt []byte) error {
	db := string(pkt[1:])
	if s.hold.kind == holdTx {
		s.tx.broken = "COM_INIT_DB inside it (the schema it ran in is gone)"
	}
	c, err := s.anyConn()
	if err != nil {
		return s.sendErr(asSQLError(err))
	}
	use := sqlclass.Result{Kind: sqlclass.Use}
	causal := s.needsCausal(c, use, "")
	if causal {
		// The schema may have just been created through the writer.
		if err := causalWait(c); err != nil {
			return s.causalFailed(c, use, err)
		}
	}
	res, err := s.forward(c, pkt, mysqlproto.ResponseSingle)
	if err != nil {
		return s.backendFailed(c, err, res)
	}
	if causal && !res.isErr {
		s.causalDone(c)
	}
	if !res.isErr {
		s.setSchema(db)
		c.Schema = db
	}
	s.after(c, sqlclass.Result{Kind: sqlclass.Use}, res)
	return nil
}

func (s *session) comFieldList(pkt []byte) error {
	c, err := s.anyConn()
	if err != nil {
		return s.sendErr(asSQLError(err))
	}
	res, err := s.forward(c, pkt, mysqlproto.ResponseFieldList)
	if err != nil {
		return s.backendFailed(c, err, res)
	}
	s.after(c, sqlclass.Result{Kind: sqlclass.Show}, res)
	return nil
}

// comSetOption toggles multi-statements for the session; connections get
// the setting when they are next used (sync).
func (s *session) comSetOption(pkt []byte) error {
	if len(pkt) < 3 || pkt[2] != 0 || pkt[1] > 1 {
		return s.sendErr(mysqlproto.NewSQLError(mysqlproto.ErUnknownComError, "unknown COM_SET_OPTION value"))
	}
	s.multiStmts = pkt[1] == 0
	st := mysqlproto.ServerStatusAutocommit
	if !s.autocommit {
		st = 0
	}
	if err := s.pc.WritePacket(mysqlproto.AppendEOF(nil, 0, st)); err != nil {
		return err
	}
	return s.pc.Flush()
}

func (s *session) comStatistics() error {
	msg := fmt.Sprintf("galeon  Threads: %d  Connections: %d", s.p.clients.Load(), s.p.clientsTotal.Load())
	if err := s.pc.WritePacket([]byte(msg)); err != nil {
		return err
	}
	return s.pc.Flush()
}
