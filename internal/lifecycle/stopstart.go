package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/galeon-db/galeon/internal/discovery"
)

// StopCluster stops every node cleanly, one at a time and the writer
// last, so that the writer ends with every transaction and Galera marks
// it safe_to_bootstrap; the agents keep reporting each node's position.
// A hold is set first: the controller does not bring the cluster back
// until StartCluster.
func StopCluster(ctx context.Context, store *discovery.Store, stop func(ctx context.Context, node string) error, by string, progress func(node, msg string)) error {
	nodes, err := store.Nodes(ctx)
	if err != nil {
		return err
	}
	u, err := store.ReadDecision(ctx)
	if err != nil {
		return err
	}
	if err := store.SetHold(ctx, discovery.Hold{Reason: "galeon cluster stop", By: by, At: time.Now().UTC()}); err != nil {
		return err
	}
	var order []string
	for _, n := range nodes {
		if n.Name != u.Decision.Writer {
			order = append(order, n.Name)
		}
	}
	sort.Strings(order)
	for _, n := range nodes {
		if n.Name == u.Decision.Writer {
			order = append(order, n.Name) // last: it will hold every transaction
		}
	}
	for _, name := range order {
		progress(name, "stopping")
		if err := stop(ctx, name); err != nil {
			return fmt.Errorf("%s: %w (the cluster stays held: `galeon cluster start` brings it back)", name, err)
		}
	}
	return nil
}

// StartCluster clears the hold: the controller bootstraps the most
// advanced node from the positions the agents report (no guessing) and
// has the others join. It returns once every node is Synced.
func StartCluster(ctx context.Context, store *discovery.Store, timeout time.Duration, progress func(node, msg string)) error {
	since := time.Now()
	if err := store.ClearHold(ctx); err != nil {
		return err
	}
	progress("-", "hold cleared: the controller brings the cluster back")
	return WaitRecovered(ctx, store, since, timeout, progress)
}

// ForceRecovery orders the controller to recover the cluster from node
// (bootstrapped if stopped, promoted in place if it runs without quorum),
// for when it cannot prove which node is most advanced; it returns once
// every node is Synced.
func ForceRecovery(ctx context.Context, store *discovery.Store, node, by string, timeout time.Duration, progress func(node, msg string)) error {
	nodes, err := store.Nodes(ctx)
	if err != nil {
		return err
	}
	known := false
	for _, n := range nodes {
		known = known || n.Name == node
		if n.Up && n.ClusterStatus == "Primary" {
			return fmt.Errorf("%s is in a Primary component: there is nothing to recover (a forced recovery could split the cluster)", n.Name)
		}
	}
	if !known {
		return fmt.Errorf("no agent reports a node named %q: see `galeon status`", node)
	}
	since := time.Now()
	if err := store.RequestForce(ctx, discovery.Force{Node: node, By: by, At: since.UTC()}); err != nil {
		return err
	}
	progress(node, "recovery from this node ordered")
	return WaitRecovered(ctx, store, since, timeout, progress)
}

// WaitRecovered waits until every registered node is Synced, relaying the
// controller's recovery status as it changes. It fails at once when the
// controller says, after since, that only an operator can go on.
func WaitRecovered(ctx context.Context, store *discovery.Store, since time.Time, timeout time.Duration, progress func(node, msg string)) error {
	deadline := time.Now().Add(timeout)
	said := ""
	for {
		nodes, err := store.Nodes(ctx)
		if err == nil && len(nodes) > 0 {
			all := true
			for _, n := range nodes {
				all = all && n.Synced
			}
			if all {
				return nil
			}
		}
		if st, err := store.ReadRecoveryStatus(ctx); err == nil && st != nil && st.At.After(since) && st.Status != said {
			said = st.Status
			progress("-", "controller: "+st.Status)
			if st.Blocked {
				return errors.New("the controller cannot go on: " + st.Status)
			}
		}
		if time.Now().After(deadline) {
			return errors.New("the cluster is not Synced after " + timeout.String() + ": see `galeon status` and the proxy's recovery events")
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}
