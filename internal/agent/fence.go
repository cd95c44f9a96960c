package agent

import (
	"context"
	"slices"
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
// account with the privilege: root over the node's socket). CanSetReadOnly,
// if the Executor has it, says whether it is configured to.
type ReadOnlySetter interface {
	SetReadOnly(ctx context.Context, node string, on bool) error
}

// FenceInput is what decides a node's read_only during a promotion.
type FenceInput struct {
	// Fenced: a promotion is recorded, not being lifted, and carried out
	// by every proxy.
	Fenced bool
	// ReadOnly is the node's @@read_only now.
	ReadOnly bool
	// Ours: the agent's mark (discovery.FenceMark) says it set read_only
	// for the fence. The mark is written before read_only is set and
	// removed after it is cleared, and it outlives the agent: read_only
	// without the mark is the operator's.
	Ours bool
}

// FenceAction is what the agent does to its node's read_only.
type FenceAction int

const (
	FenceKeep FenceAction = iota
	FenceSet
	FenceClear
)

// FenceStep decides the agent's action and whether read_only is then the
// fence's (ours):
//   - fenced and writable: set read_only;
//   - fenced and read-only: keep it (the fence's if marked, otherwise the
//     operator's, which the fence neither takes over nor lifts);
//   - not fenced, read-only for the fence: clear it;
//   - otherwise leave it.
func FenceStep(in FenceInput) (act FenceAction, ours bool) {
	switch {
	case in.Fenced && !in.ReadOnly:
		return FenceSet, true
	case in.Fenced:
		return FenceKeep, in.Ours
	case in.ReadOnly && in.Ours:
		return FenceClear, false
	}
	return FenceKeep, false
}

// fenceState is the agent's side of the fence.
type fenceState struct {
	// known: the promotion record and the agent's mark were read; before
	// that the agent does nothing.
	known, fenced bool
	// ours: the agent's mark is set (FenceInput.Ours).
	ours bool
	// said is the last Fence published, kept while read_only is unknown.
	said string
}

// fenceFallback: when no controller carries the fence out (no proxy runs:
// the decision does not move), the nodes are made read-only this long
// after the agent saw the promotion. A controller that is fencing is
// always waited for.
const fenceFallback = 15 * time.Second

// watchFence follows the promotion record and the writer decision, and
// has the node checked at once on every change. The node is made
// read-only once every proxy has carried out the fence (the controller
// names no writer and is no longer fencing), so that a transaction the
// proxies let finish on the old writer is not failed by read_only.
func (a *Agent) watchFence(ctx context.Context) {
	ours, ok := a.readFenceMark(ctx)
	if !ok {
		return
	}
	proms, decisions := a.store.WatchPromotion(ctx), a.store.WatchWriter(ctx)
	var (
		pr                     *discovery.Promotion
		read, fencing, settled bool
		seen                   time.Time // when this agent first saw pr (monotonic)
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
			switch {
			case pr == nil || pr.Lifting:
				seen = time.Time{}
			case seen.IsZero():
				seen = time.Now()
				fallback.Reset(fenceFallback)
			}
		case u, ok := <-decisions:
			if !ok {
				return
			}
			fencing = u.Present && u.Decision.Fencing
			settled = u.Present && u.Decision.Writer == "" && !u.Decision.Fencing
		case <-fallback.C:
		}
		if !read {
			continue // the record not read yet: nothing is known
		}
		fenced := pr != nil && !pr.Lifting &&
			(settled || !fencing && !seen.IsZero() && time.Since(seen) >= fenceFallback)
		a.mu.Lock()
		if !a.fence.known {
			a.fence.ours = ours
		}
		a.fence.known, a.fence.fenced = true, fenced
		a.mu.Unlock()
		select {
		case a.kick <- struct{}{}:
		default:
		}
	}
}

