package lifecycle

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/galeon-db/galeon/internal/discovery"
	"github.com/galeon-db/galeon/internal/galera"
)

// RecoveryInput is what the controller knows when a cluster may have lost
// every node.
type RecoveryInput struct {
	// Nodes are the registered nodes, as their agents report them.
	Nodes []discovery.NodeFacts
	// Actions are the actions published so far, by node.
	Actions map[string]discovery.Action
	// Expected is the cluster's size when it last had a Primary
	// component (0: unknown, the registered nodes are all there is).
	Expected int
	// LastPrimary names the nodes seen in that Primary component (nil:
	// not known, e.g. to a controller elected during the outage). A
	// registered node that was not in it (it crashed earlier) does not
	// stand in for a member that is missing: the missing one may hold
	// the last transactions.
	LastPrimary []string
	// DownFor is how long no node has been in a Primary component; Grace
	// is how long to wait before recovering (a restart by hand must not
	// race an automatic one).
	DownFor, Grace time.Duration
	Controller     string
	Now            time.Time
	// Outage names the current loss of the Primary component (its
	// start), so that each outage asks for positions once.
	Outage string
	// Held: an operator stopped the cluster on purpose (galeon cluster
	// stop); it is not brought back until the hold is cleared.
	Held string
	// Force: an operator ordered recovery from one node (galeon cluster
	// recover --force NODE); it overrides the proofs and the hold.
	Force *discovery.Force
}

// RecoveryPlan is what to do now: actions to publish, and a status line
// for operators (events) — Blocked when only an operator can go on.
type RecoveryPlan struct {
	Actions []discovery.Action
	Status  string
	Blocked bool
	// Done: a recovery finished (every node back in the Primary
	// component): its actions can be removed.
	Done bool
	// ClearForce: the operator's order was carried out or cannot be:
	// remove it.
	ClearForce bool
}

