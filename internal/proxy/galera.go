package proxy

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/galeon-db/galeon/internal/backend"
	"github.com/galeon-db/galeon/internal/eventlog"
	"github.com/galeon-db/galeon/internal/follow"
	"github.com/galeon-db/galeon/internal/galera"
	"github.com/galeon-db/galeon/internal/mysqlproto"
	"github.com/galeon-db/galeon/internal/topology"
)

// galeraState is the proxy's use of the Galera monitor.
type galeraState struct {
	monitor  *galera.Monitor
	failback galera.Failback
	mu       sync.Mutex
	since    map[string]time.Time // when each node last became ONLINE
	down     map[string]time.Time // when each node last stopped being ONLINE
	sites    galera.SitePolicy
	// adminDrain: nodes an operator drains.
	adminDrain map[string]bool
	// health is the monitor's last verdict on each node: the view's
	// state of a node is derived from it and adminDrain together, under
	// the view's lock (nodeState), so that a drain and a verdict that
	// cross never undo each other.
	health map[string]galera.Health
	// lastState is the gist of each node's last node_state event.
	lastState map[string]string
}

// nodeState sets s from the monitor's last verdict on it and the
// operator's drain, both read now (called under the view's lock).
func (gs *galeraState) nodeState(name string, s *topology.Server) {
	gs.mu.Lock()
	nh, drained := gs.health[name], gs.adminDrain[name]
	gs.mu.Unlock()
	s.Online = nh.State == galera.Online && !drained
	s.Draining = nh.State == galera.Draining || (drained && nh.State == galera.Online)
	s.Lagging, s.ReadOnly, s.Reason = nh.Lagging, nh.ReadOnly, nh.Reason
	s.Stale, s.Primary = nh.Stale && !drained, nh.Primary
	if drained && nh.State == galera.Online {
		s.Reason = "operator drain"
	}
}

// vouchable says whether other nodes' word on name counts (gs.mu held):
// the monitor's last check could not reach it over the network (a cut,
// or a host gone — not a refused connection or a process that hangs), or
// it answers again from a Primary component and is only proving itself
// (ok_checks) after such a cut. Either way Galera, not this proxy's
// checks, says whether it runs in the cluster.
func (gs *galeraState) vouchable(name string) bool {
	h, ok := gs.health[name]
	return ok && h.State == galera.Offline && (h.Missed > 0 && h.DialFailed || h.Primary && galera.ComingUp(h.Reason))
}

func (p *Proxy) setupGalera() {
	g := p.cfg.Galera
	fb := failbackOf(g.Failback)
	gs := &galeraState{failback: fb, since: map[string]time.Time{}, down: map[string]time.Time{}, adminDrain: map[string]bool{}, health: map[string]galera.Health{}, lastState: map[string]string{},
		sites: galera.SitePolicy{Preferred: g.WriterSite, HoldDown: g.SiteHoldDown.D()}}
	p.galera = gs
	p.view.SetReaderPolicy(topology.ReaderPolicy(g.WriterIsAlsoReader))
	p.reconsider()
	p.view.SetStaleReads(g.StaleReads && g.Enabled())
	if w, ok := p.view.Load().Writer(); ok {
		p.events.Add(eventlog.WriterChange, w.Name, fmt.Sprintf("%s is the writer at start, epoch %d", w.Name, p.view.Load().Epoch))
	}
	if !g.Enabled() {
		return
	}
	var nodes []galera.Node
	for _, s := range p.cfg.Servers {
		nodes = append(nodes, galera.Node{Name: s.Name, Addr: s.Address})
	}
	gs.monitor = galera.NewMonitor(galera.MonitorConfig{
		User: g.MonitorUser, Password: g.MonitorPassword, Interval: g.Interval.D(), Timeout: g.CheckTimeout.D(),
		Policy: galera.Policy{MaxTransactionsBehind: g.MaxTransactionsBehind, AllowDonor: g.AllowDonor,
			OKChecks: g.OKChecks, MaxMissedChecks: g.MaxMissedChecks},
	}, nodes)
	gs.monitor.OnUpdate = p.applyHealth
}

