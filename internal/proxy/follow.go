package proxy

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/galeon-db/galeon/internal/admin"
	"github.com/galeon-db/galeon/internal/mysqlproto"
	"github.com/galeon-db/galeon/internal/topology"
)

// Decision is a writer decision published by the cluster's controller, as
// a following proxy applies it.
type Decision struct {
	// Writer takes the writes ("" while fencing or when no node
	// qualifies); Epoch numbers the decision.
	Writer string
	Epoch  uint64
	// Fencing: the previous writer must take no more writes; Next is the
	// node intended to follow it.
	Fencing    bool
	Next       string
	Controller string
	Reason     string
}

// followState is how a proxy under a controller chooses its writer: the
// published decision, never its own policy — unless the control plane is
// unreachable (degraded), when it keeps the last decision while that
// writer is healthy and otherwise applies the same deterministic policy
// alone.
type followState struct {
	mu       sync.Mutex
	on       bool
	have     bool
	d        Decision
	degraded bool
	// applied is the epoch of the last decision fully carried out.
	applied uint64
	// switchover hands an operator's switchover to the controller.
	switchover func(node string) error
	// rev is the store revision of d: older decisions are ignored.
	rev        int64
	controller bool
	// peers and leader: the cluster's proxies and controller, for admin.
	peers  []Peer
	leader string
	// stale: the control plane is reachable again, but the proxy keeps
	// the writer it chose alone until the controller publishes a decision
	// newer than staleBelow (or its writer is the published one): dropping
	// it for the old decision would stop writes until the controller
	// decides.
	stale      bool
	staleBelow uint64
}

// alone says whether the proxy chooses its writer by itself (f.mu held).
func (f *followState) alone() bool { return f.degraded || f.stale }

// FollowController makes the proxy take its writer from the controller's
// published decisions (ApplyDecision) instead of its own policy. Until
// the first decision arrives there is no writer: writes wait for it.
// switchover carries an operator's switchover request to the controller.
func (p *Proxy) FollowController(switchover func(node string) error) {
	f := &p.follow
	f.mu.Lock()
	f.on, f.switchover = true, switchover
	f.mu.Unlock()
	p.view.SetEpochSource(p.decisionEpoch)
	p.view.Reconsider()
}

// ApplyDecision follows a newly published decision: writes move only
// after the old writer is fenced on this proxy (the view's two-phase
// switch), and a fencing decision stops writes to the old writer at once.
// rev is the store's revision of the decision: one read before a newer
// one was applied is ignored.
func (p *Proxy) ApplyDecision(d Decision, rev int64) {
	f := &p.follow
	f.mu.Lock()
	if rev < f.rev || f.have && f.d == d {
		f.mu.Unlock()
		return
	}
	f.have, f.d, f.rev = true, d, rev
	if f.stale && d.Epoch > f.staleBelow {
		f.stale = false
	}
	f.mu.Unlock()
	detail := fmt.Sprintf("controller %s: writer %s, epoch %d", d.Controller, orNone(d.Writer), d.Epoch)
	if d.Fencing {
		detail = fmt.Sprintf("controller %s: fence the writer before %s takes over, epoch %d", d.Controller, orNone(d.Next), d.Epoch)
	}
	if d.Reason != "" {
		detail += " (" + d.Reason + ")"
	}
	p.events.add(EventDecision, d.Writer, detail)
	p.view.Reconsider()
	f.mu.Lock()
	alone := f.alone()
	f.mu.Unlock()
	if !d.Fencing && !alone {
		p.view.AdoptEpoch(d.Writer, d.Epoch)
	}
}

// SetDegraded records whether the control plane is reachable. While it
// is not, the proxy keeps the last published writer as long as that node
// is healthy here, and fails over alone by the same deterministic policy
// when it is not; every such decision is an event and counted.
func (p *Proxy) SetDegraded(on bool, why string) {
	f := &p.follow
	f.mu.Lock()
	if f.degraded == on {
		f.mu.Unlock()
		return
	}
	f.degraded = on
	if !on {
		f.rev = 0 // the store may have been rebuilt: take what it says now
		f.stale, f.staleBelow = true, f.d.Epoch
	}
	f.mu.Unlock()
	if on {
		p.events.add(EventDegraded, "", "control plane unreachable ("+why+"): keeping the last published writer while it is healthy; deciding alone if it fails")
	} else {
		p.events.add(EventDegraded, "", "control plane reachable again: keeping the current writer until the controller's next decision, then following it")
	}
	p.view.Reconsider()
}

// Applied is the epoch of the last published decision this proxy has
// carried out: it writes to no node other than that decision's writer.
// The controller waits for every proxy's Applied before ending a fence.
func (p *Proxy) Applied() uint64 {
	f := &p.follow
	snap := p.view.Load()
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.have || f.alone() || snap.Switching {
		return f.applied
	}
	w, _ := snap.Writer()
	if w.Name == "" || (!f.d.Fencing && w.Name == f.d.Writer) {
		f.applied = max(f.applied, f.d.Epoch)
	}
	return f.applied
}

// Degraded says whether the proxy decides alone (control plane
// unreachable).
func (p *Proxy) Degraded() bool {
	p.follow.mu.Lock()
	defer p.follow.mu.Unlock()
	return p.follow.degraded
}

