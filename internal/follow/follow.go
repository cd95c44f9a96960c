// Package follow is the per-proxy writer decision: which node this proxy
// sends writes to, with which epoch, and why.
//
// A proxy under a controller takes the controller's published decision
// and never its own policy, unless the control plane is unreachable
// (degraded): then it keeps the last published writer while that node is
// healthy here and otherwise applies the same deterministic policy alone.
// Whoever decides alone (a proxy without a controller too) never moves
// writes off a writer it cannot reach while a node of the Primary
// component still counts that writer as a member (another proxy may be
// writing there): writes wait instead (holdAlone).
// When etcd answers again it keeps what it chose alone (stale) until the
// controller publishes a newer decision, so that writes do not stop for
// an old one. A proxy without a controller applies the policy itself:
// galera.ChooseWriterInSites over its monitor's view, with an operator's
// switchover target first.
//
// Step is pure, in the style of controller.Step: the proxy feeds it every
// input (a published decision, degraded mode, a preference, the nodes'
// health, the clock) and carries out what it returns — the writer and
// epoch handed to the routing view in one call, a time to look again,
// and lines for the events log.
package follow

import (
	"fmt"
	"time"

	"github.com/galeon-db/galeon/internal/eventlog"
	"github.com/galeon-db/galeon/internal/galera"
)

// Decision is a writer decision published by the cluster's controller.
type Decision struct {
	// Writer takes the writes ("" while fencing or when no node
	// qualifies); Epoch numbers the decision.
	Writer string
	Epoch  uint64
	// Fencing: the previous writer must take no more writes; Next is the
	// node intended to follow it.
	Fencing bool
	Next    string
	// OldFailed: the controller saw the fenced writer failed (a
	// failover: nothing there is waited for).
	OldFailed  bool
	Controller string
	Reason     string
	// Fenced: the cluster has no writer at all (a replica was promoted
	// in its place): kept even while the control plane is unreachable.
	Fenced string
}

// State is what the decision remembers between inputs.
type State struct {
	// Following: the proxy takes its writer from a controller.
	Following bool
	// Have: a decision arrived; Decision is the latest, Rev its store
	// revision (an older revision read late is ignored).
	Have     bool
	Decision Decision
	Rev      int64
	// Degraded: the control plane is unreachable; the proxy decides alone.
	Degraded bool
	// Stale: the control plane answers again, but the proxy keeps the
	// writer it chose alone until a decision newer than StaleBelow
	// arrives (or the published writer is the one it routes to).
	Stale      bool
	StaleBelow uint64
	// Applied is the epoch of the last published decision carried out:
	// the proxy wrote to no other node since (see Applied).
	Applied uint64
	// Preferred is an operator's switchover target, until it is writer.
	Preferred string
	// Held is the writer this proxy, deciding alone, keeps writes
	// waiting for: out of its reach, but still counted in the Primary
	// component by a node it reaches (see holdAlone).
	Held string
}

// Kind says what happened.
type Kind int

const (
	// Reconsider: the nodes' health, weights or the clock changed.
	Reconsider Kind = iota
	// Follow: the proxy joins a control plane and follows its controller.
	Follow
	// Publish: a decision was read (Input.Decision, Input.Rev).
	Publish
	// Degrade: the control plane became unreachable (Input.On) or
	// answers again.
	Degrade
	// Prefer: an operator asks for Input.Node as the writer.
	Prefer
	// Committed: the view finished a switch; the writer is Input.Current.
	Committed
)

// Settings are the proxy's own writer policy settings.
type Settings struct {
	Failback galera.Failback
	Sites    galera.SitePolicy
}

// Input is one event with everything the decision reads.
type Input struct {
	Kind Kind
	Now  time.Time
	// Nodes are the servers as the proxy's monitor sees them.
	Nodes []galera.Candidate
	// Current is the view's writer ("" for none; the old writer while a
	// switch waits for its fence); Switching says a switch waits.
	Current   string
	Switching bool
	Settings  Settings
	// Decision and Rev, for Publish.
	Decision Decision
	Rev      int64
	// On and Why, for Degrade.
	On  bool
	Why string
	// Node, for Prefer.
	Node string
}

// Note is a line for the proxy's events log.
type Note struct{ Kind, Node, Detail string }

// The kinds of Note: the events log's.
const (
	NoteDecision = eventlog.Decision
	NoteDegraded = eventlog.Degraded
)

// Output is what the proxy carries out.
type Output struct {
	// Writer is the node writes should go to ("" for none), Epoch its
	// number: the published decision's, or 0 for the view to count on.
	Writer string
	Epoch  uint64
	// Recheck > 0: decide again after it (a site hold-down runs).
	Recheck time.Duration
	// Reason says in one sentence why Writer.
	Reason string
	// Notes are the events of this step.
	Notes []Note
}