// applyHealth publishes the monitor's verdicts to the routing view: every
// node's state first, then one writer decision on the whole, so that it
// never rests on some nodes' new checks and others' old ones.
func (p *Proxy) applyHealth(h map[string]galera.Health) {
	gs := p.galera
	for name, nh := range h {
		// New sessions start from the node's current globals: pooled
		// connections opened before a SET GLOBAL are retired.
		p.pool(name).SetGlobals(nh.Globals)
		gs.mu.Lock()
		wasOnline := gs.health[name].State == galera.Online
		if nh.State == galera.Online && !wasOnline {
			gs.since[name] = time.Now()
			delete(gs.down, name)
		}
		if nh.State != galera.Online && wasOnline {
			gs.down[name] = time.Now()
		}
		gs.health[name] = nh
		gs.mu.Unlock()
		if !p.view.SetState(name, func(s *topology.Server) { gs.nodeState(name, s) }) {
			continue
		}
		// Record the state the view now publishes (an operator drain
		// included), as SELECT * FROM servers shows it: once per change
		// (see stateGist), not once per check.
		srv, _ := p.view.Load().Server(name)
		detail := srv.State()
		if srv.Reason != "" {
			detail += ": " + srv.Reason
		}
		gs.mu.Lock()
		same := gs.lastState[name] == stateGist(detail)
		gs.lastState[name] = stateGist(detail)
		gs.mu.Unlock()
		if !same {
			p.events.Add(eventlog.NodeState, name, detail)
		}
		if nh.State == galera.Offline {
			// Nothing can be finished there: drop idle connections.
			p.pool(name).CloseIdle(true)
			// A node kept after its registration lapsed goes now.
			go p.resyncDiscovered()
		}
	}
	// Always: Missed is not in the view, and a change of it alone
	// matters to the writer decision (the monitor publishes only changes);
	// so does a move of Galera's membership (a node left or joined a
	// Primary component): a writer held because Galera still counted it
	// may be free to move now.
	if len(h) > 0 {
		p.reconsider()
	}
}

// stateGist is what a node_state event says, less what changes from check
// to check without changing the state: numbers (a recv queue, a count of
// good checks), what follows the first colon or parenthesis of the reason
// (a failed check's error text varies between a refused connection, a
// dial timeout and a read timeout for one cut).
func stateGist(detail string) string {
	state, reason, _ := strings.Cut(detail, ": ")
	if strings.HasPrefix(reason, "unreachable") {
		return state + ": unreachable"
	}
	reason, _, _ = strings.Cut(reason, ":")
	reason, _, _ = strings.Cut(reason, " (")
	return state + ": " + strings.Map(func(r rune) rune {
		if r >= '0' && r <= '9' {
			return -1
		}
		return r
	}, reason)
}

// fenceLoop carries out writer switches: it stops writes to the old writer
// before the new one takes any. A failed old writer is fenced at once
// (its connections are closed: whatever ran there gets "writer changed");
// a healthy or draining one keeps its in-flight transactions for up to
// drain_grace while new writes pause — unless it fails meanwhile, by
// this proxy's monitor or the controller's word, when waiting longer
// would only cost writes.
func (p *Proxy) fenceLoop(ctx context.Context) {
	changes := p.view.Subscribe()
	for {
		select {
		case <-ctx.Done():
			return
		case <-p.view.Switches():
		}
		old, _, ok := p.view.PendingSwitch()
		if !ok {
			continue
		}
		start := time.Now()
		pool := p.pool(old)
		// Sessions idle with no transaction open on old (parked) are
		// not waited for, nor can they take their connection back now.
		pool.DrainWriters(true)
		kind := "failover"
		if !p.oldFailed(old) {
			kind = p.waitPlanned(ctx, old, pool, changes)
		}
		fenced := pool.FenceWriters()
		pool.CloseIdle(true)
		took := time.Since(start)
		p.hist.writerChange.WithLabelValues(kind).Observe(took.Seconds())
		p.commitSwitch(old, fmt.Sprintf("%s: writes paused %s; %d writer connections on %s closed", kind, took.Round(time.Millisecond), fenced, old))
		pool.DrainWriters(false)
	}
}