// SeenEpoch is the epoch of the latest decision the proxy has received
// (applied or not): a proxy that has seen the current decision and still
// writes elsewhere needs a new one.
func (p *Proxy) SeenEpoch() uint64 {
	p.follow.mu.Lock()
	defer p.follow.mu.Unlock()
	return p.follow.d.Epoch
}

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
// given the current writer: what the controller publishes.
func (p *Proxy) PolicyWriter(current string) string {
	return p.policyWriter(p.view.Load().Servers, current)
}

// Prefer sets an operator's switchover target for the writer policy (on
// the controller, from a request made through any proxy).
func (p *Proxy) Prefer(node string) {
	p.galera.mu.Lock()
	p.galera.preferred = node
	p.galera.mu.Unlock()
	p.view.Reconsider()
}

// followedWriter is the chooser's answer under a controller; ok is false
// when the proxy is not following.
func (p *Proxy) followedWriter(servers []topology.Server, current string) (w string, ok bool) {
	f := &p.follow
	f.mu.Lock()
	if f.stale && (current == "" || f.have && !f.d.Fencing && current == f.d.Writer) {
		f.stale = false // nothing chosen alone to keep
	}
	on, have, d, alone := f.on, f.have, f.d, f.alone()
	f.mu.Unlock()
	if !on {
		return "", false
	}
	fit := func(name string) bool {
		i := slices.IndexFunc(servers, func(s topology.Server) bool { return s.Name == name })
		return i >= 0 && servers[i].Online && servers[i].WriterWeight > 0 && !servers[i].ReadOnly
	}
	if alone {
		if current != "" && fit(current) {
			return current, true
		}
		return p.policyWriter(servers, current), true
	}
	if !have || d.Fencing || !fit(d.Writer) {
		// Not fit here: stop writing to it and wait for the controller.
		return "", true
	}
	return d.Writer, true
}

// decisionEpoch numbers a new writer with the followed decision's epoch
// (a degraded proxy counts on from its own).
func (p *Proxy) decisionEpoch(string) (uint64, bool) {
	f := &p.follow
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.on || !f.have || f.alone() {
		return 0, false
	}
	return f.d.Epoch, true
}

// requestSwitchover hands a switchover to the controller when following.
func (p *Proxy) requestSwitchover(node string) (handled bool, err error) {
	f := &p.follow
	f.mu.Lock()
	fn, on, degraded := f.switchover, f.on, f.degraded
	f.mu.Unlock()
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
	p.follow.mu.Lock()
	p.follow.controller = on
	p.follow.mu.Unlock()
	if on {
		p.events.add(EventController, "", "this proxy is the controller: it publishes the writer decisions")
	} else {
		p.events.add(EventController, "", "this proxy is no longer the controller")
	}
}

// IsController says whether this proxy is the controller now.
func (p *Proxy) IsController() bool {
	p.follow.mu.Lock()
	defer p.follow.mu.Unlock()
	return p.follow.controller
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
// for the admin table proxies.
func (p *Proxy) SetPeers(peers []Peer, controller string) {
	f := &p.follow
	f.mu.Lock()
	f.peers, f.leader = append([]Peer(nil), peers...), controller
	f.mu.Unlock()
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
	f := &p.follow
	f.mu.Lock()
	peers, leader, d := f.peers, f.leader, f.d
	f.mu.Unlock()
	out := make([]PeerRow, 0, len(peers))
	for _, pr := range peers {
		out = append(out, PeerRow{Peer: pr, Controller: pr.Name == leader, PublishedWriter: d.Writer, PublishedEpoch: d.Epoch,
			Agrees: !pr.Degraded && !pr.Switching && pr.Applied == d.Epoch && (pr.Writer == d.Writer || pr.Writer == "")})
	}
	return out
}

// proxiesTable shows every proxy of the cluster and whether it agrees with
// the published decision.
func (p *Proxy) proxiesTable() admin.Table {
	cols := []admin.Column{
		{Name: "name", Kind: admin.Text}, {Name: "mysql_address", Kind: admin.Text}, {Name: "admin_address", Kind: admin.Text},
		{Name: "controller", Kind: admin.Int}, {Name: "writer", Kind: admin.Text}, {Name: "epoch", Kind: admin.Int},
		{Name: "applied_epoch", Kind: admin.Int}, {Name: "published_writer", Kind: admin.Text}, {Name: "published_epoch", Kind: admin.Int},
		{Name: "agrees", Kind: admin.Int}, {Name: "degraded", Kind: admin.Int}, {Name: "online_nodes", Kind: admin.Text},
		{Name: "updated_at", Kind: admin.Text},
	}
	b := func(v bool) int64 {
		if v {
			return 1
		}
		return 0
	}
	return admin.Table{Name: "proxies", Columns: cols, Rows: func() [][]any {
		rows := p.ProxiesRows()
		out := make([][]any, 0, len(rows))
		for _, r := range rows {
			out = append(out, []any{r.Name, r.MySQL, r.Admin, b(r.Controller), r.Writer, int64(r.Epoch), int64(r.Applied),
				r.PublishedWriter, int64(r.PublishedEpoch), b(r.Agrees), b(r.Degraded), strings.Join(r.Online, ","), r.UpdatedAt.Format(time.RFC3339Nano)})
		}
		return out
	}}
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
		if n := pool.Stats().ConnUsed; n > 0 {
			out[name] = n
		}
	}
	return out
}
