package proxy

import (
	"context"
	"fmt"
	"sync"
	"time"

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
	// recheck re-runs the writer policy when a site's hold-down ends.
	recheck *time.Timer
	// adminDrain: nodes an operator drains; preferred: switchover target.
	adminDrain map[string]bool
	monOnline  map[string]bool
	preferred  string
	// fenceNote says how the fence loop ended the old writer's role, for
	// the writer_change event that CommitWriter then records.
	fenceNote string
}

func (p *Proxy) setupGalera() {
	g := p.cfg.Galera
	fb := failbackOf(g.Failback)
	gs := &galeraState{failback: fb, since: map[string]time.Time{}, down: map[string]time.Time{}, adminDrain: map[string]bool{}, monOnline: map[string]bool{},
		sites: galera.SitePolicy{Preferred: g.WriterSite, HoldDown: g.SiteHoldDown.D()}}
	p.galera = gs
	p.view.SetPolicy(p.chooseWriter, topology.ReaderPolicy(g.WriterIsAlsoReader))
	p.view.SetStaleReads(g.StaleReads && g.Enabled())
	if w, ok := p.view.Load().Writer(); ok {
		p.events.add(EventWriterChange, w.Name, fmt.Sprintf("%s is the writer at start, epoch %d", w.Name, p.view.Load().Epoch))
	}
	p.view.OnWriterChange(p.writerChanged)
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

// applyHealth publishes the monitor's verdicts to the routing view.
func (p *Proxy) applyHealth(h map[string]galera.Health) {
	gs := p.galera
	for name, nh := range h {
		// New sessions start from the node's current globals: pooled
		// connections opened before a SET GLOBAL are retired.
		p.pool(name).SetGlobals(nh.Globals)
		gs.mu.Lock()
		if nh.State == galera.Online && !gs.monOnline[name] {
			gs.since[name] = time.Now()
			delete(gs.down, name)
		}
		if nh.State != galera.Online && gs.monOnline[name] {
			gs.down[name] = time.Now()
		}
		gs.monOnline[name] = nh.State == galera.Online
		drained := gs.adminDrain[name]
		gs.mu.Unlock()
		changed := p.view.SetState(name, func(s *topology.Server) {
			s.Online = nh.State == galera.Online && !drained
			s.Draining = nh.State == galera.Draining || (drained && nh.State == galera.Online)
			s.Lagging, s.ReadOnly, s.Reason = nh.Lagging, nh.ReadOnly, nh.Reason
			s.Stale, s.Primary = nh.Stale && !drained, nh.Primary
			if drained && nh.State == galera.Online {
				s.Reason = "operator drain"
			}
		})
		if changed {
			// Record the state the view now publishes (an operator drain
			// included), as SELECT * FROM servers shows it.
			srv, _ := p.view.Load().Server(name)
			detail := srv.State()
			if srv.Reason != "" {
				detail += ": " + srv.Reason
			}
			p.events.add(EventNodeState, name, detail)
			if nh.State == galera.Offline {
				// Nothing can be finished there: drop idle connections.
				p.pool(name).CloseIdle(true)
			}
		}
	}
}

// chooseWriter is the view's writer chooser: the controller's published
// decision when the proxy follows one, otherwise its own policy.
func (p *Proxy) chooseWriter(servers []topology.Server, current string) string {
	if w, ok := p.followedWriter(servers, current); ok {
		return w
	}
	return p.policyWriter(servers, current)
}

// policyWriter adapts galera.ChooseWriter to the topology view: a pure
// function of the published node states, the current writer, the failback
// policy and an operator's switchover target.
func (p *Proxy) policyWriter(servers []topology.Server, current string) string {
	gs := p.galera
	gs.mu.Lock()
	preferred, failback := gs.preferred, gs.failback
	cands := make([]galera.Candidate, 0, len(servers))
	for _, s := range servers {
		st := galera.Offline
		if s.Online {
			st = galera.Online
		} else if s.Draining {
			st = galera.Draining
		}
		cands = append(cands, galera.Candidate{Name: s.Name, WriterWeight: s.WriterWeight,
			Health:       galera.Health{State: st, Reason: s.Reason, Lagging: s.Lagging, ReadOnly: s.ReadOnly},
			HealthySince: gs.since[s.Name], Site: s.Site, DownSince: gs.down[s.Name]})
	}
	sites := gs.sites
	gs.mu.Unlock()
	if preferred != "" {
		for _, c := range cands {
			if c.Name == preferred && c.Health.State == galera.Online && c.WriterWeight > 0 && !c.Health.ReadOnly {
				return preferred
			}
		}
	}
	w, recheck := galera.ChooseWriterInSites(cands, current, failback, sites, time.Now())
	if recheck > 0 {
		// A hold-down is running: decide again when it ends (the view's
		// lock is held here, so the re-run happens on the timer).
		gs.mu.Lock()
		if gs.recheck != nil {
			gs.recheck.Stop()
		}
		gs.recheck = time.AfterFunc(recheck+10*time.Millisecond, p.view.Reconsider)
		gs.mu.Unlock()
	}
	return w
}

// fenceLoop carries out writer switches: it stops writes to the old writer
// before the new one takes any. A failed old writer is fenced at once
// (its connections are closed: whatever ran there gets "writer changed");
// a healthy or draining one keeps its in-flight transactions for up to
// drain_grace while new writes pause.
func (p *Proxy) fenceLoop(ctx context.Context) {
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
		snap := p.view.Load()
		srv, _ := snap.Server(old)
		pool := p.pool(old)
		kind := "failover"
		if srv.Online || srv.Draining {
			kind = "planned"
			// Planned: let in-flight writes finish (new ones pause).
			deadline := time.Now().Add(p.cfg.Galera.DrainGrace.D())
			for pool.WriterInUse() > 0 && time.Now().Before(deadline) && ctx.Err() == nil {
				time.Sleep(2 * time.Millisecond)
			}
		}
		fenced := pool.FenceWriters()
		pool.CloseIdle(true)
		took := time.Since(start)
		p.hist.writerChange.WithLabelValues(kind).Observe(took.Seconds())
		pause := took.Round(time.Millisecond)
		p.galera.mu.Lock()
		p.galera.fenceNote = fmt.Sprintf("writes paused %s; %d writer connections on %s closed", pause, fenced, old)
		p.galera.mu.Unlock()
		p.view.CommitWriter(old)
		now := p.view.Load()
		w, _ := now.Writer()
		p.galera.mu.Lock()
		if p.galera.preferred == w.Name {
			p.galera.preferred = ""
		}
		p.galera.mu.Unlock()
	}
}

