package proxy

import (
	"encoding/binary"
	"strconv"

	"github.com/galeon-db/galeon/internal/backend"
	"github.com/galeon-db/galeon/internal/mysqlproto"
	"github.com/galeon-db/galeon/internal/sqlclass"
)

// clientStmt is a prepared statement as the client sees it. Backend
// connections prepare it lazily (backend.Conn.Stmts, by SQL text), so the
// statement works on whichever connection the session gets: the client's
// statement id is mapped to each connection's own id.
type clientStmt struct {
	id  uint32
	sql string
	// digest and digestText are the statement's digest, computed once
	// when it is prepared.
	digest     uint64
	digestText []byte
	class      sqlclass.Result
	numParams  uint16
	// types are the parameter types the client last sent; a client may
	// omit them on later executions, but a connection that never saw them
	// needs them.
	types []byte
	// rename: the statement's CONNECTION_ID() was replaced (see
	// columnRename).
	rename columnRename
}

// maxStmtsPerConn bounds the statements cached on one backend connection:
// the server's max_prepared_stmt_count is global, and many sessions
// preparing distinct texts must not exhaust it.
const maxStmtsPerConn = 256

// makeRoom closes one cached statement on c when the cache is full. The
// COM_STMT_CLOSE has no response; it travels with the next command.
func makeRoom(c *backend.Conn) {
	if len(c.Stmts) < maxStmtsPerConn {
		return
	}
	for sql, bs := range c.Stmts {
		c.ResetSeq()
		_ = c.WritePacket(binary.LittleEndian.AppendUint32([]byte{byte(mysqlproto.ComStmtClose)}, bs.ID))
		delete(c.Stmts, sql)
		return
	}
}

// ensurePrepared returns the statement's id on c, preparing it there first
// if needed.
func (s *session) ensurePrepared(c *backend.Conn, cs *clientStmt) (*backend.Stmt, error) {
	if bs := c.Stmts[cs.sql]; bs != nil {
		return bs, nil
	}
	makeRoom(c)
	c.ResetSeq()
	if err := c.WritePacket(append([]byte{byte(mysqlproto.ComStmtPrepare)}, cs.sql...)); err != nil {
		c.MarkBroken()
		return nil, &backendErr{c.Server(), err}
	}
	if err := c.Flush(); err != nil {
		c.MarkBroken()
		return nil, &backendErr{c.Server(), err}
	}
	var f mysqlproto.ResponseFramer
	f.Reset(mysqlproto.ResponsePrepare, c.Caps)
	var errPkt *mysqlproto.SQLError
	for {
		pkt, err := c.ReadPacket()
		if err != nil {
			c.MarkBroken()
			return nil, &backendErr{c.Server(), err}
		}
		if mysqlproto.IsErr(pkt) {
			errPkt, _ = mysqlproto.ParseErr(pkt)
		}
		st, err := f.Next(pkt)
		if err != nil {
			c.MarkBroken()
			return nil, &backendErr{c.Server(), err}
		}
		if st == mysqlproto.FrameDone {
			break
		}
	}
	if errPkt != nil {
		return nil, errPkt
	}
	ok := f.PrepareOK()
	bs := &backend.Stmt{ID: ok.StatementID, NumParams: ok.NumParams, NumColumns: ok.NumColumns}
	c.Stmts[cs.sql] = bs
	return bs, nil
}

func (s *session) comStmtPrepare(pkt []byte) error {
	s.lastPrepared = 0
	sql := string(pkt[1:])
	r := sqlclass.Classify(sql)
	hash, text := sqlclass.DigestInto(nil, sql)
	var rename columnRename
	if r.UsesConnectionID {
		if sql2, spelling, n := sqlclass.ReplaceConnectionID(sql, s.id); n > 0 {
			sql, pkt = sql2, append([]byte{byte(mysqlproto.ComStmtPrepare)}, sql2...)
			rename = columnRename{from: strconv.FormatUint(uint64(s.id), 10), to: spelling}
		}
	}
	var rejected []string
	for attempt := 0; ; attempt++ {
		again, err := s.prepareOn(pkt, sql, r, rename, hash, text, attempt, &rejected)
		if !again {
			return err
		}
	}
}

