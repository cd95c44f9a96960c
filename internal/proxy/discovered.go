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
}

// SyncDiscovered makes the discovered nodes the proxy routes to exactly
// nodes: new ones are added (offline until the Galera monitor has seen
// them healthy for ok_checks polls), gone ones removed (a writer through
// the usual fenced switch), moved ones replaced. Nodes of the
// configuration file are the operator's: discovery never removes them, and
// a registration under the name of one is ignored.
func (p *Proxy) SyncDiscovered(nodes []DiscoveredNode) {
	p.poolMu.Lock()
	defer p.poolMu.Unlock()
	defer p.discoverySeen.Store(true)
	static := map[string]bool{}
	for _, s := range p.cfg.Servers {
		static[s.Name] = true
	}
	want := map[string]DiscoveredNode{}
	for _, n := range nodes {
		if !static[n.Name] {
			want[n.Name] = n
		}
	}
	var gone, added []DiscoveredNode
	for name, had := range p.discovered {
		if now, ok := want[name]; !ok || now.Address != had.Address || now.Site != had.Site {
			gone = append(gone, had)
		}
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
		p.events.Add(eventlog.NodeLeft, n.Name, fmt.Sprintf("%s (%s) left service discovery", n.Name, n.Address))
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
