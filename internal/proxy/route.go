package proxy

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/galeon-db/galeon/internal/backend"
	"github.com/galeon-db/galeon/internal/config"
	"github.com/galeon-db/galeon/internal/mysqlproto"
	"github.com/galeon-db/galeon/internal/sqlclass"
	"github.com/galeon-db/galeon/internal/topology"
)

// route is where a statement runs: the writer, a reader, or the
// connection the session holds (routeNone: no node took it).
type route string

const (
	routeWriter route = config.HostgroupWriter
	routeReader route = config.HostgroupReader
	routeHeld   route = "held"
	routeNone   route = "none"
)

// hostgroupFor decides where a statement goes when the session holds no
// connection: hint, then query rules, then the statement's nature.
func (s *session) hostgroupFor(q string, r sqlclass.Result) route {
	if pinReason(r) != "" {
		// A statement that pins the session to its connection (user
		// variables, temporary tables, locks...) runs on the writer
		// whatever hints or rules say: everything the session sends
		// afterwards, writes included, goes to that connection, and
		// writes belong on the writer alone. (Pinned to a reader, a
		// CALL after SET @x ran on that reader, before the writer's
		// CREATE PROCEDURE had reached it.)
		return routeWriter
	}
	switch r.Hint {
	case sqlclass.HintWriter:
		return routeWriter
	case sqlclass.HintReader:
		if !r.IsWrite() {
			return routeReader
		}
	case sqlclass.HintHostgroup:
		if r.HostGroup == config.HostgroupWriter || (r.HostGroup == config.HostgroupReader && !r.IsWrite()) {
			return route(r.HostGroup)
		}
	}
	if rules := *s.p.rules.Load(); len(rules) > 0 {
		var digest uint64
		for i := range rules {
			ru := &rules[i]
			if ru.user != "" && ru.user != s.user.name {
				continue
			}
			match := false
			if ru.re != nil {
				match = ru.re.MatchString(q)
			} else {
				if digest == 0 {
					digest, _ = s.digest(q)
				}
				match = digest == ru.digest
			}
			if match {
				// A rule may send reads anywhere, but never a write to
				// the readers.
				if ru.destination == config.HostgroupReader && r.IsWrite() {
					return routeWriter
				}
				return route(ru.destination)
			}
		}
	}
	if r.IsWrite() || !s.autocommit {
		if r.Kind == sqlclass.Begin && r.ReadOnlyTxn && s.autocommit {
			return routeReader
		}
		return routeWriter
	}
	return s.localTableHostgroup(s.readHostgroup(), q)
}

// readHostgroup is where reads go by default for this session's user.
func (s *session) readHostgroup() route {
	if s.user != nil && s.user.hostgroup() == config.HostgroupWriter {
		return routeWriter
	}
	return routeReader
}

// pick chooses the node for hostgroup: the writer, or a reader by
// weight: by the reads served and load with pool.affinity (readerRun),
// by load alone without (topology.PickReaderLoaded).
func (s *session) pick(snap *topology.Snapshot, hostgroup route) (topology.Server, bool) {
	if hostgroup == routeWriter {
		return snap.Writer()
	}
	if !s.p.cfg.Pool.Affinity {
		return snap.PickReaderLoaded(s.p.readerLoad)
	}
	busy := snap.Busy(s.p.readerLoad, readersBusy)
	if r := &s.readers; busy && r.left > 0 && snap.SameReaders(r.snap) {
		r.snap = snap
		r.left--
		// Now and then, a run on a reader that served more than its
		// weight's share lately ends early: the session draws again.
		if r.left%readerRunCheck != 0 || rand.IntN(readerLeaveOdds) != 0 ||
			!snap.AheadOfWeight(r.node, s.p.readerLoad, s.p.readsServed.since(s.p, snap, time.Now()).served, readerAheadSlack, readerAheadMinReads) {
			if srv, ok := snap.Server(r.node); ok {
				return srv, true
			}
		}
	}
	srv, ok := snap.PickReaderBehind(s.p.readerLoad, s.p.readsServed.since(s.p, snap, time.Now()).served)
	if ok {
		// Runs of random length (the read drawn, then 511 to 1,534
		// more), so that sessions started together do not all draw
		// again at once.
		s.readers = readerRun{snap: snap, node: srv.Name, left: readerRunLength/2 - 1 + rand.IntN(readerRunLength)}
	}
	return srv, ok
}