// prepareLost handles a PREPARE whose connection broke before any of
// its answer: on an open transaction's connection that is replayed, the
// PREPARE goes again (again); on a connection the session does not hold
// for a transaction or pinned state it goes again too, up to twice (it
// changed nothing, as an autocommit read); otherwise the client gets the
// error.
func (s *session) prepareLost(c *backend.Conn, err error, res relayResult, attempt int) (again bool, _ error) {
	if handled, answered, rerr := s.replayLost(c, nil); handled {
		return !answered && rerr == nil, rerr
	}
	if attempt < 2 && !(s.hold.conn == c && s.hold.stateful()) {
		s.dropForRetry(c)
		return true, nil
	}
	return false, s.backendFailed(c, &backendErr{c.Server(), err}, res)
}

// prepareOn prepares the client's statement on the node the router picks
// and relays the answer; again asks for another attempt elsewhere, when
// the node refused the PREPARE with 1047 (it ran nothing: the node has
// just left the Primary component, or refuses queries).
func (s *session) prepareOn(pkt []byte, sql string, r sqlclass.Result, rename columnRename, hash uint64, text []byte, attempt int, rejected *[]string) (again bool, _ error) {
	c, rt, err := s.connFor(sql, r)
	if err == nil && len(*rejected) > 0 && contains(*rejected, c.Server()) && rt != routeHeld {
		s.release(c)
		c, rt, err = s.connAvoiding(sql, r, *rejected)
	}
	if err != nil {
		return false, s.sendErr(asSQLError(err))
	}
	cs := &clientStmt{sql: sql, class: r, rename: rename}
	cs.digest, cs.digestText = hash, text
	// Prepare on the backend and relay its answer (parameter and column
	// definitions) with the statement id replaced by ours. A copy already
	// prepared on this connection is closed first so it does not leak.
	if old := c.Stmts[sql]; old != nil {
		closePkt := binary.LittleEndian.AppendUint32([]byte{byte(mysqlproto.ComStmtClose)}, old.ID)
		c.ResetSeq()
		_ = c.WritePacket(closePkt) // no response; flushed with the prepare
		delete(c.Stmts, sql)
	}
	makeRoom(c)
	c.ResetSeq()
	err = c.WritePacket(pkt)
	if err == nil {
		err = c.Flush()
	}
	if err != nil {
		c.MarkBroken()
		return s.prepareLost(c, err, relayResult{}, attempt)
	}
	f := &s.framer
	f.Reset(mysqlproto.ResponsePrepare, c.Caps)
	var res relayResult
	first := true
	for {
		raw, err := c.ReadRawPacket()
		if err != nil {
			c.MarkBroken()
			if first {
				return s.prepareLost(c, err, res, attempt)
			}
			return false, s.backendFailed(c, &backendErr{c.Server(), err}, res)
		}
		colDef := rename.active() && f.InColumnDefs()
		st, err := f.Next(mysqlproto.RawPayload(raw))
		if err != nil {
			c.MarkBroken()
			return false, s.backendFailed(c, &backendErr{c.Server(), err}, res)
		}
		if code, isErr := f.ErrorCode(); first && st == mysqlproto.FrameDone && isErr && code == errWsrepNotReady &&
			s.hold.kind == holdTx && s.hold.conn == c && s.replayable() {
			// The open transaction's node left the Primary component:
			// the transaction runs again on the writer, away from it,
			// then the PREPARE.
			if err := s.replayRefused(c); err != nil {
				return false, s.sendErr(asSQLError(err))
			}
			return true, nil
		}
		if first && st == mysqlproto.FrameDone && rt != routeHeld {
			if code, isErr := f.ErrorCode(); isErr && code == errWsrepNotReady {
				// Refused, nothing prepared: as a refused statement.
				avoid, again, err := s.refused(c, sqlclass.Result{Kind: sqlclass.Show}, rt, attempt, res)
				if again {
					*rejected = append(*rejected, avoid)
				}
				return again, err
			}
		}
		if renamed := rename.apply(raw); colDef && renamed != nil {
			raw = renamed
		}
		if first && f.Result() == mysqlproto.ResultOK {
			ok := f.PrepareOK()
			c.Stmts[sql] = &backend.Stmt{ID: ok.StatementID, NumParams: ok.NumParams, NumColumns: ok.NumColumns}
			s.nextStmt++
			cs.id, cs.numParams = s.nextStmt, ok.NumParams
			binary.LittleEndian.PutUint32(raw[5:9], cs.id)
		}
		first = false
		res.recv += len(raw)
		if err := s.pc.WriteRaw(raw); err != nil {
			c.MarkBroken()
			return false, err
		}
		res.written = true
		if st == mysqlproto.FrameDone {
			break
		}
	}
	s.lastPrepared = cs.id
	if cs.id != 0 {
		s.stmts[cs.id] = cs
	}
	_, res.isErr = f.ErrorCode()
	s.after(c, sqlclass.Result{Kind: sqlclass.Show}, res)
	return false, s.pc.Flush()
}

