package controller

import (
	"context"
	"log/slog"
	"slices"
	"strconv"
	"strings"
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
	// members are the nodes seen Primary at the current expected size
	// (nil until one is: a controller elected during an outage).
	var members []string
	// The size the last controller saw: a controller elected during an
	// outage must still know how many nodes the cluster had.
	for expected == 0 && ctx.Err() == nil {
		rctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		n, err := store.ReadClusterSize(rctx)
		cancel()
		if err == nil {
			expected = max(n, 1)
			break
		}
		select {
		case <-ctx.Done():
		case <-t.C:
		}
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
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
		cancel()
		held := ""
		if hold != nil {
			held = hold.Reason + ", by " + hold.By
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
						expected, members = n.ClusterSize, nil
					}
					scancel()
				}
				if n.ClusterSize == expected {
					if names, ok := componentMembers(nodes, n.Members, expected); ok {
						// Galera's own list: no member is missed because
						// its agent was not seen reporting in time.
						members = names
					} else if !slices.Contains(members, n.Name) {
						members = append(members, n.Name)
					}
				}
			}
		}
		plan := lifecycle.PlanRecovery(lifecycle.RecoveryInput{Nodes: nodes, Actions: acts, Expected: expected, LastPrimary: members,
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

// componentMembers maps the client addresses Galera lists for a Primary
// component (wsrep_incoming_addresses) to the registered nodes' names.
// ok is false unless there are size of them and every one is a
// registered node.
func componentMembers(nodes []discovery.NodeFacts, addrs []string, size int) (names []string, ok bool) {
	if len(addrs) != size || size == 0 {
		return nil, false
	}
	byAddr := make(map[string]string, len(nodes))
	for _, n := range nodes {
		byAddr[n.Address] = n.Name
	}
	for _, a := range addrs {
		name, known := byAddr[strings.TrimSpace(a)]
		if !known {
			return nil, false
		}
		names = append(names, name)
	}
	slices.Sort(names)
	return names, true
}
