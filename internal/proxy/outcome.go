package proxy

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/galeon-db/galeon/internal/backend"
	"github.com/galeon-db/galeon/internal/eventlog"
	"github.com/galeon-db/galeon/internal/galera"
	"github.com/galeon-db/galeon/internal/mysqlproto"
	"github.com/galeon-db/galeon/internal/outcome"
	"github.com/galeon-db/galeon/internal/sqlclass"
	"github.com/galeon-db/galeon/internal/topology"
)

// markers hands out commit markers (package outcome): a slot per session
// that committed a write, unique to this process (a random prefix), and
// reused once the session ends, so that the table holds at most as many
// rows per proxy run as sessions were open at once; and a token per
// COMMIT, never repeated.
type markers struct {
	prefix uint64
	token  atomic.Uint64

	mu sync.Mutex
	// free are the slots of ended sessions; row: the slot's row exists.
	free []freeSlot
	next uint32
	// off: accounts whose marker write failed because the marker is not
	// set up for them (warned once; their COMMITs go alone).
	off map[string]bool
	// noWrap: the nodes lack @@in_transaction (not MariaDB 10.3+), which
	// a wrapped write's marker needs; autocommit writes go alone.
	noWrap atomic.Bool

	committed, notCommitted, unknown, skipped atomic.Int64
}

func newMarkers() *markers {
	var b [12]byte
	_, _ = rand.Read(b[:])
	m := &markers{prefix: uint64(binary.LittleEndian.Uint32(b[:4])) << 32, off: map[string]bool{}}
	m.token.Store(binary.LittleEndian.Uint64(b[4:]) >> 2)
	return m
}

type freeSlot struct {
	n   uint32
	row bool
}

// slot returns a free slot, and whether its row exists.
func (m *markers) slot() (uint64, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if n := len(m.free); n > 0 {
		f := m.free[n-1]
		m.free = m.free[:n-1]
		return m.prefix | uint64(f.n), f.row
	}
	m.next++
	return m.prefix | uint64(m.next), false
}

// release gives a slot back once its session ended.
func (m *markers) release(slot uint64, row bool) {
	m.mu.Lock()
	m.free = append(m.free, freeSlot{uint32(slot), row})
	m.mu.Unlock()
}

// disabled says whether account's COMMITs go without a marker.
func (m *markers) disabled(account string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.off[account]
}

// disable turns markers off for account; it reports whether that is news.
func (m *markers) disable(account string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.off[account] {
		return false
	}
	m.off[account] = true
	return true
}

// changesData says whether a statement that succeeded inside a
// transaction may have written rows, so that its COMMIT carries a
// marker. Reads, locking reads and transaction control do not.
func changesData(r sqlclass.Result) bool {
	if !r.IsWrite() {
		return false
	}
	switch r.Kind {
	case sqlclass.Select, sqlclass.Begin, sqlclass.Commit, sqlclass.Rollback, sqlclass.Savepoint,
		sqlclass.Set, sqlclass.Use, sqlclass.Show, sqlclass.Explain, sqlclass.Do:
		return false
	}
	return true
}

// markerFor returns the marker a COMMIT carries, if it is to carry one:
// a plain text COMMIT of a transaction that wrote, on the connection the
// session holds it on, with markers on for the account (and a backend
// link that is not compressed: the marker and the COMMIT are pipelined).
func (s *session) markerFor(st *statement, c *backend.Conn, rt route) (outcome.Marker, bool) {
	r := st.class
	if st.kind != textStatement || r.Kind != sqlclass.Commit || r.Chain || r.MultiStatement ||
		rt != routeHeld || s.hold.conn != c || !s.hold.wrote || s.p.cfg.Galera.CommitOutcome == "off" {
		return outcome.Marker{}, false
	}
	if c.Caps.Has(mysqlproto.ClientCompress) || s.p.markers.disabled(s.prof.User) {
		s.p.markers.skipped.Add(1)
		return outcome.Marker{}, false
	}
	if s.slot == 0 {
		s.slot, s.slotRow = s.p.markers.slot()
	}
	return outcome.Marker{Slot: s.slot, Token: s.p.markers.token.Add(1)}, true
}

