package proxy

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/galeon-db/galeon/internal/eventlog"
	"github.com/galeon-db/galeon/internal/follow"
	"github.com/galeon-db/galeon/internal/galera"
	"github.com/galeon-db/galeon/internal/mysqlproto"
	"github.com/galeon-db/galeon/internal/topology"
)

// Decision is a writer decision published by the cluster's controller.
type Decision = follow.Decision

// deciding carries out the per-proxy writer decision (package follow):
// every input goes through decide, which runs follow.Step on a fresh
// picture of the nodes and hands the writer to the view in one call. It
// also holds what the control plane tells the proxy about its peers.
type deciding struct {
	mu    sync.Mutex
	state follow.State
	// recheck decides again when a site hold-down ends.
	recheck *time.Timer
	// why is the last decision's reason: a write that finds no writer
	// says it.
	why string

	// switchover hands an operator's switchover to the controller.
	switchover func(node string) error
	controller bool
	// peers and leader: the cluster's proxies and controller, for
	// admin; self is this proxy's name among them.
	peers  []Peer
	leader string
	self   string
}

// decide runs the writer decision for one input and carries out its
// answer: the view gets the writer and epoch, the events log the notes,
// a hold-down a timer.
func (p *Proxy) decide(in follow.Input) {
	d := &p.deciding
	d.mu.Lock()
	in.Now = time.Now()
	in.Nodes, in.Settings = p.candidates(p.view.Load().Servers)
	in.Current, in.Switching = p.view.Current()
	s, out := follow.Step(d.state, in)
	stateChanged := s != d.state
	d.state = s
	d.why = out.Reason
	ch, changed := p.view.SetWriter(out.Writer, out.Epoch)
	p.armRecheck(out.Recheck)
	degraded := s.Degraded
	d.mu.Unlock()
	if stateChanged {
		// The proxy's record (applied and seen epochs, degraded) must
		// follow at once: the controller waits on it to end a fence.
		p.view.Notify()
	}
	for _, n := range out.Notes {
		p.events.Add(n.Kind, n.Node, n.Detail)
	}
	if changed {
		p.writerChanged(ch, "", out.Reason, degraded)
	}
}

// writerWhy is why the writer is what it is (the last decision's reason).
func (p *Proxy) writerWhy() string {
	p.deciding.mu.Lock()
	defer p.deciding.mu.Unlock()
	return p.deciding.why
}

// reconsider decides again after the nodes' health or weights changed.
func (p *Proxy) reconsider() { p.decide(follow.Input{Kind: follow.Reconsider}) }

// armRecheck starts (or restarts) the hold-down timer (d.mu held).
func (p *Proxy) armRecheck(after time.Duration) {
	if after <= 0 {
		return
	}
	d := &p.deciding
	if d.recheck != nil {
		d.recheck.Stop()
	}
	d.recheck = time.AfterFunc(after+10*time.Millisecond, p.reconsider)
}

// commitSwitch ends a switch once old is fenced: the writer is decided
// at this moment (as if the pending one were already current) and the
// view takes it; note says how the fence went.
func (p *Proxy) commitSwitch(old, note string) {
	d := &p.deciding
	d.mu.Lock()
	_, pending, ok := p.view.PendingSwitch()
	if !ok {
		d.mu.Unlock()
		return
	}
	// Switching: nothing is confirmed applied on this hypothesis; the
	// Committed step below records what the view then shows.
	in := follow.Input{Kind: follow.Reconsider, Now: time.Now(), Current: pending, Switching: true}
	in.Nodes, in.Settings = p.candidates(p.view.Load().Servers)
	s, out := follow.Step(d.state, in)
	ch, changed := p.view.CommitWriter(old, out.Writer, out.Epoch)
	// The switch is over: a preference reached is spent, and what the
	// view shows now is what was applied. The writer this step would
	// choose is left to the next input, as it always was.
	in.Kind = follow.Committed
	in.Current, in.Switching = p.view.Current()
	s, _ = follow.Step(s, in)
	stateChanged := s != d.state
	d.state = s
	degraded := s.Degraded
	d.mu.Unlock()
	if stateChanged {
		p.view.Notify()
	}
	if changed {
		p.writerChanged(ch, note, out.Reason, degraded)
	}
}

