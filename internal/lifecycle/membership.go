package lifecycle

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/galeon-db/galeon/internal/discovery"
	"github.com/galeon-db/galeon/internal/sharedconfig"
)

// Membership scales a cluster through its control plane so that clients
// notice nothing: a new node takes traffic only once Synced and routed by
// every proxy; a node leaves only after the writer role has moved off it
// and every proxy has drained it. How a node is started or stopped (a
// sandbox, a machine's service manager) is the caller's.
type Membership struct {
	Store *discovery.Store
	// Progress hears each step.
	Progress func(node, msg string)
	// DrainTimeout bounds the wait for a leaving node's in-flight work
	// (default 10s); SyncTimeout the wait for a new node (default 5m).
	DrainTimeout, SyncTimeout time.Duration
}

func (m Membership) defaults() Membership {
	if m.DrainTimeout <= 0 {
		m.DrainTimeout = 10 * time.Second
	}
	if m.SyncTimeout <= 0 {
		m.SyncTimeout = 5 * time.Minute
	}
	if m.Progress == nil {
		m.Progress = func(string, string) {}
	}
	return m
}

// Add starts a new node with provision (which starts its server, joining
// by state transfer from the donors the control plane chose, and its
// agent) and returns its name once its agent reports it Synced and every
// proxy routes to it.
func (m Membership) Add(ctx context.Context, provision func(ctx context.Context) (string, error)) (string, error) {
	m = m.defaults()
	name, err := provision(ctx)
	if err != nil {
		return name, err
	}
	if err := waitSynced(ctx, m.Store, name, m.SyncTimeout); err != nil {
		return name, fmt.Errorf("%s started but its agent does not report it Synced: %w", name, err)
	}
	if err := waitOnlineEverywhere(ctx, m.Store, name, 30*time.Second); err != nil {
		return name, err
	}
	m.Progress(name, "Synced and routed by every proxy")
	return name, nil
}

// Remove takes node out of the cluster: the writer role moves off it
// first (a switchover through the controller), every proxy drains it and
// its in-flight work finishes, then remove shuts it down cleanly (it
// leaves the group; the cluster shrinks by one) and deletes it. Its drain
// mark is then cleared from the shared configuration, so that a later
// node of the same name starts undrained. A node no agent reports is
// removed directly.
func (m Membership) Remove(ctx context.Context, node string, remove func(ctx context.Context, node string) error) error {
	m = m.defaults()
	nodes, err := m.Store.Nodes(ctx)
	if err != nil {
		return err
	}
	var others []string
	known := false
	for _, n := range nodes {
		switch {
		case n.Name == node:
			known = true
		case n.Synced:
			others = append(others, n.Name)
		}
	}
	if !known {
		// No proxy routes to a node nobody registered: nothing to drain.
		m.Progress(node, "no agent reports it (no proxy routes to it): removing it directly")
		return remove(ctx, node)
	}
	if len(others) == 0 {
		return fmt.Errorf("%s is the only Synced node: removing it would leave no cluster to serve clients", node)
	}
	sort.Strings(others)
	proxies, err := m.Store.Proxies(ctx)
	if err != nil {
		return err
	}
	if len(proxies) == 0 {
		m.Progress(node, "no proxy is registered: nothing to drain")
	} else {
		u, err := m.Store.ReadDecision(ctx)
		if err != nil {
			return err
		}
		if u.Decision.Writer == node {
			if err := switchover(ctx, m.Store, node, others[0], "remove "+node, m.Progress); err != nil {
				return err
			}
		}
		if err := drain(ctx, m.Store, node, "remove "+node, m.DrainTimeout, m.Progress); err != nil {
			return err
		}
	}
	m.Progress(node, "stopping and removing")
	if err := remove(ctx, node); err != nil {
		return fmt.Errorf("remove %s: %w (it stays drained)", node, err)
	}
	// Its agent either went with it (the sandbox stops it first) or, on
	// a machine of its own, still reports it, stopped.
	stillReported := false
	err = until(ctx, 30*time.Second, node+"'s registration to end, or its agent to report it stopped", func() bool {
		ns, err := m.Store.Nodes(ctx)
		if err != nil {
			return false
		}
		for _, n := range ns {
			if n.Name == node {
				stillReported = true
				return n.Stopped
			}
		}
		stillReported = false
		return true
	})
	if err != nil {
		return err
	}
	if stillReported {
		m.Progress(node, "stopped; its agent still reports it: stop and disable the agent to take the node out of the control plane")
	}
	if len(proxies) == 0 {
		return nil
	}
	return sharedconfig.SetDrained(ctx, m.Store, node, false, "remove "+node)
}