// forwardMarked sends the marker's write and the COMMIT in one packet
// write and relays the COMMIT's answer. The marker's own answer is not
// relayed, with one exception: a deadlock (a brute-force abort by a
// replicated write-set) rolled the transaction back, so the COMMIT that
// followed committed nothing and its OK would lie; the client gets the
// deadlock, as a bare COMMIT would have. Any other marker error leaves
// the transaction whole and its COMMIT's answer stands; one that says
// the marker is not set up turns markers off for the account.
//
// marked says whether the marker is in the COMMIT's write-set, as far as
// is known: false once its answer said it wrote nothing (an error, or an
// update of a row someone deleted), and then a lost COMMIT cannot be
// settled from it.
func (s *session) forwardMarked(c *backend.Conn, commit []byte, m outcome.Marker) (res relayResult, marked bool, err error) {
	s.running.Store(c)
	defer s.running.Store(nil)
	c.ResetSeq()
	s.markBuf = m.Append(mysqlproto.AppendComQuery(s.markBuf[:0], "", c.Caps), s.slotRow, false)
	err = c.WritePacket(s.markBuf)
	if err == nil {
		c.ResetSeq()
		err = c.WritePacket(commit)
	}
	if err == nil {
		err = c.Flush()
	}
	if err != nil {
		c.MarkBroken()
		return relayResult{}, true, &backendErr{c.Server(), err}
	}
	c.SetSeq(1)
	pkt, err := c.ReadPacket()
	if err != nil {
		c.MarkBroken()
		return relayResult{}, true, &backendErr{c.Server(), err}
	}
	var se *mysqlproto.SQLError
	switch {
	case mysqlproto.IsErr(pkt):
		if se, _ = mysqlproto.ParseErr(pkt); se == nil {
			se = mysqlproto.NewSQLError(mysqlproto.ErUnknownComError, "commit marker: malformed error")
		}
	case mysqlproto.IsOK(pkt):
		ok, perr := mysqlproto.ParseOK(pkt, c.Caps)
		marked = perr == nil && ok.AffectedRows > 0
		// A row that was there is there for the next marker; an update
		// that found none (deleted by hand) makes the next one insert.
		s.slotRow = marked
	default:
		c.MarkBroken()
		return relayResult{}, true, &backendErr{c.Server(), errors.New("commit marker: unexpected answer")}
	}
	c.SetSeq(1)
	failure := outcome.TxIntact
	if se != nil {
		failure = outcome.MarkerFailed(uint16(se.Code))
	}
	if failure != outcome.TxIntact {
		// The marker's error rolled the transaction back, or may have:
		// an OK from the COMMIT would say nothing about it.
		st := mysqlproto.StatusFlag(0)
		if s.autocommit {
			st = mysqlproto.ServerStatusAutocommit
		}
		failed := relayResult{isErr: true, written: true, statusKnown: true, status: st}
		cpkt, err := c.ReadPacket() // the COMMIT's answer: one OK or ERR
		if err != nil {
			c.MarkBroken()
			return relayResult{}, false, &backendErr{c.Server(), err}
		}
		switch {
		case failure == outcome.TxRolledBack:
			// The client gets the marker's error (1213, 1180, 1206), as
			// if its last statement had met it.
		case mysqlproto.IsErr(cpkt):
			// The COMMIT failed: nothing committed, its error stands.
			if ce, _ := mysqlproto.ParseErr(cpkt); ce != nil {
				se = ce
			}
		default:
			s.p.counts.backendLost.Add(1)
			se = mysqlproto.NewSQLError(mysqlproto.ErGaleonBackendLost,
				"galeon: the commit marker written with your COMMIT on %s failed (%d: %s), which may have rolled back your transaction before the COMMIT: it may or may not have committed; check before you retry",
				c.Server(), se.Code, se.Message)
		}
		// The COMMIT ended the transaction, whatever it answered: the
		// status below releases the connection.
		s.slotRow = false
		return failed, false, s.sendErr(se)
	}
	if se != nil {
		s.markerFailed(se)
	}
	s.markedCommit = marked
	res, err = s.relay(c, mysqlproto.ResponseQuery)
	s.markedCommit = false
	if res.isErr {
		// The COMMIT failed: a row the marker inserted is not there.
		s.slotRow = false
	}
	return res, marked, err
}

// markerFailed reports a marker write that failed without harming the
// transaction.
func (s *session) markerFailed(se *mysqlproto.SQLError) {
	if se.Code == 1290 || se.Code == 1792 {
		// A read-only server or transaction: the statement was refused
		// too; nothing to warn about.
		return
	}
	if !outcome.Unavailable(uint16(se.Code)) {
		s.p.log.Warn("commit marker write failed; the COMMIT went on without it", "backend_user", s.prof.User, "error", se.Error())
		return
	}
	if s.p.markers.disable(s.prof.User) {
		s.p.log.Warn("commit markers are off for this account: a COMMIT lost with the writer will be reported as of unknown outcome. Set them up on the cluster (galeon sandbox does it), then restart the proxy",
			"backend_user", s.prof.User, "error", se.Error(),
			"run", strings.Join(append(slices.Clone(outcome.SetupStatements), outcome.Grant("'"+s.prof.User+"'@'%'")), "; "))
	}
}