// lastPreparedID is the statement id MariaDB clients use in a pipelined
// prepare + execute for "the statement prepared just before" (-1).
const lastPreparedID = 0xFFFFFFFF

func (s *session) lookupStmt(pkt []byte) (*clientStmt, error) {
	id, err := mysqlproto.StatementID(pkt)
	if err != nil {
		return nil, mysqlproto.NewSQLError(mysqlproto.ErMalformedPacket, "malformed statement packet: %v", err)
	}
	if id == lastPreparedID {
		id = s.lastPrepared
	}
	cs := s.stmts[id]
	if cs == nil {
		return nil, mysqlproto.NewSQLError(mysqlproto.ErUnknownStmtHandler, "Unknown prepared statement handler (%d) given to mysqld_stmt_execute", id)
	}
	return cs, nil
}

func (s *session) comStmtExecute(pkt []byte) error {
	cs, err := s.lookupStmt(pkt)
	if err != nil {
		return s.sendErr(err.(*mysqlproto.SQLError))
	}
	ex, err := mysqlproto.ParseStmtExecute(pkt)
	if err != nil {
		return s.sendErr(mysqlproto.NewSQLError(mysqlproto.ErMalformedPacket, "malformed COM_STMT_EXECUTE: %v", err))
	}
	st := statement{kind: executeStatement, sql: cs.sql, class: cs.class, pkt: pkt, cs: cs, cursor: ex.OpensCursor()}
	return s.runPrepared(&st)
}

// afterExecute notes what an execution did to the session: a cursor it
// opened, a SET it ran.
func (s *session) afterExecute(st *statement, c *backend.Conn, res relayResult) {
	cs := st.cs
	if st.cursor && !res.isErr {
		s.hold.pin(c, "cursor")
	}
	if cs.class.Kind == sqlclass.Set && !res.isErr {
		// A SET sent as a prepared statement changes the session like
		// a plain one; a parameter's value, like any expression's, is
		// read back from the connection.
		if as, err := sqlclass.ParseSet(cs.sql); err == nil {
			if why := s.recordSet(as, c); why != "" {
				s.hold.pin(c, why)
			}
		} else {
			s.hold.pin(c, "SET that galeon cannot replay, sent as a prepared statement")
		}
	}
	s.longData = false
}

// runPrepared runs a statement execution (COM_STMT_EXECUTE or
// COM_STMT_BULK_EXECUTE) through the statement loop, with the prepared
// statement's column renaming.
func (s *session) runPrepared(st *statement) error {
	s.rename = st.cs.rename
	defer func() { s.rename = columnRename{} }()
	return s.runStatement(st)
}