// Step applies one input and returns the new state and the writer.
func Step(s State, in Input) (State, Output) {
	// What the view shows now carries out the decision held so far.
	s.Applied = Applied(s, in.Current, in.Switching)
	var out Output
	switch in.Kind {
	case Follow:
		s.Following = true
	case Publish:
		if in.Rev < s.Rev || s.Have && s.Decision == in.Decision {
			break // older than what was applied, or the same
		}
		d := in.Decision
		s.Have, s.Decision, s.Rev = true, d, in.Rev
		if s.Stale && d.Epoch > s.StaleBelow {
			s.Stale = false
		}
		detail := fmt.Sprintf("controller %s: writer %s, epoch %d", d.Controller, OrNone(d.Writer), d.Epoch)
		if d.Fencing {
			detail = fmt.Sprintf("controller %s: fence the writer before %s takes over, epoch %d", d.Controller, OrNone(d.Next), d.Epoch)
		}
		if d.Reason != "" {
			detail += " (" + d.Reason + ")"
		}
		out.Notes = append(out.Notes, Note{NoteDecision, d.Writer, detail})
	case Degrade:
		if s.Degraded == in.On {
			break
		}
		s.Degraded = in.On
		if in.On {
			out.Notes = append(out.Notes, Note{NoteDegraded, "", "control plane unreachable (" + in.Why + "): keeping the last published writer while it is healthy; deciding alone if it fails"})
		} else {
			s.Rev, s.Held = 0, "" // the store may have been rebuilt: take what it says now
			s.Stale, s.StaleBelow = true, s.Decision.Epoch
			out.Notes = append(out.Notes, Note{NoteDegraded, "", "control plane reachable again: keeping the current writer until the controller's next decision, then following it"})
		}
	case Prefer:
		s.Preferred = in.Node
	case Committed:
		if s.Preferred == in.Current {
			s.Preferred = ""
		}
	}
	s, out.Writer, out.Epoch, out.Recheck, out.Reason = choose(s, in)
	if s.Preferred != "" && !fit(in.Nodes, s.Preferred) {
		// A switchover target is one-shot: once it cannot take the
		// role it is superseded by the policy's choice, and forgotten
		// (it must never pull the writer back later).
		out.Notes = append(out.Notes, Note{NoteDecision, s.Preferred, "operator switchover to " + s.Preferred + " superseded: it is not fit now"})
		s.Preferred = ""
	}
	return s, out
}

// choose is the writer for the state and input.
func choose(s State, in Input) (State, string, uint64, time.Duration, string) {
	if !s.Following {
		if s, why, held := holdAlone(s, in, "deciding alone"); held {
			return s, "", 0, 0, why
		}
		w, recheck, why := policy(s, resume(&s, in))
		return s, w, 0, recheck, why
	}
	d := s.Decision
	if s.Stale && (in.Current == "" || s.Have && !d.Fencing && in.Current == d.Writer) {
		s.Stale = false // nothing chosen alone to keep
	}
	if (s.Degraded || s.Stale) && s.Have && d.Fenced != "" && d.Writer == "" && !d.Fencing {
		// The last word was that this cluster takes no writes: deciding
		// alone must not give it a writer again.
		return s, "", d.Epoch, 0, "the control plane is unreachable, and its last decision fenced the cluster: " + d.Fenced
	}
	if s.Degraded || s.Stale {
		why := "the control plane is unreachable"
		if !s.Degraded {
			why = fmt.Sprintf("the control plane answers again, but has published nothing newer than epoch %d", s.StaleBelow)
		}
		if in.Current != "" && fit(in.Nodes, in.Current) {
			s.Held = ""
			return s, in.Current, 0, 0, fmt.Sprintf("%s: keeping %s, healthy here", why, in.Current)
		}
		if s, hwhy, held := holdAlone(s, in, why); held {
			return s, "", 0, 0, hwhy
		}
		w, recheck, pwhy := policy(s, resume(&s, in))
		return s, w, 0, recheck, why + ": deciding alone, " + pwhy
	}
	if !s.Have {
		return s, "", 0, 0, "waiting for the controller's first decision"
	}
	if d.Fencing {
		return s, "", d.Epoch, 0, fmt.Sprintf("the controller fences the writer before %s takes over (epoch %d)", OrNone(d.Next), d.Epoch)
	}
	if d.Writer == "" {
		// The controller names nobody: no node can take the role, or
		// the cluster is fenced (a replica was promoted in its place).
		why := "the controller names no writer"
		if d.Reason != "" {
			why += ": " + d.Reason
		}
		return s, "", d.Epoch, 0, why
	}
	if !fit(in.Nodes, d.Writer) {
		if by := heldBy(in.Nodes, d.Writer); by != "" {
			return s, "", d.Epoch, 0, fmt.Sprintf("the controller's writer %s is out of reach from this proxy, but %s still counts it in the Primary component "+
				"(a network cut between this proxy and %s): writes wait for the cut to heal or the controller's next decision", d.Writer, by, d.Writer)
		}
		return s, "", d.Epoch, 0, fmt.Sprintf("the controller's writer %s is not fit here: writes wait for its next decision", OrNone(d.Writer))
	}
	return s, d.Writer, d.Epoch, 0, fmt.Sprintf("the controller's decision, epoch %d", d.Epoch)
}