// settle answers a COMMIT whose connection to the writer broke before its
// answer: it asks the nodes until the cluster's answer is final (see
// outcome.Settle) and gives the client the COMMIT's OK if it committed, a
// 9002 that says it did not, or, after galera.commit_settle_timeout, a
// 9003 that says the outcome is unknown. Nothing had reached the client.
//
// With replay, a COMMIT that did not commit gets no answer here: the
// caller replays the transaction and sends the COMMIT again.
func (s *session) settle(c *backend.Conn, m outcome.Marker, replay bool) (outcome.Verdict, error) {
	old := c.Server()
	v, how, took, _ := s.verdict(c, m)
	switch {
	case v == outcome.Committed:
		s.p.events.Add(eventlog.Commit, old, fmt.Sprintf("a COMMIT lost with %s was settled in %s: committed (%s); the client got its OK", old, took, how))
		return v, s.sendOK()
	case v == outcome.NotCommitted && replay:
		s.p.events.Add(eventlog.Commit, old, fmt.Sprintf("a COMMIT lost with %s was settled in %s: not committed (%s); the transaction is replayed", old, took, how))
		return v, nil
	case v == outcome.NotCommitted:
		s.p.counts.abortedWriterChanged.Add(1)
		s.p.events.Add(eventlog.Commit, old, fmt.Sprintf("a COMMIT lost with %s was settled in %s: not committed (%s); the client got 9002", old, took, how))
		return v, s.sendErr(mysqlproto.NewSQLError(mysqlproto.ErGaleonWriterChanged,
			"galeon: the connection to the writer %s broke while your COMMIT was in flight, and the cluster settled that it did not commit (%s): the transaction was rolled back; retry it", old, how))
	}
	s.p.counts.backendLost.Add(1)
	s.p.events.Add(eventlog.Commit, old, fmt.Sprintf("a COMMIT lost with %s could not be settled in %s: %s; the client got 9003", old, took, how))
	return v, s.sendErr(mysqlproto.NewSQLError(mysqlproto.ErGaleonBackendLost,
		"galeon: the connection to the writer %s broke while your COMMIT was in flight, and the cluster could not settle its outcome within galera.commit_settle_timeout (%s: %s): it may or may not have committed; check before you retry",
		old, s.p.cfg.Galera.CommitSettleTimeout.D(), how))
}

// verdict asks the nodes what became of the commit marked m, whose
// connection c broke before its answer, until the cluster's answer is
// final or galera.commit_settle_timeout passes (then Pending), and
// counts it. It drops c and readies the client's answer to replace
// anything buffered for it.
func (s *session) verdict(c *backend.Conn, m outcome.Marker) (v outcome.Verdict, how string, took time.Duration, looks []outcome.Look) {
	if s.hold.conn == c {
		s.hold.drop()
	}
	s.discard(c)
	old, oldAddr, tid := c.Server(), c.Pool().Server().Addr, c.ThreadID
	s.p.suspect(old)
	s.bw.Reset(s.out)
	s.pc.SetSeq(s.cmdSeq)
	start := time.Now()
	deadline := time.NewTimer(s.p.cfg.Galera.CommitSettleTimeout.D())
	defer deadline.Stop()
	l := newLooker(s, old, oldAddr, tid, m.Slot)
	defer l.stop()
	for {
		snap := s.p.view.Load()
		l.ask(snap)
		expired := false
		select {
		case look := <-l.results:
			l.got(look)
		case <-snap.Changed():
		case <-time.After(lookEvery):
		case <-deadline.C:
			expired = true
		}
		looks = l.looks()
		v, how = outcome.Settle(m, looks)
		took = time.Since(start).Round(time.Millisecond)
		switch {
		case v == outcome.Committed:
			s.p.markers.committed.Add(1)
			s.armCausal(old)
			return v, how, took, looks
		case v == outcome.NotCommitted:
			s.p.markers.notCommitted.Add(1)
			return v, how, took, looks
		case expired:
			s.p.markers.unknown.Add(1)
			s.armCausal(old)
			return v, how, took, looks
		}
	}
}