// PlanRecovery decides how to bring back a cluster that lost every node.
// It is a pure function of its input:
//
//   - While some node is in a Primary component there is nothing to
//     recover; during a recovery, the stopped nodes are then asked to join
//     one at a time (NextJoiner), so that only the first is served by the
//     bootstrapped node — the writer — and the others by a node that is
//     not (galera.ChooseDonors never offers the writer while another node
//     can serve).
//   - With no Primary component, it waits until every node is known
//     stopped and has reported its position (grastate.dat, or
//     --wsrep-recover after a crash), and until Grace has passed; then it
//     bootstraps the most advanced node: highest seqno, then the one
//     Galera marked safe_to_bootstrap, then by name. One recovery ID per
//     position, so that two controllers can never start two bootstraps.
//   - Nodes that still run without a Primary component (they lost quorum
//     when the others died) count with the position they report: when
//     one of them is the most advanced (on a tie, it is preferred: no
//     restart) it is promoted in place with pc.bootstrap=YES, and the
//     other survivors merge into it by themselves.
//   - It refuses, with a status saying what to do, when it cannot prove
//     which node is most advanced: a node of the cluster has not
//     reported, nodes disagree on the cluster UUID, or every node runs
//     without a Primary component (a partition, which Galera heals
//     itself when the nodes see each other again; a promotion there
//     could split the cluster).
//   - An operator's Force overrides all of that: the named node is
//     bootstrapped (or promoted, if it runs) at once.
func PlanRecovery(in RecoveryInput) RecoveryPlan {
	byName := map[string]discovery.NodeFacts{}
	var names []string
	for _, n := range in.Nodes {
		byName[n.Name] = n
		names = append(names, n.Name)
	}
	sort.Strings(names)
	// The current recovery is the latest bootstrap or promotion published
	// (an older one, failed or overtaken by an operator's order, may
	// still be stored for another node); ties by ID, for a stable order.
	recovery, booted := "", ""
	var recoveryAt time.Time
	for node, a := range in.Actions {
		if (a.Kind == discovery.ActionBootstrap || a.Kind == discovery.ActionPromote) &&
			(recovery == "" || a.At.After(recoveryAt) || a.At.Equal(recoveryAt) && a.ID > recovery) {
			recovery, booted, recoveryAt = a.ID, node, a.At
		}
	}
	primary := false
	for _, n := range in.Nodes {
		if n.Up && n.ClusterStatus == "Primary" {
			primary = true
		}
	}
	if primary {
		if recovery == "" || !byName[booted].Up {
			if in.Force != nil {
				return RecoveryPlan{ClearForce: true, Status: fmt.Sprintf("a Primary component exists: the order to recover from %s is not needed and was cleared", in.Force.Node)}
			}
			return RecoveryPlan{}
		}
		plan := RecoveryPlan{ClearForce: in.Force != nil}
		// A node an operator stopped (a hold) stays stopped.
		if in.Held == "" {
			if next, why := NextJoiner(in.Nodes, in.Actions, recovery, booted); next != "" {
				plan.Actions = append(plan.Actions, action(in, recovery, discovery.ActionJoin, next,
					fmt.Sprintf("%s is up again (bootstrapped): rejoin it", booted)))
				plan.Status = fmt.Sprintf("recovery %s: %s asked to rejoin", recovery, next)
			} else if why != "" {
				plan.Status = fmt.Sprintf("recovery %s: %s", recovery, why)
			}
		}
		all := true
		for _, n := range in.Nodes {
			all = all && n.Up && n.ClusterStatus == "Primary"
		}
		if all {
			plan.Done, plan.Status = true, fmt.Sprintf("recovery %s complete: every node is back in the Primary component", recovery)
		}
		return plan
	}
	if len(in.Nodes) == 0 {
		return RecoveryPlan{}
	}
	if in.Force != nil {
		return forcedRecovery(in, byName)
	}
	if in.Held != "" {
		return RecoveryPlan{Status: "the cluster is stopped on purpose (" + in.Held + "): not recovered until `galeon cluster start`"}
	}
	var running, unknown, noPosition []string
	for _, name := range names {
		n := byName[name]
		switch {
		case n.Up:
			running = append(running, name)
		case !n.Stopped:
			unknown = append(unknown, name)
		case n.Position == nil:
			noPosition = append(noPosition, name)
		}
	}
	if recovery != "" && len(running) > 0 && byName[booted].Up {
		if st := byName[booted].Action; st != nil && st.ID == recovery && st.Done && st.Err == "" {
			// Nodes run again but none reports a Primary component yet
			// (a state transfer in progress): the recovery goes on.
			return RecoveryPlan{Status: fmt.Sprintf("recovery %s: waiting for the Primary component", recovery)}
		}
	}
	switch {
	case len(running) == len(names):
		return RecoveryPlan{Blocked: true, Status: fmt.Sprintf("no Primary component, but every node runs (%s): a network partition? Galera forms the Primary component again once the nodes see each other; if one side is gone for good: galeon cluster recover --force NODE", strings.Join(running, ", "))}
	case len(unknown) > 0:
		return RecoveryPlan{Status: fmt.Sprintf("no Primary component; waiting for the agents of %s to tell whether their node runs", strings.Join(unknown, ", "))}
	case in.Expected > len(in.Nodes):
		return RecoveryPlan{Blocked: true, Status: fmt.Sprintf("no Primary component and only %d of the cluster's %d nodes report%s: cannot prove which is most advanced; bring the missing agents back, or choose the node yourself: galeon cluster recover --force NODE", len(in.Nodes), in.Expected, missingMembers(in, byName))}
	case in.LastPrimary != nil && in.Expected > membersReporting(in):
		return RecoveryPlan{Blocked: true, Status: fmt.Sprintf("no Primary component and only %d of the %d nodes of the last Primary component (%s) report%s: cannot prove which is most advanced; bring the missing agents back, or choose the node yourself: galeon cluster recover --force NODE", membersReporting(in), in.Expected, strings.Join(in.LastPrimary, ", "), missingMembers(in, byName))}
	}
	if recovery != "" && byName[booted].Action != nil && byName[booted].Action.ID == recovery {
		st := byName[booted].Action
		if st.Err != "" {
			return RecoveryPlan{Blocked: true, Status: fmt.Sprintf("recovery %s: bootstrapping %s failed: %s", recovery, booted, st.Err)}
		}
		if !st.Done {
			return RecoveryPlan{Status: fmt.Sprintf("recovery %s: %s is bootstrapping", recovery, booted)}
		}
	}
	if len(noPosition) > 0 {
		// Crashed nodes: their agents recover the position from InnoDB
		// (mariadbd --wsrep-recover), asked only now that no node runs
		// in a Primary component.
		plan := RecoveryPlan{Status: fmt.Sprintf("no Primary component; recovering the positions of %s", strings.Join(noPosition, ", "))}
		first := "position-" + in.Outage
		for _, name := range noPosition {
			// A recovery that failed is tried once more, then left to
			// an operator, never waited for in silence.
			id := first
			if st := byName[name].Action; st != nil && st.Kind == discovery.ActionPosition && st.Done && st.Err != "" {
				switch st.ID {
				case first:
					id = first + "-again"
				case first + "-again":
					return RecoveryPlan{Blocked: true, Status: fmt.Sprintf("no Primary component, and %s's position could not be recovered twice: %s; fix it, or galeon cluster recover --force NODE", name, st.Err)}
				}
			}
			if in.Actions[name].ID != id {
				plan.Actions = append(plan.Actions, action(in, id, discovery.ActionPosition, name, "crashed (grastate.dat seqno -1): recover the position with --wsrep-recover"))
			}
		}
		return plan
	}
	position := func(name string) galera.Grastate {
		if n := byName[name]; n.Up {
			return galera.Grastate{UUID: n.StateUUID, Seqno: n.LastCommitted}
		}
		return *byName[name].Position
	}
	uuid := position(names[0]).UUID
	best := names[0]
	for _, name := range names {
		p, b := position(name), position(best)
		if p.UUID != uuid {
			return RecoveryPlan{Blocked: true, Status: fmt.Sprintf("no Primary component and the nodes disagree on the cluster (%s: %s, %s: %s): not recovered automatically", names[0], uuid, name, p.UUID)}
		}
		if p.Seqno != b.Seqno {
			if p.Seqno > b.Seqno {
				best = name
			}
			continue
		}
		// A tie: a running survivor (no restart), then the node Galera
		// marked safe to bootstrap.
		if byName[name].Up != byName[best].Up {
			if byName[name].Up {
				best = name
			}
		} else if p.SafeToBootstrap && !b.SafeToBootstrap {
			best = name
		}
	}
	seqno := position(best).Seqno
	kind, how := discovery.ActionBootstrap, "bootstrapping it"
	if byName[best].Up {
		kind, how = discovery.ActionPromote, "promoting it in place (pc.bootstrap=YES)"
	}
	what := "every node down"
	if len(running) > 0 {
		what = fmt.Sprintf("quorum lost (still running without a Primary component: %s)", strings.Join(running, ", "))
	}
	if in.DownFor < in.Grace {
		return RecoveryPlan{Status: fmt.Sprintf("no Primary component: %s; %s is the most advanced (seqno %d) and is recovered once the cluster has been down for %s", what, best, seqno, in.Grace)}
	}
	id := fmt.Sprintf("recover-%s-%d", uuid, seqno)
	if in.Actions[best].ID == id {
		if st := byName[best].Action; st != nil && st.ID == id && st.Done && !byName[best].Up {
			// Bootstrapped (or promoted), then down again before any
			// Primary component formed: do not loop; an operator looks.
			return RecoveryPlan{Blocked: true, Status: fmt.Sprintf("recovery %s: %s was recovered but is down again: see its error log, then galeon cluster recover --force NODE", id, best)}
		}
		return RecoveryPlan{Status: fmt.Sprintf("recovery %s: waiting for %s's agent", id, best)}
	}
	return RecoveryPlan{Status: fmt.Sprintf("recovery %s: %s, %s is the most advanced (seqno %d): %s", id, what, best, seqno, how),
		Actions: []discovery.Action{action(in, id, kind, best, fmt.Sprintf("most advanced of %d nodes (seqno %d)", len(names), seqno))}}
}

