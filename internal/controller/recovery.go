package controller

import (
	"context"
	"log/slog"
	"slices"
	"strconv"
	"time"

	"github.com/galeon-db/galeon/internal/discovery"
	"github.com/galeon-db/galeon/internal/lifecycle"
)

// recoverCluster watches for a cluster that lost every node and brings it back
// (lifecycle.PlanRecovery) while this term holds.
func recoverCluster(ctx context.Context, store *discovery.Store, lead *discovery.Leadership, p Proxy, cfg Config, log *slog.Logger) {
	t := time.NewTicker(500 * time.Millisecond)
	defer t.Stop()
	lastPrimary, expected, said := time.Now(), 0, ""
	// last is the last Primary component as Galera listed its members,
	// kept in etcd: a controller elected during an outage reads it, and
	// no member is missed because the controller did not see its agent
	// report Primary in time.
	var last *discovery.LastComponent
	// seen are the nodes this controller saw Primary at the current
	// expected size: a fallback for agents that do not publish Galera's
	// member list.
	var seen []string
	// The size and the members the last controller saw: a controller
	// elected during an outage must still know them.
	for expected == 0 && ctx.Err() == nil {
		rctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		n, err := store.ReadClusterSize(rctx)
		var c *discovery.LastComponent
		if err == nil {
			c, err = store.ReadLastComponent(rctx)
		}
		cancel()
		if err == nil {
			expected, last = max(n, 1), c
			if c != nil {
				log.Info("last Primary component, as recorded", "members", c.Members, "names", c.Names, "by", c.Controller, "at", c.At)
			}
			break
		}
		select {
		case <-ctx.Done():
		case <-t.C:
		}
	}
	// The first look is at once: a controller elected a moment before an
	// outage must have seen the cluster whole, or it cannot know what to
	// wait for.
	for first := true; ; first = false {
		if !first {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
		rctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		nodes, err := store.Nodes(rctx)
		var acts map[string]discovery.Action
		if err == nil {
			acts, err = store.Actions(rctx)
		}
		var hold *discovery.Hold
		if err == nil {
			hold, err = store.ReadHold(rctx)
		}
		var force *discovery.Force
		if err == nil {
			force, err = store.ReadForce(rctx)
		}
		var promoted *discovery.Promotion
		if err == nil {
			promoted, err = store.ReadPromotion(rctx)
		}
		cancel()
		held := ""
		switch {
		case hold != nil:
			held = hold.Reason + ", by " + hold.By
		case promoted != nil:
			// The fenced cluster is not brought back to serve: its
			// replica took its place.
			held = "replica " + promoted.Replica + " promoted, by " + promoted.By
		}
		if err != nil {
			continue
		}
		for _, n := range nodes {
			if n.Up && n.ClusterStatus == "Primary" {
				lastPrimary = time.Now()
				if n.ClusterSize != expected && n.ClusterSize > 0 {
					sctx, scancel := context.WithTimeout(ctx, 2*time.Second)
					if store.SetClusterSize(sctx, discovery.ClusterSize{Size: n.ClusterSize, At: time.Now().UTC()}) == nil {
						expected, seen = n.ClusterSize, nil
					}
					scancel()
				}
				if n.ClusterSize == expected && !slices.Contains(seen, n.Name) {
					seen = append(seen, n.Name)
				}
			}
		}
		if c, changed := lifecycle.ObserveComponent(nodes, last, cfg.ID, time.Now()); changed {
			sctx, scancel := context.WithTimeout(ctx, 2*time.Second)
			if err := store.SetLastComponent(sctx, c); err == nil {
				last = &c
				log.Info("last Primary component recorded", "members", c.Members, "names", c.Names)
			} else {
				log.Warn("recording the Primary component's members failed", "err", err)
			}
			scancel()
		}
		members, size := seen, expected
		if last != nil {
			// Galera's own list, resolved against the agents registered
			// now.
			members, size = lifecycle.ComponentNames(last, nodes), len(last.Members)
		}
		plan := lifecycle.PlanRecovery(lifecycle.RecoveryInput{Nodes: nodes, Actions: acts, Expected: size, LastPrimary: members,
			DownFor: time.Since(lastPrimary), Grace: cfg.RecoveryGrace, Controller: cfg.ID, Now: time.Now(),
			Outage: strconv.FormatInt(lastPrimary.Unix(), 10), Held: held, Force: force})
		for _, a := range plan.Actions {
			pctx, pcancel := context.WithTimeout(ctx, 2*time.Second)
			err := lead.PublishAction(pctx, a)
			pcancel()
			if err != nil {
				log.Warn("publishing a recovery action failed", "err", err)
			}
		}
		dctx, dcancel := context.WithTimeout(ctx, 2*time.Second)
		if plan.Status != said && plan.Status != "" {
			log.Warn("cluster recovery", "status", plan.Status, "blocked", plan.Blocked)
			p.RecordRecovery(plan.Status)
			if store.PublishRecoveryStatus(dctx, discovery.RecoveryStatus{Status: plan.Status, Blocked: plan.Blocked,
				Controller: cfg.ID, At: time.Now().UTC()}) == nil {
				said = plan.Status
			}
		}
		if plan.Done {
			_ = store.ClearActions(dctx)
		}
		if plan.ClearForce {
			_ = store.ClearForce(dctx)
		}
		dcancel()
	}
}