// Drain makes an operator drain of node start (on) or end (off).
func (p *Proxy) Drain(node string, on bool) bool {
	p.galera.mu.Lock()
	p.galera.adminDrain[node] = on
	mon, known := p.galera.monOnline[node]
	p.galera.mu.Unlock()
	if on {
		p.events.add(EventDrain, node, "operator drain: new transactions go elsewhere")
	} else {
		p.events.add(EventUndrain, node, "operator drain ended")
	}
	if !known {
		mon = true // no monitor: the health check's view stands
		if s, ok := p.view.Load().Server(node); ok {
			mon = s.Online || s.Draining
		}
	}
	return p.view.SetState(node, func(s *topology.Server) {
		if on {
			s.Online, s.Draining, s.Reason = false, true, "operator drain"
		} else if mon {
			s.Online, s.Draining, s.Reason = true, false, ""
		}
	})
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
			p.events.add(EventSwitchover, node, fmt.Sprintf("operator switchover from %s to %s, requested from the controller", orNone(w.Name), node))
		}
		return err
	}
	p.galera.mu.Lock()
	p.galera.preferred = node
	p.galera.mu.Unlock()
	p.events.add(EventSwitchover, node, fmt.Sprintf("operator switchover from %s to %s", orNone(w.Name), node))
	// Re-run the policy with the preference.
	return p.view.Update(func(*topology.Server) error { return nil })
}

// writerChanged records a change of writer (called by the view, locked).
func (p *Proxy) writerChanged(old, next string, epoch uint64) {
	p.counts.writerChanges.Add(1)
	p.galera.mu.Lock()
	note := p.galera.fenceNote
	p.galera.fenceNote = ""
	p.galera.mu.Unlock()
	detail := fmt.Sprintf("from %s to %s, epoch %d", orNone(old), orNone(next), epoch)
	if note != "" {
		detail += "; " + note
	}
	p.follow.mu.Lock()
	degraded := p.follow.degraded
	p.follow.mu.Unlock()
	if degraded {
		p.counts.degradedDecisions.Add(1)
		detail += "; decided alone: the control plane is unreachable (degraded)"
	}
	p.events.add(EventWriterChange, next, detail)
}

func orNone(node string) string {
	if node == "" {
		return "(none)"
	}
	return node
}