// NextJoiner chooses the stopped node to ask to rejoin now, during the
// recovery that bootstrapped (or promoted) booted; it is a pure function
// of the agents' facts and the published actions:
//
//   - one at a time: nobody while a node is on its way in — asked to
//     join in this recovery and neither Synced in the Primary component
//     nor failed, or running but not Synced (a state transfer, a node
//     started by hand) — so that the next joiner finds a Synced node
//     other than the writer to take its state from, and the writer is a
//     donor at most once, for the first joiner, when no other node can;
//   - the most advanced stopped node first (the shortest IST: the
//     writer's Donor/Desynced window is shortest), then by name;
//   - never a node asked before in this recovery (one whose join failed
//     is left to an operator, and said).
//
// why says what holds the others back ("" when nothing does).
func NextJoiner(nodes []discovery.NodeFacts, acts map[string]discovery.Action, recovery, booted string) (next, why string) {
	var waiting, failed, candidates []string
	seqno := map[string]int64{}
	for _, n := range nodes {
		if n.Name == booted {
			continue
		}
		in := n.Up && n.Synced && n.ClusterStatus == "Primary"
		asked := acts[n.Name].ID == recovery && acts[n.Name].Kind == discovery.ActionJoin
		st := n.Action
		fail := st != nil && st.ID == recovery && st.Kind == discovery.ActionJoin && st.Done && st.Err != ""
		switch {
		case in:
		case asked && fail && !n.Up:
			failed = append(failed, fmt.Sprintf("%s (%s)", n.Name, st.Err))
		case asked || n.Up:
			waiting = append(waiting, n.Name)
		case n.Stopped:
			candidates = append(candidates, n.Name)
			seqno[n.Name] = -1
			if n.Position != nil {
				seqno[n.Name] = n.Position.Seqno
			}
		}
	}
	sort.Strings(waiting)
	sort.Strings(failed)
	if len(failed) > 0 {
		why = "rejoining failed for " + strings.Join(failed, ", ") + ": see the node's error log, then start it by hand or through its agent"
	}
	if len(candidates) == 0 {
		return "", why
	}
	if len(waiting) > 0 {
		w := fmt.Sprintf("%s rejoining; %s wait(s) for it (one at a time, so that the writer is not their donor)", strings.Join(waiting, ", "), strings.Join(sortedCopy(candidates), ", "))
		if why != "" {
			w += "; " + why
		}
		return "", w
	}
	sort.Slice(candidates, func(i, j int) bool {
		a, b := candidates[i], candidates[j]
		if seqno[a] != seqno[b] {
			return seqno[a] > seqno[b]
		}
		return a < b
	})
	return candidates[0], why
}

