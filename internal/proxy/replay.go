package proxy

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"strconv"
	"strings"
	"time"

	"github.com/galeon-db/galeon/internal/backend"
	"github.com/galeon-db/galeon/internal/eventlog"
	"github.com/galeon-db/galeon/internal/mysqlproto"
	"github.com/galeon-db/galeon/internal/sqlclass"
)

// Transaction replay (galera.transaction_replay): a session records the
// statements of its open transaction and a checksum of each answer it
// relayed. When the writer is lost before the COMMIT, or the COMMIT is
// settled as not committed (outcome.go), galeon runs the transaction
// again on the new writer and compares every answer with what the client
// saw; the client carries on as if nothing happened. A different answer
// (the transaction read a row another session changed meanwhile, NOW(),
// an AUTO_INCREMENT id that the new writer numbers differently) ends it
// with 9002 (SQLSTATE 40001): rolled back, retry.

// crcTable is CRC-32C, computed by the CPU on amd64 and arm64.
var crcTable = crc32.MakeTable(crc32.Castagnoli)

// answerSum is the checksum of one answer, over what must be equal for a
// replay to stand for the original: result sets (column definitions and
// rows), affected rows and insert ids, error codes. Status flags,
// warning counts and info texts are left out: they may differ between
// nodes without any difference in data (SERVER_QUERY_NO_INDEX_USED
// follows each node's plan).
type answerSum struct {
	on bool
	h  uint32
	// affected and insertID of the answer's last OK.
	affected, insertID uint64
	// code: the error code if the answer is an error; dup: a duplicate
	// key error's message (1062), which names the value.
	code uint16
	dup  string
}

// packet adds one packet of the answer; done: it is the answer's last.
func (a *answerSum) packet(p []byte, done bool) {
	switch {
	case len(p) == 0:
	case done && p[0] == 0xFF:
		if len(p) >= 3 {
			a.h = crc32.Update(a.h, crcTable, p[:3])
			a.code = binary.LittleEndian.Uint16(p[1:3])
			if mysqlproto.ErrorCode(a.code) == mysqlproto.ErDupEntry {
				a.dup = string(p[3:])
			}
		}
	case done:
		a.ok(p)
	case p[0] == 0xFE && len(p) < 9:
		// An EOF between column definitions and rows: status only.
	default:
		// Column counts and definitions, rows (a row may begin with
		// 0x00: only the last packet is read as an OK), and the OKs
		// between the results of a multi-result answer, whole.
		a.h = crc32.Update(a.h, crcTable, p)
	}
}

// ok adds an OK (or an EOF that ends a result) by its counts only.
func (a *answerSum) ok(p []byte) {
	if p[0] == 0xFE && len(p) < 9 {
		a.h = crc32.Update(a.h, crcTable, p[:1])
		return
	}
	var b [17]byte
	b[0] = p[0]
	rest := p[1:]
	affected, _, n, err := mysqlproto.ReadLenEncInt(rest)
	if err == nil {
		rest = rest[n:]
		binary.LittleEndian.PutUint64(b[1:], affected)
		a.affected = affected
		if id, _, _, err := mysqlproto.ReadLenEncInt(rest); err == nil {
			binary.LittleEndian.PutUint64(b[9:], id)
			a.insertID = id
		}
	}
	a.h = crc32.Update(a.h, crcTable, b[:])
}

// txEntry is one statement of the open transaction, as sent and as
// answered.
type txEntry struct {
	kind statementKind
	// from, to: the command's bytes in the log's buf.
	from, to int
	cs       *clientStmt
	sum      uint32
	// insertID: the AUTO_INCREMENT id a one-row INSERT generated, which
	// its replay must generate too (see rerun).
	insertID uint64
}

// txLog is the open transaction of a session, for replay.
type txLog struct {
	entries []txEntry
	// buf holds the commands one after another; it and entries keep
	// their capacity from one transaction to the next, so recording
	// allocates nothing once a session's transactions have run.
	buf []byte
	// wrote: a statement may have written rows (its COMMIT carries a
	// marker).
	wrote bool
	// broken says why this transaction cannot be replayed ("" if it can).
	broken string
}

func (l *txLog) reset() { *l = txLog{entries: l.entries[:0], buf: l.buf[:0]} }

// replayOn says whether the session records its transactions.
func (s *session) replayOn() bool { return s.p.cfg.Galera.TransactionReplay == "on" }