// candidates is the nodes as the writer policy sees them, and its
// settings.
func (p *Proxy) candidates(servers []topology.Server) ([]galera.Candidate, follow.Settings) {
	gs := p.galera
	gs.mu.Lock()
	defer gs.mu.Unlock()
	cands := make([]galera.Candidate, 0, len(servers))
	for _, s := range servers {
		st := galera.Offline
		if s.Online {
			st = galera.Online
		} else if s.Draining {
			st = galera.Draining
		}
		// Missed: the monitor's latest check of the node failed, so it
		// is not known in a Primary component now (Candidate.Electable).
		nh := gs.health[s.Name]
		c := galera.Candidate{Name: s.Name, WriterWeight: s.WriterWeight,
			Health: galera.Health{State: st, Reason: s.Reason, Lagging: s.Lagging, ReadOnly: s.ReadOnly,
				Primary: s.Primary, Missed: nh.Missed},
			HealthySince: gs.since[s.Name], Site: s.Site, DownSince: gs.down[s.Name]}
		if gs.vouchable(s.Name) {
			c.HeldBy = galera.HeldBy(gs.health, s.Name, s.Addr)
		}
		cands = append(cands, c)
	}
	return cands, follow.Settings{Failback: gs.failback, Sites: gs.sites}
}

// followState reads the decision's state.
func (p *Proxy) followState() follow.State {
	p.deciding.mu.Lock()
	defer p.deciding.mu.Unlock()
	return p.deciding.state
}

// FollowController makes the proxy take its writer from the controller's
// published decisions (ApplyDecision) instead of its own policy. Until
// the first decision arrives there is no writer: writes wait for it.
// switchover carries an operator's switchover request to the controller.
func (p *Proxy) FollowController(switchover func(node string) error) {
	p.deciding.mu.Lock()
	p.deciding.switchover = switchover
	p.deciding.mu.Unlock()
	p.decide(follow.Input{Kind: follow.Follow})
}

// ApplyDecision follows a newly published decision: writes move only
// after the old writer is fenced on this proxy (the view's two-phase
// switch), and a fencing decision stops writes to the old writer at once.
// rev is the store's revision of the decision: one read before a newer
// one was applied is ignored.
func (p *Proxy) ApplyDecision(d Decision, rev int64) {
	p.decide(follow.Input{Kind: follow.Publish, Decision: d, Rev: rev})
}

// SetDegraded records whether the control plane is reachable. While it
// is not, the proxy keeps the last published writer as long as that node
// is healthy here, and fails over alone by the same deterministic policy
// when it is not; every such decision is an event and counted.
func (p *Proxy) SetDegraded(on bool, why string) {
	p.decide(follow.Input{Kind: follow.Degrade, On: on, Why: why})
}

// Applied is the epoch of the last published decision this proxy has
// carried out: it writes to no node other than that decision's writer.
// The controller waits for every proxy's Applied before ending a fence.
func (p *Proxy) Applied() uint64 {
	s := p.followState()
	w, switching := p.view.Current()
	return follow.Applied(s, w, switching)
}

// Degraded says whether the proxy decides alone (control plane
// unreachable).
func (p *Proxy) Degraded() bool { return p.followState().Degraded }

// SeenEpoch is the epoch of the latest decision the proxy has received
// (applied or not): a proxy that has seen the current decision and still
// writes elsewhere needs a new one.
func (p *Proxy) SeenEpoch() uint64 { return p.followState().Decision.Epoch }