// readerRun is the reader a session's reads go to for a run of
// statements while the readers are busy (pool.affinity): each statement
// goes where the session's previous one went, on the connection it used
// when nobody took it since (takeLast). A session moving between nodes
// statement by statement cost the nodes about a third more CPU per read
// than sessions that stay (bench/README.md). Weights are honoured once
// per run, by the draw that starts it (Snapshot.PickReaderBehind: of two
// readers drawn by weight, the one further behind its weight's share of
// the reads served in the last 250-750 ms, readsWindow), and a run on a
// reader ahead of its share ends early now and then
// (Snapshot.AheadOfWeight), so over the many sessions that make readers
// busy the shares follow the weights. While
// the readers are not busy every read is drawn on its own: a few
// sessions' reads follow the weights statement by statement, and there
// is no load for affinity to relieve. A change of the readers or their
// weights (a reader's health, lag or weight) starts new runs at once; a
// new view that leaves them as they were (a status text, the writer's
// checks) does not (Snapshot.SameReaders).
type readerRun struct {
	snap *topology.Snapshot
	node string
	left int
}

// readerRunLength is how many reads a run lasts on average (from half
// to one and a half times it). A move to another
// reader costs the session its kept connection (often a new one is
// opened): with runs of 64 reads sessions moved often enough to lose
// the gain of affinity, with 1,024 they kept it (bench/README.md).
const readerRunLength = 1024

// readsWindow gives PickReaderBehind and AheadOfWeight the reads each
// reader served lately: since the start of the previous window of
// readsWindowLength (between one and three windows' worth under steady
// load; one window's worth at most after a change of the readers or
// their weights, or a pause, when what was served before says nothing of
// the shares wanted now). Reading it is one atomic load; the first
// session to find it expired turns it over.
type readsWindow struct {
	mu    sync.Mutex // held to turn the window over
	state atomic.Pointer[readsWindowState]
}

// readsWindowState is one window: from start, under snap's readers.
type readsWindowState struct {
	start time.Time
	snap  *topology.Snapshot
	pools map[string]*backend.Pool
	// prev and cur: each pool's Reads() when the previous and this
	// window began (by pool: a node re-registered at a new address gets
	// a new pool, counting from zero).
	prev, cur map[*backend.Pool]int64
}

// readsWindowLength: long enough for thousands of reads under load,
// short enough that runs follow a change of shares within a second.
const readsWindowLength = 250 * time.Millisecond

// readsSince is what since returns: the pools and their counts at the
// start of the window.
type readsSince struct {
	pools map[string]*backend.Pool
	prev  map[*backend.Pool]int64
}

// served is the reads node served since the start of the window.
func (r readsSince) served(name string) int64 {
	pl := r.pools[name]
	if pl == nil {
		return 0
	}
	return pl.Reads() - r.prev[pl]
}

// since returns the reads served over the window under snap, at now.
func (w *readsWindow) since(p *Proxy, snap *topology.Snapshot, now time.Time) readsSince {
	current := func(st *readsWindowState) bool {
		return st != nil && now.Sub(st.start) < readsWindowLength && snap.SameReaders(st.snap)
	}
	st := w.state.Load()
	if !current(st) {
		w.mu.Lock()
		if st = w.state.Load(); !current(st) {
			pools := *p.pools.Load()
			counts := make(map[*backend.Pool]int64, len(pools))
			for _, pl := range pools {
				counts[pl] = pl.Reads()
			}
			next := &readsWindowState{start: now, snap: snap, pools: pools, prev: counts, cur: counts}
			if st != nil && now.Sub(st.start) < 2*readsWindowLength && snap.SameReaders(st.snap) {
				next.prev = st.cur
			}
			w.state.Store(next)
			st = next
		}
		w.mu.Unlock()
	}
	return readsSince{pools: st.pools, prev: st.prev}
}

const (
	// readerRunCheck: a run checks its reader's share every so many
	// reads; readerLeaveOdds: and then, when the reader is ahead of its
	// share, ends with a chance of one in readerLeaveOdds, so sessions
	// leave a reader a few at a time and the shares settle instead of
	// swinging.
	readerRunCheck  = 32
	readerLeaveOdds = 8
	// readerAheadSlack: a reader is ahead when it served over its
	// weight's share by this many percent of it, and readerAheadMinReads
	// at least were served between the readers over the window.
	readerAheadSlack    = 5
	readerAheadMinReads = 1000
)