// buildPrepared prepares the statement on c if needed (its causal copy
// when asked: read-your-writes, ryw.go) and rewrites the client's packet
// for that connection.
func (s *session) buildPrepared(st *statement, c *backend.Conn, causal bool) ([]byte, error) {
	prep := st.cs
	if causal {
		v := *st.cs
		v.sql = causalPrefix + st.cs.sql
		prep = &v
	}
	bs, err := s.ensurePrepared(c, prep)
	if err != nil {
		return nil, err
	}
	if st.kind == bulkStatement {
		return s.rewriteBulk(st.pkt, st.cs, bs)
	}
	return s.rewriteExecute(st.pkt, st.cs, bs)
}

// rewriteExecute maps the statement id to the backend's and, when the
// client relies on parameter types it sent on an earlier execution that
// this connection never saw, puts them back in.
func (s *session) rewriteExecute(pkt []byte, cs *clientStmt, bs *backend.Stmt) ([]byte, error) {
	out := append(s.scratch[:0], pkt...)
	s.scratch = out
	binary.LittleEndian.PutUint32(out[1:5], bs.ID)
	n := int(cs.numParams)
	if n == 0 {
		return out, nil
	}
	flagPos := 10 + (n+7)/8
	if len(out) <= flagPos {
		return nil, mysqlproto.NewSQLError(mysqlproto.ErMalformedPacket, "COM_STMT_EXECUTE too short for %d parameters", n)
	}
	if out[flagPos] == 1 {
		if len(out) < flagPos+1+2*n {
			return nil, mysqlproto.NewSQLError(mysqlproto.ErMalformedPacket, "COM_STMT_EXECUTE parameter types truncated")
		}
		cs.types = append(cs.types[:0], out[flagPos+1:flagPos+1+2*n]...)
		bs.TypesSent = true
		return out, nil
	}
	if bs.TypesSent {
		return out, nil
	}
	if len(cs.types) != 2*n {
		return nil, mysqlproto.NewSQLError(mysqlproto.ErMalformedPacket, "COM_STMT_EXECUTE without parameter types, and none were sent before")
	}
	fixed := make([]byte, 0, len(out)+2*n)
	fixed = append(fixed, out[:flagPos]...)
	fixed = append(fixed, 1)
	fixed = append(fixed, cs.types...)
	fixed = append(fixed, out[flagPos+1:]...)
	bs.TypesSent = true
	s.scratch = fixed
	return fixed, nil
}

// Bulk execution flags of COM_STMT_BULK_EXECUTE (MariaDB).
const (
	bulkSendUnitResults = 64  // STMT_BULK_FLAG_SEND_UNIT_RESULTS
	bulkSendTypes       = 128 // STMT_BULK_FLAG_CLIENT_SEND_TYPES
)

// comStmtBulkExecute relays MariaDB's array binding (one command, many
// rows of parameters; MariaDB Connector/J uses it for executeBatch) with
// the same routing and statement mapping as COM_STMT_EXECUTE.
func (s *session) comStmtBulkExecute(pkt []byte) error {
	cs, err := s.lookupStmt(pkt)
	if err != nil {
		return s.sendErr(err.(*mysqlproto.SQLError))
	}
	if len(pkt) < 7 {
		return s.sendErr(mysqlproto.NewSQLError(mysqlproto.ErMalformedPacket, "malformed COM_STMT_BULK_EXECUTE: %d bytes", len(pkt)))
	}
	st := statement{kind: bulkStatement, sql: cs.sql, class: cs.class, pkt: pkt, cs: cs}
	return s.runPrepared(&st)
}