// policy is the proxy's own choice: an operator's target when it can
// take the role, otherwise galera.ChooseWriterInSites.
func policy(s State, in Input) (string, time.Duration, string) {
	w, recheck := Policy(in.Nodes, in.Current, s.Preferred, in.Settings, in.Now)
	switch {
	case w != "" && w == s.Preferred:
		return w, recheck, "operator switchover to " + w
	case w == "":
		return "", recheck, "no node can take writes (ONLINE, writable, writer_weight > 0)"
	case w == in.Current:
		return w, recheck, "policy keeps " + w
	}
	return w, recheck, "policy chooses " + w
}

// Policy is the writer policy alone (what a controller publishes): the
// operator's preferred node when it is fit, otherwise
// galera.ChooseWriterInSites; recheck > 0 asks for another look after a
// site hold-down.
func Policy(nodes []galera.Candidate, current, preferred string, p Settings, now time.Time) (string, time.Duration) {
	if preferred != "" && fit(nodes, preferred) {
		return preferred, 0
	}
	return galera.ChooseWriterInSites(nodes, current, p.Failback, p.Sites, now)
}

// holdAlone is the rule of deciding alone (no controller, or none
// reachable): never move writes off a writer that a node of the Primary
// component still counts as a member while this proxy cannot reach it
// over the network. It runs, and a proxy that reaches it (in another
// site, on another application host, or one that reaches etcd) may be
// writing there: a second writer inside one Primary component is what
// must never happen. Writes wait until Galera drops it (it failed: then
// the policy chooses) or it is reachable again. An operator's switchover
// to a fit node is not held. why says who decides.
func holdAlone(s State, in Input, why string) (State, string, bool) {
	if in.Current != "" && fit(in.Nodes, in.Current) || s.Preferred != "" && fit(in.Nodes, s.Preferred) {
		return s, "", false
	}
	held := heldWriter(s, in)
	by := heldBy(in.Nodes, held)
	if held == "" || by == "" {
		return s, "", false
	}
	s.Held = held
	return s, fmt.Sprintf("%s: the writer %s is out of reach here, but %s still counts it in the Primary component: "+
		"writes wait rather than go to a second node (a proxy that reaches %s may be writing there)", why, held, by, held), true
}

// resume is the input of the policy once nothing holds writes: the
// writer held stays the current one (sticky, as if writes had never
// stopped), so that a proxy whose writer is reachable again takes it
// back rather than a better node the others do not use. The hold is
// remembered until the policy names a writer: a moment when no node
// vouches for the held writer (a blip of the Primary component during a
// cut) must not make the proxy forget it and choose another later (a
// site hold-down ending).
func resume(s *State, in Input) Input {
	if in.Current == "" && s.Held != "" {
		in.Current = s.Held
		if w, _ := Policy(in.Nodes, in.Current, s.Preferred, in.Settings, in.Now); w != "" {
			s.Held = ""
		}
		return in
	}
	s.Held = ""
	return in
}

// heldWriter is the writer a proxy deciding alone answers for: the one
// its view routes to, the one it already keeps writes waiting for, or
// the last published one.
func heldWriter(s State, in Input) string {
	switch {
	case in.Current != "":
		return in.Current
	case s.Held != "":
		return s.Held
	case s.Have && !s.Decision.Fencing:
		return s.Decision.Writer
	}
	return ""
}

// heldBy is the node that counts name in the Primary component while
// this proxy cannot reach name ("" for none: see galera.Candidate).
func heldBy(nodes []galera.Candidate, name string) string {
	for _, c := range nodes {
		if c.Name == name {
			return c.HeldBy
		}
	}
	return ""
}

// fit says whether name can take writes here (galera.Candidate.Eligible).
func fit(nodes []galera.Candidate, name string) bool {
	for _, c := range nodes {
		if c.Name == name {
			return c.Eligible()
		}
	}
	return false
}

// Applied is the epoch of the last published decision the proxy has
// carried out, given what its view routes to: it writes to no node other
// than that decision's writer. The controller waits for every proxy's
// Applied before it ends a fence.
func Applied(s State, writer string, switching bool) uint64 {
	if !s.Have || s.Degraded || s.Stale || switching {
		return s.Applied
	}
	if writer == "" || (!s.Decision.Fencing && writer == s.Decision.Writer) {
		return max(s.Applied, s.Decision.Epoch)
	}
	return s.Applied
}

// OrNone names a node, or says there is none.
func OrNone(node string) string {
	if node == "" {
		return "(none)"
	}
	return node
}