// readersBusy is the statements in flight per reader, on average, from
// which sessions keep their reader for runs.
const readersBusy = 2

// readerLoad is what a reader has in flight for PickReaderLoaded: its
// pooled connections that sessions hold now.
func (p *Proxy) readerLoad(name string) int64 {
	if pl := p.pool(name); pl != nil {
		return pl.Used()
	}
	return 0
}

// errNoBackend is returned when no node could serve a hostgroup in time.
type errNoBackend struct {
	hostgroup route
	why       string
	wait      time.Duration
	// noPrimary: no node is in a Primary component and some answered
	// from outside one (the cluster lost quorum): the client gets the
	// nodes' own answer, 1047.
	noPrimary bool
	// unreached names nodes that do not answer this proxy: a Primary
	// component may run out of its reach (its site cut off), so it cannot
	// say the cluster lost quorum.
	unreached []string
}

func (e *errNoBackend) Error() string {
	return fmt.Sprintf("no backend available in hostgroup '%s' after %s: %s", e.hostgroup, e.wait, e.why)
}

// backendErr is a failure talking to a backend, with the node's name.
type backendErr struct {
	server string
	err    error
}

func (e *backendErr) Error() string { return fmt.Sprintf("backend %s: %v", e.server, e.err) }
func (e *backendErr) Unwrap() error { return e.err }

// asSQLError turns any error into what the client sees: the server's own
// error when it sent one, else a galeon error that says what happened and
// what to do.
func asSQLError(err error) *mysqlproto.SQLError {
	var se *mysqlproto.SQLError
	if errors.As(err, &se) {
		return se
	}
	var nb *errNoBackend
	if errors.As(err, &nb) && nb.noPrimary && len(nb.unreached) > 0 {
		return mysqlproto.NewSQLError(mysqlproto.ErUnknownComError,
			"WSREP has not yet prepared node for application use (galeon: no node is in a Primary component after %s, of those this proxy reaches: %s; "+
				"%s do not answer here, so a Primary component may be running out of this proxy's reach (its site cut off from the others), or the cluster lost quorum: "+
				"statements succeed again as soon as this proxy reaches a node of a Primary component; do not force a recovery (galeon cluster recover --force) "+
				"unless no node anywhere is Primary: forcing one side of a cut makes a second Primary component; retry)", nb.wait, nb.why, strings.Join(nb.unreached, ", "))
	}
	if errors.As(err, &nb) && nb.noPrimary {
		return mysqlproto.NewSQLError(mysqlproto.ErUnknownComError,
			"WSREP has not yet prepared node for application use (galeon: no node is in a Primary component after %s: %s; "+
				"the cluster lost quorum: statements succeed again as soon as a majority of nodes sees each other, "+
				"or after `galeon cluster recover --force NODE`; retry)", nb.wait, nb.why)
	}
	if errors.As(err, &nb) {
		return mysqlproto.NewSQLError(mysqlproto.ErGaleonNoBackend, "galeon: %s; check the nodes (galeon admin: SELECT * FROM servers)", nb.Error())
	}
	var be *backendErr
	if errors.As(err, &be) {
		return mysqlproto.NewSQLError(mysqlproto.ErGaleonBackendLost,
			"galeon: lost connection to backend %s (%v); the statement may not have completed: check and retry", be.server, be.err)
	}
	return mysqlproto.NewSQLError(mysqlproto.ErGaleonBackendLost, "galeon: %v", err)
}