// rewriteBulk maps the statement id and, when the client leaves out the
// parameter types (it may once it has sent them) and this connection
// never saw them, puts back the ones the client sent last.
func (s *session) rewriteBulk(pkt []byte, cs *clientStmt, bs *backend.Stmt) ([]byte, error) {
	out := append(s.scratch[:0], pkt...)
	s.scratch = out
	binary.LittleEndian.PutUint32(out[1:5], bs.ID)
	n := int(cs.numParams)
	flags := binary.LittleEndian.Uint16(out[5:7])
	if flags&bulkSendTypes != 0 {
		if len(out) < 7+2*n {
			return nil, mysqlproto.NewSQLError(mysqlproto.ErMalformedPacket, "COM_STMT_BULK_EXECUTE parameter types truncated")
		}
		cs.types = append(cs.types[:0], out[7:7+2*n]...)
		bs.TypesSent = true
		return out, nil
	}
	if bs.TypesSent || n == 0 {
		return out, nil
	}
	if len(cs.types) != 2*n {
		return nil, mysqlproto.NewSQLError(mysqlproto.ErMalformedPacket, "COM_STMT_BULK_EXECUTE without parameter types, and none were sent before")
	}
	fixed := make([]byte, 0, len(out)+2*n)
	fixed = append(fixed, out[:5]...)
	fixed = binary.LittleEndian.AppendUint16(fixed, flags|bulkSendTypes)
	fixed = append(fixed, cs.types...)
	fixed = append(fixed, out[7:]...)
	bs.TypesSent = true
	s.scratch = fixed
	return fixed, nil
}

func (s *session) comStmtSendLongData(pkt []byte) error {
	cs, err := s.lookupStmt(pkt)
	if err != nil {
		return nil // COM_STMT_SEND_LONG_DATA has no response, even on error
	}
	c, _, err := s.connFor(cs.sql, cs.class)
	if err != nil {
		return nil
	}
	bs, err := s.ensurePrepared(c, cs)
	if err != nil {
		if c.Broken() {
			s.discard(c)
		}
		return nil
	}
	// The data waits on this connection until the execution: keep it.
	if s.hold.conn != c {
		s.hold.keep(c, holdTx)
	}
	s.longData = true
	out := append(s.scratch[:0], pkt...)
	binary.LittleEndian.PutUint32(out[1:5], bs.ID)
	c.ResetSeq()
	if err := c.WritePacket(out); err != nil {
		c.MarkBroken()
	}
	return nil
}

func (s *session) comStmtClose(pkt []byte) {
	if id, err := mysqlproto.StatementID(pkt); err == nil {
		delete(s.stmts, id)
	}
}

func (s *session) comStmtReset(pkt []byte) error {
	cs, err := s.lookupStmt(pkt)
	if err != nil {
		return s.sendErr(err.(*mysqlproto.SQLError))
	}
	s.longData = false
	if s.hold.conn == nil || s.hold.conn.Stmts[cs.sql] == nil {
		return s.sendOK() // nothing is buffered for it anywhere
	}
	c := s.hold.conn
	out := append(s.scratch[:0], pkt...)
	binary.LittleEndian.PutUint32(out[1:5], c.Stmts[cs.sql].ID)
	res, err := s.forward(c, out, mysqlproto.ResponseSingle)
	if err != nil {
		return s.backendFailed(c, err, res)
	}
	return nil
}

func (s *session) comStmtFetch(pkt []byte) error {
	cs, err := s.lookupStmt(pkt)
	if err != nil {
		return s.sendErr(err.(*mysqlproto.SQLError))
	}
	if s.hold.conn == nil || s.hold.conn.Stmts[cs.sql] == nil {
		return s.sendErr(mysqlproto.NewSQLError(mysqlproto.ErUnknownStmtHandler, "no open cursor for statement %d", cs.id))
	}
	c := s.hold.conn
	out := append(s.scratch[:0], pkt...)
	binary.LittleEndian.PutUint32(out[1:5], c.Stmts[cs.sql].ID)
	res, err := s.forward(c, out, mysqlproto.ResponseFetch)
	if err != nil {
		return s.backendFailed(c, err, res)
	}
	return nil
}
