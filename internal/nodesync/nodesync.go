// Package nodesync keeps a proxy's discovered nodes in step with the
// control-plane store: every node an agent registers is handed to the
// proxy (which monitors it before routing to it), every node that leaves
// is taken away. It is the only place where the proxy meets etcd, so the
// proxy itself depends on its routing view alone.
package nodesync

import (
	"context"

	"github.com/galeon-db/galeon/internal/discovery"
	"github.com/galeon-db/galeon/internal/proxy"
)

// Follow syncs p with the registered nodes until ctx ends. Registrations
// the store rejects (corrupt or invalid values) are recorded as events,
// once each, and never applied.
func Follow(ctx context.Context, store *discovery.Store, p *proxy.Proxy) {
	reported := map[string]bool{}
	for ns := range store.WatchNodes(ctx) {
		nodes := make([]proxy.DiscoveredNode, 0, len(ns.Nodes))
		for _, f := range ns.Sorted() {
			nodes = append(nodes, proxy.DiscoveredNode{Name: f.Name, Address: f.Address})
		}
		p.SyncDiscovered(nodes)
		now := map[string]bool{}
		for _, err := range ns.Rejected {
			msg := err.Error()
			now[msg] = true
			if !reported[msg] {
				p.RecordRejected(msg)
			}
		}
		reported = now
	}
}