// acquire returns a backend connection for hostgroup with the session's
// state applied, waiting up to proxy.no_backend_timeout for a node (longer
// while a writer switch pauses writes). A node that fails to connect is
// reported down and the next one is tried.
func (s *session) acquire(hostgroup route) (*backend.Conn, error) {
	// Fast path: an idle connection of the chosen node, no timer.
	snap := s.p.view.Load()
	if srv, ok := s.pick(snap, hostgroup); ok {
		c := s.takeLast(srv.Name)
		if c == nil {
			c = s.p.pool(srv.Name).TryIdle(s.prof)
		}
		if c != nil {
			if c, err := s.ready(c, hostgroup, snap); c != nil || err != nil && !errors.Is(err, errFreshConn) && !refusedByNode(err) {
				return c, err
			}
		}
	}
	wait := s.p.cfg.Proxy.NoBackendWait.D()
	if hostgroup == routeWriter && snap.Switching && snap.Pending != "" {
		// A writer switch to another node is in progress: writes pause
		// until it is done (at most drain_grace) instead of failing. (A
		// failed writer with no successor yet waits no longer than any
		// missing writer: no_backend_timeout.)
		wait += s.p.cfg.Galera.DrainGrace.D()
	}
	deadline := time.Now().Add(wait)
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	var lastErr error
	var failed []string
	var pausedAt time.Time
	defer func() {
		if !pausedAt.IsZero() {
			s.p.pauses.end(pausedAt)
		}
	}()
	for {
		snap = s.p.view.Load()
		srv, ok := s.pick(snap, hostgroup)
		if ok && hostgroup != routeWriter && len(failed) > 0 {
			srv, ok = snap.PickReaderAvoiding(failed)
			s.readers = readerRun{} // none on a node picked around failures
		}
		if !ok && hostgroup == routeWriter && pausedAt.IsZero() {
			// No writer now: the write pauses until the view names one.
			if !s.p.pauses.begin(s.p.cfg.Proxy.MaxPausedWrites) {
				return nil, mysqlproto.NewSQLError(mysqlproto.ErGaleonNoBackend,
					"galeon: %d statements already wait for a writer (proxy.max_paused_writes); this one was not queued: retry, or raise the limit", s.p.cfg.Proxy.MaxPausedWrites)
			}
			pausedAt = time.Now()
		}
		var retry <-chan time.Time
		if ok {
			// A node that accepts connections but never greets (shutting
			// down, frozen) must not use up the whole wait: an attempt
			// gets at most half of what is left, and a reader that failed
			// is not picked again while another can serve.
			actx, acancel := context.WithTimeout(ctx, max(time.Until(deadline)/2, 100*time.Millisecond))
			c, err := s.p.pool(srv.Name).Get(actx, s.prof)
			acancel()
			if err == nil {
				c, err = s.ready(c, hostgroup, snap)
				if errors.Is(err, errFreshConn) {
					continue // closed; the next Get takes another or dials
				}
				if c != nil || err != nil && !refusedByNode(err) {
					return c, err
				}
				// The node refused the session's state (1047: it has just
				// left the Primary component) or the connection broke:
				// the statement was not sent; another node takes it, or
				// the client gets no_backend_timeout's explained error.
				if err == nil {
					err = errSyncBroke
				}
			}
			lastErr = err
			s.readers = readerRun{} // draw again, without this node
			if !slices.Contains(failed, srv.Name) {
				failed = append(failed, srv.Name)
			}
			if !errors.Is(err, backend.ErrPoolFull) {
				if s.p.galera.monitor == nil {
					if s.p.view.SetHealth(srv.Name, false, "unreachable: "+err.Error()) {
						s.p.reconsider()
					}
				}
				s.p.suspect(srv.Name)
			}
			// The node failed: try again shortly, or as soon as the view
			// changes.
			retry = time.After(20 * time.Millisecond)
		}
		// With no node to pick, only a new view can give one: wait for it.
		select {
		case <-ctx.Done():
			why := snap.Why(string(hostgroup))
			if lastErr != nil {
				why = lastErr.Error()
			} else if _, has := snap.Writer(); hostgroup == routeWriter && !has && !snap.Switching {
				// No writer: the decision says why (a cut from the
				// writer, the controller's word, no fit node).
				why = s.p.writerWhy() + "; nodes: " + why
			}
			return nil, &errNoBackend{hostgroup: hostgroup, why: why, wait: wait, noPrimary: noPrimary(snap.Servers), unreached: unreached(snap.Servers)}
		case <-snap.Changed():
		case <-retry:
		}
	}
}

// pauses counts the statements waiting for a writer, bounded by
// proxy.max_paused_writes (see acquire), for /metrics and stats_galeon.
type pauses struct {
	now, total, rejected, nanos atomic.Int64
}

