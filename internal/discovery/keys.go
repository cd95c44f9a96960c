package discovery

import (
	"github.com/galeon-db/galeon/internal/config"
)

// Keys is the layout of one cluster's keys:
//
//	/galeon/<cluster>/nodes/<node>      NodeFacts (JSON), under the agent's lease
//	/galeon/<cluster>/writer            the published writer decision
//	/galeon/<cluster>/switchover        an operator's switchover request, for the controller
//	/galeon/<cluster>/controller/       election of the controller (etcd concurrency)
//	/galeon/<cluster>/proxies/<id>      each proxy's view, under its lease
//	/galeon/<cluster>/config/           shared runtime configuration
//	/galeon/<cluster>/actions/<node>    what the controller asks a node's agent to do (recovery)
type Keys struct{ root string }

// ValidName checks a cluster, node or proxy name (see config.ValidName).
func ValidName(what, name string) error { return config.ValidName(what, name) }

// NewKeys returns the layout for cluster.
func NewKeys(cluster string) Keys { return Keys{root: "/galeon/" + cluster + "/"} }

// Root is the prefix of every key of the cluster.
func (k Keys) Root() string { return k.root }

// Nodes is the prefix of the node registrations.
func (k Keys) Nodes() string { return k.root + "nodes/" }

// Node is one node's registration.
func (k Keys) Node(name string) string { return k.Nodes() + name }

// Writer holds the published writer decision.
func (k Keys) Writer() string { return k.root + "writer" }

// Switchover holds an operator's pending switchover request.
func (k Keys) Switchover() string { return k.root + "switchover" }

// Controller is the election prefix of the controller.
func (k Keys) Controller() string { return k.root + "controller/" }

// Proxies is the prefix of the proxies' registrations.
func (k Keys) Proxies() string { return k.root + "proxies/" }

// Config is the prefix of the shared configuration.
func (k Keys) Config() string { return k.root + "config/" }