// RoutingState is what the proxy routes to now, for its record in the
// control plane: the writer, its epoch, whether a switch is under way
// and the nodes its monitor sees ONLINE.
func (p *Proxy) RoutingState() (writer string, epoch uint64, switching bool, online []string) {
	snap := p.view.Load()
	w, _ := snap.Writer()
	for _, s := range snap.Servers {
		if s.Online {
			online = append(online, s.Name)
		}
	}
	return w.Name, snap.Epoch, snap.Switching, online
}

// ViewChanges signals (coalesced) every change of the routing view.
func (p *Proxy) ViewChanges() <-chan struct{} { return p.view.Subscribe() }

// PolicyWriter is this proxy's own writer policy over its monitor's view,
// given the current writer and an operator's target ("" for none): what
// the controller publishes.
func (p *Proxy) PolicyWriter(current, preferred string) string {
	cands, settings := p.candidates(p.view.Load().Servers)
	w, _ := follow.Policy(cands, current, preferred, settings, time.Now())
	return w
}

// Failed says whether this proxy's monitor sees node failed: known, and
// neither ONLINE nor draining (unreachable, out of the Primary
// component, not synced). A node missing from the view is not failed:
// absence is no evidence.
func (p *Proxy) Failed(node string) bool {
	s, ok := p.view.Load().Server(node)
	return ok && !s.Online && !s.Draining
}

// HeldBy names a node that answered from a Primary component listing
// node among its members while this proxy cannot reach node over the
// network, or while node, back from such a cut, proves itself ("" when
// neither, or no reachable Primary node counts it): node runs in the
// cluster — a cut, not a failure.
func (p *Proxy) HeldBy(node string) string {
	srv, ok := p.view.Load().Server(node)
	if !ok || p.galera == nil {
		return ""
	}
	gs := p.galera
	gs.mu.Lock()
	defer gs.mu.Unlock()
	if !gs.vouchable(node) {
		return ""
	}
	return galera.HeldBy(gs.health, node, srv.Addr)
}