// looker asks the nodes about one lost COMMIT: each node at most once at
// a time (a hung node's look takes lookTimeout), again as soon as its
// previous answer is in, and the decision is taken on each node's latest
// answer as it arrives, not after the slowest node's.
type looker struct {
	s            *session
	old, oldAddr string
	tid          uint32
	slot         uint64
	results      chan outcome.Look
	done         chan struct{}
	inflight     map[string]bool
	asked        map[string]time.Time
	latest       map[string]outcome.Look
}

// lookEvery spaces two looks at one node.
const lookEvery = 50 * time.Millisecond

func newLooker(s *session, old, oldAddr string, tid uint32, slot uint64) *looker {
	return &looker{s: s, old: old, oldAddr: oldAddr, tid: tid, slot: slot, results: make(chan outcome.Look),
		done: make(chan struct{}), inflight: map[string]bool{}, asked: map[string]time.Time{}, latest: map[string]outcome.Look{}}
}

// ask starts a look at every node of snap that has none running and was
// not asked in the last lookEvery.
func (l *looker) ask(snap *topology.Snapshot) {
	for _, srv := range snap.Servers {
		if l.inflight[srv.Name] || time.Since(l.asked[srv.Name]) < lookEvery {
			continue
		}
		l.inflight[srv.Name], l.asked[srv.Name] = true, time.Now()
		go func() {
			look := l.s.lookAt(srv, l.old, l.oldAddr, l.tid, l.slot)
			select {
			case l.results <- look:
			case <-l.done:
			}
		}()
	}
}

// got takes a node's answer.
func (l *looker) got(look outcome.Look) {
	l.inflight[look.Node] = false
	l.latest[look.Node] = look
}

// looks are the nodes' latest answers.
func (l *looker) looks() []outcome.Look {
	out := make([]outcome.Look, 0, len(l.latest))
	for _, look := range l.latest {
		out = append(out, look)
	}
	return out
}

// stop lets the looks still running end without being read.
func (l *looker) stop() { close(l.done) }

// lookTimeout bounds one node's answer: a hung node must not hold the
// others' answers up.
const lookTimeout = time.Second

// lookAt asks one node, on a connection of its own as the session's
// account, whether it is in a Primary component that counts the old
// writer, whether the COMMIT's connection is still there (on the old
// writer), and what token the slot holds.
func (s *session) lookAt(srv topology.Server, old, oldAddr string, tid uint32, slot uint64) outcome.Look {
	l := outcome.Look{Node: srv.Name, Old: srv.Name == old}
	ctx, cancel := context.WithTimeout(context.Background(), lookTimeout)
	defer cancel()
	c, err := backend.Dial(ctx, srv.Addr, s.prof, lookTimeout)
	if err != nil {
		l.Err = err
		return l
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(lookTimeout))
	row, err := c.QueryRow("SET STATEMENT wsrep_dirty_reads=1 FOR SELECT " +
		"(SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME = 'WSREP_CLUSTER_STATUS'), " +
		"(SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME = 'WSREP_INCOMING_ADDRESSES')")
	if err != nil || len(row) != 2 {
		l.Err = fmt.Errorf("wsrep status: %v", err)
		return l
	}
	l.Primary = row[0].Text == "Primary"
	members, _ := galera.IncomingAddresses(row[1].Text)
	l.ListsOld = slices.Contains(members, oldAddr)
	if l.Old {
		row, err := c.QueryRow(outcome.ThreadStatement(tid))
		if err != nil || len(row) != 1 {
			l.Err = fmt.Errorf("processlist: %v", err)
			return l
		}
		l.ThreadGone = row[0].Text == "0"
	}
	q := outcome.LocalReadStatement(slot)
	if l.Primary {
		q = outcome.ReadStatement(slot)
	}
	row, err = c.QueryRow(q)
	if err != nil {
		l.Err = fmt.Errorf("marker: %v", err)
		return l
	}
	// slot, token, at, and rc, lid in a table of this galeon.
	if len(row) >= 3 {
		l.Token, err = strconv.ParseUint(row[1].Text, 10, 64)
		l.Found = err == nil
		if len(row) >= 5 && !row[3].Null && !row[4].Null {
			rc, err1 := strconv.ParseInt(row[3].Text, 10, 64)
			lid, err2 := strconv.ParseUint(row[4].Text, 10, 64)
			l.RC, l.LID, l.Counted = rc, lid, err1 == nil && err2 == nil
		}
	}
	return l
}