// startSum readies the answer's checksum for a statement that is inside
// a transaction, or may open one (wasInTx: one was open before it).
func (s *session) startSum(st *statement, wasInTx bool) {
	s.sum = answerSum{on: s.replayOn() && (wasInTx || !s.autocommit || st.class.StartsTxn())}
}

// record notes a statement that was answered: part of the open
// transaction (or the one that opened it), or the end of one.
func (s *session) record(st *statement, wasInTx bool) {
	if !s.sum.on {
		return
	}
	if s.hold.conn == nil || s.hold.kind != holdTx {
		s.tx.reset()
		return
	}
	if !wasInTx {
		s.tx.reset()
		if s.hold.nextTxn {
			s.tx.broken = "SET TRANSACTION before it (its characteristics were on the lost connection only)"
		}
	}
	if s.tx.broken != "" {
		return
	}
	switch {
	case st.kind == bulkStatement:
		s.tx.broken = "COM_STMT_BULK_EXECUTE"
	case st.cursor:
		s.tx.broken = "a cursor"
	case s.longData:
		s.tx.broken = "COM_STMT_SEND_LONG_DATA"
	case st.class.Kind == sqlclass.Load:
		s.tx.broken = "LOAD DATA"
	case st.class.Kind == sqlclass.Set || st.class.Kind == sqlclass.Use:
		s.tx.broken = "a SET or USE inside it (the session state it ran in is gone)"
	case len(s.tx.buf)+len(st.pkt) > s.p.cfg.Galera.TransactionReplayMaxSize:
		s.tx.broken = fmt.Sprintf("its statements exceed galera.transaction_replay_max_size (%d bytes)", s.p.cfg.Galera.TransactionReplayMaxSize)
		s.p.counts.replayTooLarge.Add(1)
	}
	if s.tx.broken != "" {
		s.tx.entries, s.tx.buf = s.tx.entries[:0], s.tx.buf[:0]
		return
	}
	e := txEntry{kind: st.kind, from: len(s.tx.buf), cs: st.cs, sum: s.sum.h}
	s.tx.buf = append(s.tx.buf, st.pkt...)
	e.to = len(s.tx.buf)
	if k := st.class.Kind; (k == sqlclass.Insert || k == sqlclass.Replace) && !st.class.MultiStatement && s.sum.affected == 1 {
		e.insertID = s.sum.insertID
	}
	s.tx.entries = append(s.tx.entries, e)
	s.tx.wrote = s.tx.wrote || changesData(st.class)
}

// replayable says whether the session's lost transaction can be run
// again: replay is on and nothing in it forbids it.
func (s *session) replayable() bool { return s.replayOn() && s.tx.broken == "" }

// replaysLoss says whether a statement whose connection broke (err)
// before any of its answer reached the client is run again after its
// transaction is replayed (replayLost): it was inside the transaction,
// commits nothing (so the transaction's COMMIT was never sent), and can
// be sent again.
func (s *session) replaysLoss(st *statement, res relayResult, err error) bool {
	var be *backendErr
	return errors.As(err, &be) && !res.written && commitsNothing(st.class) &&
		st.kind != bulkStatement && !st.cursor && !s.longData
}

// replayLost handles c, the open transaction's connection, broken before
// any answer to a command that commits nothing reached the client: if
// the transaction can be replayed it is, on the writer, and handled is
// true; err is then the error the client was sent, if the replay failed
// (nil: the command goes on, on the new connection). A plain ROLLBACK
// (st) is answered instead (rollbackLost): then answered is true.
func (s *session) replayLost(c *backend.Conn, st *statement) (handled, answered bool, err error) {
	if s.hold.conn != c || s.hold.kind != holdTx || !s.replayable() {
		return false, false, nil
	}
	if !c.Fenced() && s.nodeAnswers(c) {
		// The node is up and ended this connection by itself: an
		// operator's KILL, or a timeout of the node's. Running the
		// transaction again would undo the KILL: the client gets the
		// error.
		return false, false, nil
	}
	if st != nil {
		if handled, err := s.rollbackLost(c, st); handled {
			return true, true, err
		}
	}
	old := s.dropLostTx(c)
	if err := s.replayTx(old); err != nil {
		return true, true, s.sendErr(asSQLError(err))
	}
	return true, false, nil
}

