// Package nodesync is a proxy's link to the control plane (Run): it keeps
// the proxy's discovered nodes in step with the agents' registrations
// (every node an agent registers is handed to the proxy, which monitors
// it before routing to it; every node that leaves is taken away), hands
// it the controller's published writer decisions and the cluster's shared
// configuration, publishes the proxy's own record (writer, epoch, applied
// epoch), probes etcd (two failed reads make the proxy decide alone:
// degraded), lists the cluster's other proxies for the admin table
// proxies, and runs the controller election. It is the only place where
// the proxy meets etcd: the proxy imports neither etcd nor this package.
package nodesync

import (
	"context"

	"github.com/galeon-db/galeon/internal/discovery"
	"github.com/galeon-db/galeon/internal/proxy"
	"github.com/galeon-db/galeon/internal/transfer"
)

// Follow syncs p with the registered nodes until ctx ends. Registrations
// the store rejects (corrupt or invalid values) are recorded as events,
// once each, and never applied.
func Follow(ctx context.Context, store *discovery.Store, p *proxy.Proxy) {
	reported := map[string]bool{}
	for ns := range store.WatchNodes(ctx) {
		nodes := make([]proxy.DiscoveredNode, 0, len(ns.Nodes))
		for _, f := range ns.Sorted() {
			nodes = append(nodes, proxy.DiscoveredNode{Name: f.Name, Address: f.Address, Site: f.Site, Left: f.Left})
		}
		p.SyncDiscovered(nodes)
		p.SetStateTransfers(stateTransfers(ns.Sorted()))
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

// stateTransfers are the joiners' transfers, set against the cluster.
func stateTransfers(nodes []discovery.NodeFacts) []proxy.StateTransfer {
	var out []proxy.StateTransfer
	for _, t := range transfer.Estimate(nodes) {
		out = append(out, proxy.StateTransfer{Node: t.Node, Kind: t.Kind, Donor: t.Donor, Done: t.Done, Total: t.Total,
			Percent: t.Percent, Rate: t.Rate, ETA: t.ETA, Since: t.Since})
	}
	return out
}
