package lifecycle

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/galeon-db/galeon/internal/discovery"
	"github.com/galeon-db/galeon/internal/sharedconfig"
)

// Rolling restarts a cluster's nodes one at a time so that clients see
// nothing: each node is drained through every proxy (the shared
// configuration), its in-flight work finishes, it restarts, and it takes
// traffic again only once Synced. The writer goes last, after a
// switchover through the controller. It stops at the first node that
// does not come back, saying why, and leaves the rest untouched.
type Rolling struct {
	Store *discovery.Store
	// Restart restarts one node's server cleanly and returns once it runs.
	Restart func(ctx context.Context, node string) error
	// Progress hears each step.
	Progress func(node, msg string)
	// DrainTimeout bounds the wait for a drained node's in-flight work
	// (default 10s, as drain_grace); SyncTimeout the wait for a restarted
	// node to be Synced (default 5m).
	DrainTimeout, SyncTimeout time.Duration
}

// Run restarts every registered node.
func (r Rolling) Run(ctx context.Context) error {
	if r.DrainTimeout <= 0 {
		r.DrainTimeout = 10 * time.Second
	}
	if r.SyncTimeout <= 0 {
		r.SyncTimeout = 5 * time.Minute
	}
	if r.Progress == nil {
		r.Progress = func(string, string) {}
	}
	nodes, err := r.Store.Nodes(ctx)
	if err != nil {
		return err
	}
	u, err := r.Store.ReadDecision(ctx)
	if err != nil {
		return err
	}
	writer := u.Decision.Writer
	var order []string
	for _, n := range nodes {
		if !n.Synced {
			return fmt.Errorf("%s is not Synced (%s): a rolling restart starts from a healthy cluster", n.Name, n.LocalStateComment)
		}
		if n.Name != writer {
			order = append(order, n.Name)
		}
	}
	sort.Strings(order)
	if len(order) == 0 {
		return errors.New("no node to restart without losing the only writer: a rolling restart needs two nodes or more")
	}
	done := []string{}
	for _, name := range append(order, writer) {
		if name == "" {
			continue
		}
		if name == writer {
			if err := r.switchover(ctx, writer, done[0]); err != nil {
				return err
			}
		}
		if err := r.restartOne(ctx, name); err != nil {
			return fmt.Errorf("%s: %w; stopped here (restarted so far: %v; the others are untouched)", name, err, done)
		}
		done = append(done, name)
	}
	return nil
}

// switchover moves the writer role off old before it restarts.
func (r Rolling) switchover(ctx context.Context, old, to string) error {
	return switchover(ctx, r.Store, old, to, "rolling-restart", r.Progress)
}

func (r Rolling) restartOne(ctx context.Context, name string) error {
	if err := drain(ctx, r.Store, name, "rolling-restart", r.DrainTimeout, r.Progress); err != nil {
		return err
	}
	r.Progress(name, "restarting")
	if err := r.Restart(ctx, name); err != nil {
		return fmt.Errorf("restart: %w (it stays drained)", err)
	}
	if err := waitSynced(ctx, r.Store, name, r.SyncTimeout); err != nil {
		return fmt.Errorf("did not come back Synced: %w (it stays drained)", err)
	}
	if err := sharedconfig.SetDrained(ctx, r.Store, name, false, "rolling-restart"); err != nil {
		return fmt.Errorf("undrain: %w", err)
	}
	r.Progress(name, "Synced; taking traffic again")
	return waitOnlineEverywhere(ctx, r.Store, name, 30*time.Second)
}

// switchover asks the controller to move the writer role from old to to
// and waits until it is published, unfenced.
func switchover(ctx context.Context, store *discovery.Store, old, to, why string, progress func(node, msg string)) error {
	progress(old, "writer: switchover to "+to+" through the controller")
	rctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	err := store.RequestSwitchover(rctx, to, why)
	cancel()
	if err != nil {
		return err
	}
	return until(ctx, 30*time.Second, "the writer moved to "+to, func() bool {
		u, err := store.ReadDecision(ctx)
		return err == nil && u.Present && !u.Decision.Fencing && u.Decision.Writer == to
	})
}

// drain takes name out of routing on every proxy (through the shared
// configuration) and waits, up to timeout, until no proxy routes new
// work to it or has work in flight there. A node still busy after the
// timeout is reported and the caller goes on.
func drain(ctx context.Context, store *discovery.Store, name, why string, timeout time.Duration, progress func(node, msg string)) error {
	if err := sharedconfig.SetDrained(ctx, store, name, true, why); err != nil {
		return fmt.Errorf("drain: %w", err)
	}
	progress(name, "drained through every proxy; waiting for its in-flight work")
	err := until(ctx, timeout, "no proxy routing new work to it and none busy there", func() bool {
		ps, err := store.Proxies(ctx)
		if err != nil {
			return false
		}
		for _, p := range ps {
			if slices.Contains(p.Online, name) || p.InUse[name] > 0 {
				return false
			}
		}
		return true
	})
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		progress(name, "in-flight work did not finish within "+timeout.String()+": going on anyway")
	}
	return nil
}

// waitSynced waits until name's agent reports it Synced.
func waitSynced(ctx context.Context, store *discovery.Store, name string, timeout time.Duration) error {
	return until(ctx, timeout, name+" Synced", func() bool {
		ns, err := store.Nodes(ctx)
		if err != nil {
			return false
		}
		for _, n := range ns {
			if n.Name == name {
				return n.Synced
			}
		}
		return false
	})
}

// waitSyncedOn waits until name says on db that it is Synced, then until
// its agent reports it Synced. The agent alone is not enough after a
// short desync (a quick RSU statement): it checks every half second and
// publishes only what changed, so its last report can be the Synced from
// before the desync, while the node is still Joined and catching up.
func waitSyncedOn(ctx context.Context, db *sql.DB, store *discovery.Store, name string, timeout time.Duration) error {
	err := until(ctx, timeout, name+" Synced (by its own wsrep_local_state)", func() bool {
		qctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		var k, v string
		return db.QueryRowContext(qctx, "SHOW GLOBAL STATUS LIKE 'wsrep_local_state'").Scan(&k, &v) == nil && v == "4"
	})
	if err != nil {
		return err
	}
	return waitSynced(ctx, store, name, timeout)
}

// waitOnlineEverywhere waits until every proxy routes to name.
func waitOnlineEverywhere(ctx context.Context, store *discovery.Store, name string, timeout time.Duration) error {
	return until(ctx, timeout, name+" ONLINE on every proxy", func() bool {
		ps, err := store.Proxies(ctx)
		if err != nil {
			return false
		}
		for _, p := range ps {
			if !slices.Contains(p.Online, name) {
				return false
			}
		}
		return true
	})
}

// until polls cond every 100 ms until it holds or timeout passes.
func until(ctx context.Context, timeout time.Duration, what string, cond func() bool) error {
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			return fmt.Errorf("timed out after %s waiting for %s", timeout, what)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	return nil
}