// rollbackLost answers OK to a plain ROLLBACK whose transaction's
// connection c was lost with its node, or refused by a node that left the
// Primary component: the transaction never committed and no longer can,
// so the ROLLBACK's work is done. Replaying the transaction only to roll
// it back would cost the client a wait for the new writer, and a 9002
// if the replay answered differently. handled is false for any other
// statement (and for ROLLBACK AND CHAIN, which opens a transaction).
func (s *session) rollbackLost(c *backend.Conn, st *statement) (handled bool, err error) {
	r := st.class
	if r.Kind != sqlclass.Rollback || r.Chain || r.MultiStatement || s.hold.conn != c || s.hold.kind != holdTx {
		return false, nil
	}
	if _, own := s.vars["completion_type"]; own {
		// CHAIN or RELEASE may follow the ROLLBACK: a server must
		// answer it (after the replay).
		return false, nil
	}
	s.dropLostTx(c)
	s.tx.reset()
	// Nothing of the ROLLBACK's answer reached the client.
	s.bw.Reset(s.out)
	s.pc.SetSeq(s.cmdSeq)
	return true, s.sendOK()
}

// replayRefused replays the open transaction, whose node refused a
// statement on c (1047: it left the Primary component, so the
// transaction can never commit there), on the writer, away from that
// node.
func (s *session) replayRefused(c *backend.Conn) error {
	return s.replayTxAvoiding(s.dropLostTx(c), true)
}

// dropLostTx lets go of c, the open transaction's connection, lost with
// its node (or refused by it), has the node checked at once, and names
// it.
func (s *session) dropLostTx(c *backend.Conn) string {
	s.hold.drop()
	s.discard(c)
	s.p.suspect(c.Server())
	return c.Server()
}

// nodeAnswers says whether c's node answers a new connection at once
// (within lookTimeout/2): a broken connection to a node that answers was
// ended on purpose, not lost with the node.
func (s *session) nodeAnswers(c *backend.Conn) bool {
	d := lookTimeout / 2
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	probe, err := backend.Dial(ctx, c.Pool().Server().Addr, s.prof, d)
	if err != nil {
		return false
	}
	defer probe.Close()
	probe.SetDeadline(time.Now().Add(d))
	return probe.Ping() == nil
}

// errReplayMismatch: a replayed statement's answer differed from the one
// the client saw. idTaken: the statement was a one-row INSERT whose
// AUTO_INCREMENT id (the one the client was given) another write took
// meanwhile (1062).
type errReplayMismatch struct {
	n       int
	idTaken uint64
}

func (e *errReplayMismatch) Error() string { return "replay mismatch" }

// replayTx runs the recorded transaction again on the writer (the old
// one, old, was lost) and, if every answer matches, holds the new
// connection as the transaction's. Otherwise the transaction is rolled
// back (its connection closed) and the client's error says why.
func (s *session) replayTx(old string) error { return s.replayTxAvoiding(old, false) }

// replayTxAvoiding is replayTx; with avoid, it waits (within the settle
// bound) for a writer other than old: old is alive but left the Primary
// component, and the view may still name it.
func (s *session) replayTxAvoiding(old string, avoid bool) error {
	log := s.tx
	s.tx = txLog{}
	start := time.Now()
	deadline := start.Add(s.p.cfg.Galera.CommitSettleTimeout.D())
	for attempt := 0; ; attempt++ {
		snap := s.p.view.Load()
		c, err := s.acquire(routeWriter)
		var nb *errNoBackend
		if errors.As(err, &nb) && time.Now().Before(deadline) {
			// No writer yet (the old one is not out of the view): wait
			// for the view that names one, within the settle bound.
			select {
			case <-snap.Changed():
			case <-time.After(50 * time.Millisecond):
			}
			continue
		}
		if err == nil && avoid && c.Server() == old && time.Now().Before(deadline) {
			s.release(c)
			select {
			case <-snap.Changed():
			case <-time.After(50 * time.Millisecond):
			}
			continue
		}
		if err != nil {
			s.p.counts.replayFailed.Add(1)
			return err
		}
		n, err := s.rerun(c, &log)
		if err != nil && c.Broken() && attempt < 2 {
			// The new writer failed too: once the view moves on, again.
			s.discard(c)
			continue
		}
		if err != nil {
			s.discard(c)
			s.p.counts.replayFailed.Add(1)
			var mm *errReplayMismatch
			if errors.As(err, &mm) {
				// What the event and the client are told.
				event := fmt.Sprintf("statement %d of %d answered differently", n+1, len(log.entries))
				why := fmt.Sprintf("its statement %d answered differently from what you saw (it read rows changed meanwhile, or a value such as NOW() or an AUTO_INCREMENT id that differs there)", n+1)
				if mm.idTaken != 0 {
					event = fmt.Sprintf("the AUTO_INCREMENT id %d of its statement %d of %d was taken meanwhile", mm.idTaken, n+1, len(log.entries))
					why = fmt.Sprintf("the AUTO_INCREMENT id %d your statement %d was given had been taken there meanwhile by another write (when a node leaves, Galera renumbers the other nodes' id series: wsrep_auto_increment_control)", mm.idTaken, n+1)
				}
				s.p.events.Add(eventlog.Commit, c.Server(), fmt.Sprintf("a transaction lost with %s was replayed on %s but %s: rolled back, the client got 9002", old, c.Server(), event))
				return mysqlproto.NewSQLError(mysqlproto.ErGaleonWriterChanged,
					"galeon: your transaction was lost with the writer %s; galeon replayed it on %s, but %s: the transaction was rolled back; retry it",
					old, c.Server(), why)
			}
			return mysqlproto.NewSQLError(mysqlproto.ErGaleonWriterChanged,
				"galeon: your transaction was lost with the writer %s, and replaying it on %s failed at statement %d (%v): the transaction was rolled back; retry it", old, c.Server(), n+1, err)
		}
		s.hold.keep(c, holdTx)
		s.hold.wrote = log.wrote
		s.tx = log
		s.p.counts.replayed.Add(1)
		s.p.events.Add(eventlog.Commit, c.Server(), fmt.Sprintf("a transaction lost with %s was replayed on %s: %d statements in %s, every answer as the client saw it", old, c.Server(), len(log.entries), time.Since(start).Round(time.Millisecond)))
		return nil
	}
}