// Reached lists the nodes whose last check by this proxy's monitor got
// an answer, in name order (nil without a monitor).
func (p *Proxy) Reached() []string {
	if p.galera == nil || p.galera.monitor == nil {
		return nil
	}
	gs := p.galera
	gs.mu.Lock()
	defer gs.mu.Unlock()
	var out []string
	for name, h := range gs.health {
		if h.Missed == 0 && h.Reason != galera.ReasonNotChecked {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// Knows says whether node is in the proxy's view.
func (p *Proxy) Knows(node string) bool {
	_, ok := p.view.Load().Server(node)
	return ok
}

// Probe checks node at once with the monitor's account: nil when it
// answers as a writer must (Synced in a Primary component, writable).
func (p *Proxy) Probe(ctx context.Context, node string) error {
	if p.galera.monitor == nil {
		return nil
	}
	return p.galera.monitor.Probe(ctx, node)
}

// requestSwitchover hands a switchover to the controller when following.
func (p *Proxy) requestSwitchover(node string) (handled bool, err error) {
	p.deciding.mu.Lock()
	fn, on, degraded := p.deciding.switchover, p.deciding.state.Following, p.deciding.state.Degraded
	p.deciding.mu.Unlock()
	if !on || fn == nil {
		return false, nil
	}
	if degraded {
		return true, mysqlproto.NewSQLError(mysqlproto.ErGaleonNoBackend, "the control plane is unreachable: a switchover needs the controller; retry when etcd is back")
	}
	return true, fn(node)
}

// SetController records that this proxy became, or stopped being, the
// cluster's controller.
func (p *Proxy) SetController(on bool) {
	p.deciding.mu.Lock()
	p.deciding.controller = on
	p.deciding.mu.Unlock()
	if on {
		p.events.Add(eventlog.Controller, "", "this proxy is the controller: it publishes the writer decisions")
	} else {
		p.events.Add(eventlog.Controller, "", "this proxy is no longer the controller")
	}
}

// IsController says whether this proxy is the controller now.
func (p *Proxy) IsController() bool {
	p.deciding.mu.Lock()
	defer p.deciding.mu.Unlock()
	return p.deciding.controller
}

// Peer is one live proxy of the cluster as the control plane shows it.
type Peer struct {
	Name, MySQL, Admin string
	Writer             string
	Epoch, Applied     uint64
	Switching          bool
	Degraded           bool
	Online             []string
	UpdatedAt          time.Time
}

// SetPeers records the cluster's live proxies and the elected controller,
// for the admin table proxies; self names this proxy among them.
func (p *Proxy) SetPeers(peers []Peer, controller, self string) {
	p.deciding.mu.Lock()
	p.deciding.peers, p.deciding.leader, p.deciding.self = append([]Peer(nil), peers...), controller, self
	p.deciding.mu.Unlock()
}

// PeerRow is one proxy as the admin table proxies shows it.
type PeerRow struct {
	Peer
	Controller bool
	// PublishedWriter and PublishedEpoch are the controller's decision as
	// this proxy last saw it; Agrees: the peer has carried it out and
	// routes writes to no other node.
	PublishedWriter string
	PublishedEpoch  uint64
	Agrees          bool
}

// ProxiesRows lists the cluster's live proxies and whether each agrees
// with the published decision.
func (p *Proxy) ProxiesRows() []PeerRow {
	p.deciding.mu.Lock()
	peers, leader, self, d, degraded := p.deciding.peers, p.deciding.leader, p.deciding.self, p.deciding.state.Decision, p.deciding.state.Degraded
	p.deciding.mu.Unlock()
	if degraded {
		// Cut off from etcd, this proxy cannot know who is controller
		// now, and its own record may not say it is degraded.
		leader = ""
	}
	out := make([]PeerRow, 0, len(peers))
	for _, pr := range peers {
		if pr.Name == self && self != "" {
			pr.Writer, pr.Epoch, pr.Switching, pr.Online = p.RoutingState()
			pr.Applied, pr.Degraded = p.Applied(), degraded
		}
		out = append(out, PeerRow{Peer: pr, Controller: pr.Name == leader, PublishedWriter: d.Writer, PublishedEpoch: d.Epoch,
			Agrees: !degraded && !pr.Degraded && !pr.Switching && pr.Applied == d.Epoch && (pr.Writer == d.Writer || pr.Writer == "")})
	}
	return out
}

// Settled says whether the proxy's view of the nodes rests on evidence:
// discovery has delivered its nodes (when following it) and the monitor
// has polled every node ok_checks times. A controller that has just been
// elected decides nothing before: an unchecked node is not a failed one.
func (p *Proxy) Settled() bool {
	if p.cfg.Discovery.Enabled() && !p.discoverySeen.Load() {
		return false
	}
	if p.galera.monitor == nil {
		return true
	}
	return len(p.view.Load().Servers) > 0 && p.galera.monitor.Settled(p.cfg.Galera.OKChecks)
}

// InUse counts, by node, the backend connections busy now (serving a
// statement, a transaction or a session that holds one).
func (p *Proxy) InUse() map[string]int64 {
	out := map[string]int64{}
	for name, pool := range *p.pools.Load() {
		// Connections parked by idle sessions hold no work a drain
		// could wait for.
		if st := pool.Stats(); st.ConnUsed-st.ConnParked > 0 {
			out[name] = st.ConnUsed - st.ConnParked
		}
	}
	return out
}

// writerChanged records a change of writer: the events log, the counters.
func (p *Proxy) writerChanged(ch topology.Change, note, reason string, degraded bool) {
	p.counts.writerChanges.Add(1)
	detail := fmt.Sprintf("from %s to %s, epoch %d", follow.OrNone(ch.Old), follow.OrNone(ch.New), ch.Epoch)
	if note != "" {
		detail += "; " + note
	}
	if degraded {
		p.counts.degradedDecisions.Add(1)
		detail += "; decided alone: the control plane is unreachable (degraded)"
	}
	if reason != "" {
		detail += "; why: " + reason
	}
	p.events.Add(eventlog.WriterChange, ch.New, detail)
}