func sortedCopy(s []string) []string {
	out := slices.Clone(s)
	sort.Strings(out)
	return out
}

// forcedRecovery carries out an operator's order to recover from one node.
func forcedRecovery(in RecoveryInput, byName map[string]discovery.NodeFacts) RecoveryPlan {
	f := in.Force
	n, ok := byName[f.Node]
	if !ok {
		return RecoveryPlan{Blocked: true, ClearForce: true, Status: fmt.Sprintf("cannot recover from %s as ordered: no agent reports that node", f.Node)}
	}
	id := fmt.Sprintf("force-%s-%d", f.Node, f.At.Unix())
	if in.Actions[f.Node].ID == id {
		if st := n.Action; st != nil && st.ID == id && st.Done && st.Err != "" {
			return RecoveryPlan{Blocked: true, ClearForce: true, Status: fmt.Sprintf("recovery %s: %s failed: %s", id, f.Node, st.Err)}
		}
		return RecoveryPlan{Status: fmt.Sprintf("recovery %s: waiting for %s's agent", id, f.Node)}
	}
	reason := "ordered by " + f.By
	switch {
	case n.Up:
		return RecoveryPlan{Status: fmt.Sprintf("recovery %s: %s; promoting %s in place (pc.bootstrap=YES)", id, reason, f.Node),
			Actions: []discovery.Action{action(in, id, discovery.ActionPromote, f.Node, reason)}}
	case n.Stopped:
		return RecoveryPlan{Status: fmt.Sprintf("recovery %s: %s; bootstrapping %s", id, reason, f.Node),
			Actions: []discovery.Action{action(in, id, discovery.ActionBootstrap, f.Node, reason)}}
	}
	return RecoveryPlan{Status: fmt.Sprintf("recovery %s: %s; waiting for %s's agent to tell whether the node runs", id, reason, f.Node)}
}

func action(in RecoveryInput, id, kind, node, reason string) discovery.Action {
	return discovery.Action{ID: id, Kind: kind, Node: node, Reason: reason, Controller: in.Controller, At: in.Now.UTC()}
}

// missingMembers names the members of the last Primary component that no
// agent reports (" (missing: node3)"), or "" when that is not known.
func missingMembers(in RecoveryInput, byName map[string]discovery.NodeFacts) string {
	var missing []string
	for _, name := range in.LastPrimary {
		if _, ok := byName[name]; !ok {
			missing = append(missing, name)
		}
	}
	if len(missing) == 0 {
		return ""
	}
	return " (missing: " + strings.Join(missing, ", ") + ")"
}

// membersReporting counts the registered nodes that were members of the
// last Primary component.
func membersReporting(in RecoveryInput) int {
	n := 0
	for _, f := range in.Nodes {
		if slices.Contains(in.LastPrimary, f.Name) {
			n++
		}
	}
	return n
}