// rerun sends the entries on c in order and checks each answer; it
// returns how many matched.
func (s *session) rerun(c *backend.Conn, log *txLog) (int, error) {
	entries, buf := log.entries, log.buf
	for i := range entries {
		e := &entries[i]
		st := statement{kind: e.kind, pkt: buf[e.from:e.to], cs: e.cs}
		if e.insertID != 0 {
			// Each node numbers AUTO_INCREMENT in its own series
			// (wsrep_auto_increment_control): the replayed row takes the
			// id the client was given, which the lost transaction never
			// committed. When the old writer left, the survivors' series
			// were renumbered, and a write on them may have taken that id
			// meanwhile: then the INSERT answers 1062 (see idTaken).
			if err := c.Query(fmt.Sprintf("SET insert_id = %d", e.insertID)); err != nil {
				return i, err
			}
		}
		out, err := s.build(&st, c, false)
		if err != nil {
			return i, err
		}
		kind := mysqlproto.ResponseQuery
		if e.kind != textStatement {
			kind = mysqlproto.ResponseExecute
		}
		sum, err := answerOf(c, out, kind)
		if err == nil && e.insertID != 0 {
			// An id given explicitly leaves insert_id unused: clear it
			// for the statements after.
			err = c.Query("SET insert_id = 0")
		}
		if err != nil {
			return i, err
		}
		if sum.h != e.sum {
			mm := &errReplayMismatch{n: i}
			if e.insertID != 0 && mysqlproto.ErrorCode(sum.code) == mysqlproto.ErDupEntry &&
				strings.Contains(sum.dup, "'"+strconv.FormatUint(e.insertID, 10)+"'") {
				// "Duplicate entry '12' for key 'PRIMARY'": the id, not
				// another unique key.
				mm.idTaken = e.insertID
			}
			return i, mm
		}
	}
	return len(entries), nil
}

// answerOf sends one command on c and reads its whole answer into its
// checksum, relaying nothing.
func answerOf(c *backend.Conn, out []byte, kind mysqlproto.ResponseKind) (answerSum, error) {
	c.ResetSeq()
	err := c.WritePacket(out)
	if err == nil {
		err = c.Flush()
	}
	if err != nil {
		c.MarkBroken()
		return answerSum{}, err
	}
	var f mysqlproto.ResponseFramer
	f.Reset(kind, c.Caps)
	sum := answerSum{on: true}
	for {
		pkt, err := c.ReadPacket()
		if err != nil {
			c.MarkBroken()
			return answerSum{}, err
		}
		st, err := f.Next(pkt)
		if err != nil {
			c.MarkBroken()
			return answerSum{}, err
		}
		if st == mysqlproto.FrameLocalInfile {
			c.MarkBroken()
			return answerSum{}, errors.New("unexpected LOCAL INFILE request")
		}
		sum.packet(pkt, st == mysqlproto.FrameDone)
		if st == mysqlproto.FrameDone {
			return sum, nil
		}
	}
}
