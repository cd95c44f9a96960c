package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/galeon-db/galeon/internal/discovery"
)

// ThroughAgents returns a function that restarts (or stops) a node by
// asking its agent (discovery.ActionRestart / ActionStop) and waiting for
// the agent's report: how Rolling, StopCluster and Membership.Remove act
// on nodes of any platform, as long as each agent can run its node (the
// sandbox, or galeon agent --manage systemd / --*-cmd). by names who
// asks, for the record.
func ThroughAgents(store *discovery.Store, kind, by string, timeout time.Duration) func(ctx context.Context, node string) error {
	return func(ctx context.Context, node string) error {
		if kind != discovery.ActionRestart && kind != discovery.ActionStop {
			return fmt.Errorf("agents restart or stop nodes, not %q", kind)
		}
		now := time.Now()
		a := discovery.Action{ID: kind + "-" + node + "-" + strconv.FormatInt(now.UnixNano(), 10), Kind: kind, Node: node,
			Reason: by, Controller: by, At: now.UTC()}
		if err := store.RequestAction(ctx, a); err != nil {
			return err
		}
		var last string
		err := until(ctx, timeout, node+"'s agent to "+kind+" it", func() bool {
			ns, err := store.Nodes(ctx)
			if err != nil {
				return false
			}
			for _, n := range ns {
				if n.Name == node && n.Action != nil && n.Action.ID == a.ID && n.Action.Done {
					last = n.Action.Err
					return true
				}
			}
			return false
		})
		// Cleared in any case (with a context of its own: ctx may be what
		// ended the wait), so that the agent does not act on it later.
		cctx, ccancel := context.WithTimeout(context.Background(), 2*time.Second)
		_ = store.ClearAction(cctx, a)
		ccancel()
		switch {
		case err != nil:
			return fmt.Errorf("%w (does %s's agent manage its node? galeon agent --manage systemd, or the sandbox's agents)", err, node)
		case last != "":
			return errors.New(node + "'s agent: " + last)
		}
		return nil
	}
}