// begin counts one more waiting statement, or refuses it past limit.
func (p *pauses) begin(limit int) bool {
	if p.now.Add(1) > int64(limit) {
		p.now.Add(-1)
		p.rejected.Add(1)
		return false
	}
	p.total.Add(1)
	return true
}

// end counts a wait that began at since as over.
func (p *pauses) end(since time.Time) {
	p.now.Add(-1)
	p.nanos.Add(int64(time.Since(since)))
}

// refusedByNode says err is a node's 1047 (WSREP has not yet prepared
// node for application use): it refused the command without running it.
func refusedByNode(err error) bool {
	var se *mysqlproto.SQLError
	return errors.As(err, &se) && se.Code == errWsrepNotReady
}

// errSyncBroke: the connection broke while the session state was applied.
const errSyncBroke = protoErr("connection lost while applying the session state")

// ready applies the session state to a borrowed connection. It returns the
// connection on success; the server's error (connection released) if the
// state was refused; or neither (connection discarded) if it broke, so the
// caller tries another.
func (s *session) ready(c *backend.Conn, hostgroup route, snap *topology.Snapshot) (*backend.Conn, error) {
	err := s.sync(c)
	if err == nil {
		err = s.dirtyReads(c, hostgroup, snap)
	}
	switch {
	case err == nil:
		s.claim(c, hostgroup, snap)
		return c, nil
	case errors.Is(err, errFreshConn):
		s.discard(c)
		return nil, err
	case !c.Broken():
		s.release(c)
		return nil, err
	}
	s.discard(c)
	return nil, nil
}

// dirtyReads turns wsrep_dirty_reads on for a read on a node outside the
// Primary component (stale reads, galera.stale_reads) and off again on
// any other use, so that only a read the proxy chose to serve stale can
// be stale: a connection left ON would answer from a node that has just
// left the Primary component instead of failing over. A session that
// set the variable itself keeps its own value.
func (s *session) dirtyReads(c *backend.Conn, hostgroup route, snap *topology.Snapshot) error {
	want := false
	if hostgroup != routeWriter && snap.StaleReads {
		srv, _ := snap.Server(c.Server())
		want = srv.Stale
	}
	if c.DirtyReads == want {
		return nil // the common case: nothing stale, nothing to undo
	}
	if _, own := s.vars["wsrep_dirty_reads"]; own {
		return nil
	}
	q := "SET SESSION wsrep_dirty_reads = OFF"
	if want {
		q = "SET SESSION wsrep_dirty_reads = ON"
	}
	if err := c.Query(q); err != nil {
		return err
	}
	c.DirtyReads = want
	return nil
}

// claim records a connection taken as writer, with the writer epoch, so
// a writer change can wait for it or fence it.
func (s *session) claim(c *backend.Conn, hostgroup route, snap *topology.Snapshot) {
	if w, ok := snap.Writer(); ok && hostgroup == routeWriter && w.Name == c.Server() {
		c.Pool().MarkWriter(c, snap.Epoch)
	}
}

// release gives a connection back to its pool; the result is its
// generation (see backend.Pool.TakeBack).
func (s *session) release(c *backend.Conn) uint64 {
	return c.Pool().Put(c, s.prof)
}

// discard closes a connection taken from the pool.
func (s *session) discard(c *backend.Conn) {
	c.Pool().Discard(c)
}

// unreached names the servers whose last check found them unreachable
// (the Galera monitor's reason, galera.Policy.Evaluate).
func unreached(servers []topology.Server) []string {
	var out []string
	for _, s := range servers {
		if !s.Online && strings.HasPrefix(s.Reason, "unreachable") {
			out = append(out, s.Name)
		}
	}
	return out
}

// noPrimary says whether no node is in a Primary component while some
// node answers from outside one (wsrep_cluster_status non-Primary): what
// a node itself answers then is 1047 to every statement, and what galeon
// answers too. Nodes that are merely unreachable do not say so.
func noPrimary(servers []topology.Server) bool {
	outside := false
	for _, s := range servers {
		if s.Primary || s.Online {
			return false
		}
		// "non-Primary (wsrep_cluster_status=...)" is the Galera
		// monitor's reason for such a node (galera.Policy.Evaluate).
		outside = outside || s.Stale || strings.HasPrefix(s.Reason, "non-Primary")
	}
	return outside
}
