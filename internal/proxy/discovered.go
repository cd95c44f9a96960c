package proxy

import (
	"fmt"
	"maps"

	"github.com/galeon-db/galeon/internal/config"
	"github.com/galeon-db/galeon/internal/eventlog"
	"github.com/galeon-db/galeon/internal/galera"
	"github.com/galeon-db/galeon/internal/topology"
)

// DiscoveredNode is a node that registered itself through service
// discovery (its agent), as the proxy needs it: a name and an address.
// Whether it may take traffic is still the proxy's own monitor's call.
type DiscoveredNode struct {
	Name    string
	Address string
	Site    string // as its agent publishes it (galeon agent --site)
	// Left: its agent says it leaves on purpose (a clean stop).
	Left bool
}

// SyncDiscovered makes the discovered nodes the proxy routes to follow
// the registrations: new ones are added (offline until the Galera
// monitor has seen them healthy for ok_checks polls), moved ones
// replaced, and ones whose agent says they left removed (a writer
// through the usual fenced switch). A registration that merely lapsed —
// etcd was away longer than the agent's lease, or the agent died — is no
// evidence about the node: the proxy keeps it while its own checks find
// it healthy, and drops it once they do not. Nodes of the configuration
// file are the operator's: discovery never removes them, and a
// registration under the name of one is ignored.
func (p *Proxy) SyncDiscovered(nodes []DiscoveredNode) {
	p.poolMu.Lock()
	defer p.poolMu.Unlock()
	defer p.discoverySeen.Store(true)
	p.registered = append([]DiscoveredNode(nil), nodes...)
	p.syncDiscovered()
}

// resyncDiscovered applies the last registrations again, after a node's
// health changed: a node kept after its registration lapsed goes once it
// is not healthy here.
func (p *Proxy) resyncDiscovered() {
	p.poolMu.Lock()
	defer p.poolMu.Unlock()
	if p.discoverySeen.Load() {
		p.syncDiscovered()
	}
}

// syncDiscovered does SyncDiscovered's work (p.poolMu held).
func (p *Proxy) syncDiscovered() {
	static := map[string]bool{}
	for _, s := range p.cfg.Servers {
		static[s.Name] = true
	}
	want, left := map[string]DiscoveredNode{}, map[string]bool{}
	for _, n := range p.registered {
		switch {
		case static[n.Name]:
		case n.Left:
			left[n.Name] = true
		default:
			want[n.Name] = n
		}
	}
	if p.lapsed == nil {
		p.lapsed = map[string]bool{}
	}
	snap := p.view.Load()
	var gone, added []DiscoveredNode
	for name, had := range p.discovered {
		now, ok := want[name]
		if ok && now.Address == had.Address && now.Site == had.Site {
			if p.lapsed[name] {
				delete(p.lapsed, name)
				p.events.Add(eventlog.NodeJoined, name, fmt.Sprintf("%s registered again", name))
			}
			continue
		}
		if srv, in := snap.Server(name); !ok && !left[name] && in && (srv.Online || srv.Draining) {
			if !p.lapsed[name] {
				p.lapsed[name] = true
				p.events.Add(eventlog.NodeState, name, fmt.Sprintf("%s's registration lapsed (etcd away or its agent stopped without leaving): kept while it is healthy here", name))
			}
			continue
		}
		delete(p.lapsed, name)
		gone = append(gone, had)
	}
	for name, n := range want {
		if had, ok := p.discovered[name]; !ok || had.Address != n.Address || had.Site != n.Site {
			added = append(added, n)
		}
	}
	if len(gone)+len(added) == 0 {
		return
	}
	// Pools first, so that a node in the view always has one. The pool of
	// a node that left stays in the map, retired: fencing a writer that
	// left still needs it, and its connections in use close on return.
	pools := maps.Clone(*p.pools.Load())
	for _, n := range gone {
		pools[n.Name].Retire()
	}
	for _, n := range added {
		pools[n.Name] = p.newPool(n.Name, n.Address)
	}
	p.pools.Store(&pools)
	for _, n := range gone {
		p.view.RemoveServer(n.Name)
		if p.galera.monitor != nil {
			p.galera.monitor.RemoveNode(n.Name)
		}
		delete(p.discovered, n.Name)
		why := "its agent says it left"
		if !left[n.Name] {
			why = "its registration is gone and it is not healthy here"
			if w, in := want[n.Name]; in {
				why = "registered again at " + w.Address
			}
		}
		p.events.Add(eventlog.NodeLeft, n.Name, fmt.Sprintf("%s (%s) left service discovery: %s", n.Name, n.Address, why))
	}
	d := p.cfg.Discovery
	p.runtimeMu.Lock()
	weights := maps.Clone(p.weights)
	p.runtimeMu.Unlock()
	for _, n := range added {
		p.discovered[n.Name] = n
		w, ok := weights[n.Name]
		if !ok {
			w = config.Weights{Writer: d.WriterWeight, Reader: d.ReaderWeight}
		}
		p.view.AddServer(topology.Server{Name: n.Name, Addr: n.Address, WriterWeight: w.Writer, ReaderWeight: w.Reader, Discovered: true, Site: n.Site})
		if p.galera.monitor != nil {
			p.galera.monitor.AddNode(galera.Node{Name: n.Name, Addr: n.Address})
		}
		p.events.Add(eventlog.NodeJoined, n.Name, fmt.Sprintf("%s (%s) registered through service discovery", n.Name, n.Address))
	}
	if len(gone)+len(added) > 0 {
		p.reconsider()
	}
}

// RecordRejected records a control-plane value that was rejected (and
// not applied), for operators: SELECT * FROM events.
func (p *Proxy) RecordRejected(msg string) {
	p.events.Add(eventlog.Rejected, "", msg)
}