// readFenceMark reads whether this node's mark is set, again every second
// until it can (false: ctx ended).
func (a *Agent) readFenceMark(ctx context.Context) (ours, ok bool) {
	for {
		rctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		marked, err := a.store.FenceMarked(rctx)
		cancel()
		if err == nil {
			return slices.Contains(marked, a.cfg.Node), true
		}
		select {
		case <-ctx.Done():
			return false, false
		case <-time.After(time.Second):
		}
	}
}

// canSetReadOnly says whether the agent's executor sets read_only.
func (a *Agent) canSetReadOnly() (ReadOnlySetter, bool) {
	setter, ok := a.cfg.Executor.(ReadOnlySetter)
	if c, can := a.cfg.Executor.(interface{ CanSetReadOnly() bool }); ok && can {
		ok = c.CanSetReadOnly()
	}
	return setter, ok
}

// applyFence carries out FenceStep on the node just checked (f; readOnly:
// its read_only was read) and says in f what holds: Fence is FenceHeld
// while the node is read-only for the fence, otherwise why it is not.
func (a *Agent) applyFence(ctx context.Context, f *discovery.NodeFacts, readOnly bool) {
	a.mu.Lock()
	st := a.fence
	a.mu.Unlock()
	if !st.known || !f.Up || !readOnly {
		if st.known && f.Up {
			f.Fence = st.said // read_only unknown this time: as last said
		}
		return
	}
	if !st.fenced && !st.ours {
		return
	}
	setter, can := a.canSetReadOnly()
	if !can {
		f.Fence = ""
		if st.fenced && !f.ReadOnly {
			f.Fence = "not read-only: this agent cannot set read_only (run it with --manage systemd, or set read_only on the node yourself)"
		}
		a.saveFence(st, f)
		return
	}
	act, ours := FenceStep(FenceInput{Fenced: st.fenced, ReadOnly: f.ReadOnly, Ours: st.ours})
	sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	var err error
	switch act {
	case FenceSet:
		// The mark first: read_only without it is the operator's.
		if err = a.store.SetFenceMark(sctx, a.cfg.Node, true); err == nil {
			st.ours = true
			err = setter.SetReadOnly(sctx, a.cfg.Node, true)
		}
	case FenceClear:
		err = setter.SetReadOnly(sctx, a.cfg.Node, false)
	}
	switch {
	case err != nil && act == FenceSet:
		f.Fence = "not read-only: " + err.Error()
		a.log.Warn("fence: set read_only", "node", a.cfg.Node, "err", err)
	case err != nil:
		f.Fence = discovery.FenceHeld + " (could not lift it: " + err.Error() + ")"
		a.log.Warn("fence: clear read_only", "node", a.cfg.Node, "err", err)
	default:
		switch act {
		case FenceSet:
			f.ReadOnly = true
			a.log.Warn("fence: the node is read-only while a replica's promotion fences the cluster", "node", a.cfg.Node)
		case FenceClear:
			f.ReadOnly = false
			a.log.Info("fence lifted: read_only is off again", "node", a.cfg.Node)
		}
		if !ours && st.ours {
			// Cleared (or never the fence's): the mark goes, after.
			if err := a.store.SetFenceMark(sctx, a.cfg.Node, false); err != nil {
				ours = true // tried again at the next check
				a.log.Warn("fence: remove the mark", "node", a.cfg.Node, "err", err)
			}
		}
		st.ours = ours
		switch {
		case ours && f.ReadOnly:
			f.Fence = discovery.FenceHeld
		case st.fenced && f.ReadOnly:
			f.Fence = "read-only already (the operator's setting, kept after the fence)"
		}
	}
	a.saveFence(st, f)
}

// saveFence keeps st and f's fence with the agent's facts.
func (a *Agent) saveFence(st fenceState, f *discovery.NodeFacts) {
	a.mu.Lock()
	a.fence.ours, a.fence.said = st.ours, f.Fence
	a.facts.ReadOnly, a.facts.Fence = f.ReadOnly, f.Fence
	a.mu.Unlock()
}