// oldFailed says whether a switch away from old is a failover: this
// proxy's monitor sees old failed (or it left the view), or the
// controller's fence says it failed.
func (p *Proxy) oldFailed(old string) bool {
	if srv, ok := p.view.Load().Server(old); !ok || !srv.Online && !srv.Draining {
		return true
	}
	d := p.followState().Decision
	return d.Fencing && d.OldFailed
}

// waitPlanned lets old's in-flight writes finish, for up to drain_grace,
// looking again at every change of the view or the decision: it returns
// "planned" when they finished or the grace ran out, "failover" as soon
// as old is seen failed.
func (p *Proxy) waitPlanned(ctx context.Context, old string, pool *backend.Pool, changes <-chan struct{}) string {
	wctx, cancel := context.WithTimeout(ctx, p.cfg.Galera.DrainGrace.D())
	defer cancel()
	done := make(chan struct{})
	go func() { defer close(done); pool.WaitWritersDone(wctx) }()
	for {
		select {
		case <-done:
			return "planned"
		case <-changes:
			if p.oldFailed(old) {
				cancel()
				<-done
				return "failover"
			}
		}
	}
}

// Drain makes an operator drain of node start (on) or end (off).
func (p *Proxy) Drain(node string, on bool) bool {
	gs := p.galera
	gs.mu.Lock()
	gs.adminDrain[node] = on
	_, known := gs.health[node]
	gs.mu.Unlock()
	if on {
		p.events.Add(eventlog.Drain, node, "operator drain: new transactions go elsewhere")
	} else {
		p.events.Add(eventlog.Undrain, node, "operator drain ended")
	}
	changed := p.view.SetState(node, func(s *topology.Server) {
		switch {
		case known:
			// The monitor's last verdict and the drain, read now.
			gs.nodeState(node, s)
		case on:
			s.Online, s.Draining, s.Reason = false, true, "operator drain"
		case s.Online || s.Draining:
			// No monitor: the health check's view stands.
			s.Online, s.Draining, s.Reason = true, false, ""
		}
	})
	if changed {
		p.reconsider()
	}
	return changed
}

// Switchover moves the writer role to node (or to the policy's choice
// when node is ""), gracefully: in-flight writes finish, new ones pause.
func (p *Proxy) Switchover(node string) error {
	snap := p.view.Load()
	w, _ := snap.Writer()
	if node == "" {
		// The policy's own next choice: the best fit node but the writer.
		others := make([]topology.Server, 0, len(snap.Servers))
		for _, s := range snap.Servers {
			if s.Name != w.Name {
				others = append(others, s)
			}
		}
		if node = topology.StickyHighestWeight(others, ""); node == "" {
			return mysqlproto.NewSQLError(mysqlproto.ErGaleonNoBackend, "no other node can take the writer role now")
		}
	}
	s, ok := snap.Server(node)
	if !ok || !s.Online || s.WriterWeight == 0 || s.ReadOnly {
		return mysqlproto.NewSQLError(mysqlproto.ErGaleonNoBackend, "%s cannot take the writer role: it must be ONLINE, writable, with writer_weight > 0", node)
	}
	if handled, err := p.requestSwitchover(node); handled {
		if err == nil {
			p.events.Add(eventlog.Switchover, node, fmt.Sprintf("operator switchover from %s to %s, requested from the controller", follow.OrNone(w.Name), node))
		}
		return err
	}
	p.events.Add(eventlog.Switchover, node, fmt.Sprintf("operator switchover from %s to %s", follow.OrNone(w.Name), node))
	p.decide(follow.Input{Kind: follow.Prefer, Node: node})
	return nil
}
