package agent

import (
	"context"
	"time"

	"github.com/galeon-db/galeon/internal/discovery"
)

// While a replica's promotion fences the cluster (galeon replica
// promote), proxies write nowhere in it; the agents also make their nodes
// read-only (@@read_only), so that clients connected straight to a node
// cannot write either, and a node of the old cluster that comes back
// while the fence holds does not take writes. Galera's appliers ignore
// read_only, so the nodes go on applying what the others replicate, and
// a transaction a client began before the fence cannot commit after it
// (1290). Accounts with READ_ONLY ADMIN (SUPER) are not held back.

// ReadOnlySetter is an Executor that can set its node's @@read_only (an
// account with the privilege: root over the node's socket).
type ReadOnlySetter interface {
	SetReadOnly(ctx context.Context, node string, on bool) error
}

// FenceInput is what decides a node's read_only during a promotion.
type FenceInput struct {
	// Fenced: a promotion is recorded and not being lifted.
	Fenced bool
	// ReadOnly is the node's @@read_only now.
	ReadOnly bool
	// Ours: the agent set it for the fence and has not cleared it.
	Ours bool
	// OperatorReadOnly: the agent saw the node read-only while no
	// promotion was recorded — the operator's setting, which the fence
	// neither takes over nor lifts.
	OperatorReadOnly bool
}

// FenceAction is what the agent does to its node's read_only.
type FenceAction int

const (
	FenceKeep FenceAction = iota
	FenceSet
	FenceClear
)

// FenceStep decides the agent's action and whether the node's read_only
// is then the fence's (ours):
//   - fenced and writable: set read_only;
//   - fenced and read-only: keep it; it is the fence's unless the operator
//     had set it before (an agent that restarted during the fence did not
//     see the node before it, and takes it as the fence's);
//   - not fenced, read-only for the fence: clear it;
//   - otherwise leave it.
func FenceStep(in FenceInput) (act FenceAction, ours bool) {
	switch {
	case in.Fenced && !in.ReadOnly:
		return FenceSet, true
	case in.Fenced:
		return FenceKeep, in.Ours || !in.OperatorReadOnly
	case in.ReadOnly && in.Ours:
		return FenceClear, false
	}
	return FenceKeep, false
}

// fenceState is the agent's side of the fence.
type fenceState struct {
	// known: the promotion record was read at least once; before that
	// the agent does nothing (it cannot tell the operator's read_only
	// from the fence's).
	known, fenced bool
	// ours, operator: see FenceInput.
	ours, operator bool
}

// fenceFallback: without a controller that settles the fence (no proxy
// runs), the nodes are made read-only this long after the promotion —
// past the default drain_grace.
const fenceFallback = 15 * time.Second

// watchFence follows the promotion record and the writer decision, and
// has the node checked at once on every change. The nodes are made
// read-only once every proxy has carried out the fence (the controller
// names no writer and is not fencing): a transaction the proxies let
// finish on the old writer is not failed by read_only.
func (a *Agent) watchFence(ctx context.Context) {
	proms, decisions := a.store.WatchPromotion(ctx), a.store.WatchWriter(ctx)
	var (
		pr            *discovery.Promotion
		read, settled bool
	)
	fallback := time.NewTimer(time.Hour)
	defer fallback.Stop()
	for {
		select {
		case p, ok := <-proms:
			if !ok {
				return
			}
			pr, read = p, true
			if pr != nil && !pr.Lifting {
				fallback.Reset(max(time.Until(pr.At.Add(fenceFallback)), 0))
			}
		case u, ok := <-decisions:
			if !ok {
				return
			}
			settled = u.Present && u.Decision.Writer == "" && !u.Decision.Fencing
		case <-fallback.C:
		}
		if !read {
			continue // the record not read yet: nothing is known
		}
		fenced := pr != nil && !pr.Lifting && (settled || time.Since(pr.At) >= fenceFallback)
		a.mu.Lock()
		a.fence.known, a.fence.fenced = true, fenced
		if pr == nil && !a.fence.ours {
			a.fence.operator = a.facts.ReadOnly
		}
		a.mu.Unlock()
		select {
		case a.kick <- struct{}{}:
		default:
		}
	}
}

// applyFence carries out FenceStep on the node just checked (f) and says
// in f what holds: Fence is "read-only" while the node is read-only for
// the fence, or why it is not.
func (a *Agent) applyFence(ctx context.Context, f *discovery.NodeFacts) {
	setter, ok := a.cfg.Executor.(ReadOnlySetter)
	a.mu.Lock()
	st := a.fence
	a.mu.Unlock()
	if !st.known || !f.Up {
		return
	}
	if !st.fenced && !st.ours {
		a.mu.Lock()
		if a.fence.known && !a.fence.fenced {
			a.fence.operator = f.ReadOnly
		}
		a.mu.Unlock()
		return
	}
	if !ok {
		f.Fence = "not read-only: this agent cannot set read_only (run it with --manage, or set read_only on the node yourself)"
		return
	}
	act, ours := FenceStep(FenceInput{Fenced: st.fenced, ReadOnly: f.ReadOnly, Ours: st.ours, OperatorReadOnly: st.operator})
	var err error
	if act != FenceKeep {
		sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		err = setter.SetReadOnly(sctx, a.cfg.Node, act == FenceSet)
		cancel()
	}
	switch {
	case err != nil && act == FenceSet:
		ours = false
		f.Fence = "not read-only: " + err.Error()
		a.log.Warn("fence: set read_only", "node", a.cfg.Node, "err", err)
	case err != nil:
		ours = true
		f.Fence = discovery.FenceHeld + " (could not lift it: " + err.Error() + ")"
		a.log.Warn("fence: clear read_only", "node", a.cfg.Node, "err", err)
	case act == FenceSet:
		f.ReadOnly, f.Fence = true, discovery.FenceHeld
		a.log.Warn("fence: the node is read-only while a replica's promotion fences the cluster", "node", a.cfg.Node)
	case act == FenceClear:
		f.ReadOnly = false
		a.log.Info("fence lifted: read_only is off again", "node", a.cfg.Node)
	case ours:
		f.Fence = discovery.FenceHeld
	case st.fenced:
		f.Fence = "read-only already (the operator's setting, kept after the fence)"
	}
	a.mu.Lock()
	a.fence.ours = ours
	a.facts.ReadOnly, a.facts.Fence = f.ReadOnly, f.Fence
	a.mu.Unlock()
}
