// Package controller makes one writer decision for all of a cluster's
// proxies. The proxies elect one of themselves through etcd (etcd's
// concurrency.Election: never a home-made election); the elected one
// applies the writer policy to its monitor's view and publishes
// {writer, epoch}, which every proxy, itself included, follows. A change
// of writer is published in two steps — fence the old writer, then name
// the new one once every live proxy has confirmed the fence — so that no
// two nodes take writes at once, whichever proxy a client goes through.
package controller

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/galeon-db/galeon/internal/discovery"
)

// Input is what the controller knows when it decides.
type Input struct {
	// Current is the published decision; Have is false before any.
	Current discovery.WriterDecision
	Have    bool
	// Want is the writer policy's choice over the controller's view,
	// given the current writer (or, while fencing, the intended one).
	Want string
	// Proxies are the live proxies' records.
	Proxies []discovery.ProxyFacts
	// FenceExpired: the current fence has waited its limit.
	FenceExpired bool
	// OldFailed: the controller's monitor sees the current writer (the
	// fenced one, while fencing) failed — unreachable or out of the
	// Primary component, not merely draining.
	OldFailed bool
	// Target is an operator's switchover target the controller has
	// accepted (see Answer); Want is then the policy's choice with it
	// preferred.
	Target     string
	Controller string
	Now        time.Time
	// Fenced is why the cluster must have no writer at all (a replica
	// was promoted in its place); Want is then "".
	Fenced string
}

// Step returns the decision to publish next, if any. It is a pure
// function of its input:
//
//   - While fencing, the new writer is named (under the fence's epoch)
//     once every live proxy has applied the fence — it writes to no node —
//     or, for a failover (OldFailed), can no longer write to the failed
//     node (fenced), or the fence has waited its limit (a proxy that
//     cannot confirm is cut off from etcd and its lease is about to
//     expire). A planned fence whose old writer fails meanwhile is
//     republished as a failover. A fence carries an operator's Target
//     until the writer is named, then drops it.
//   - Otherwise, when the policy wants another writer, a change from no
//     writer is published at once if no proxy writes anywhere else
//     (nothing to fence); any other change starts a fence. Epochs only grow, past any epoch a proxy
//     reports (a proxy that decided alone while etcd was unreachable
//     counted on locally).
func Step(in Input) (discovery.WriterDecision, bool) {
	cur := in.Current
	out := discovery.WriterDecision{Controller: in.Controller, At: in.Now.UTC(), Fenced: in.Fenced}
	if in.Have && cur.Fencing {
		if in.OldFailed && !cur.OldFailed {
			// A planned fence whose old writer failed meanwhile: say so,
			// so that proxies stop waiting for its transactions.
			out = cur
			out.OldFailed, out.At, out.Fenced = true, in.Now.UTC(), in.Fenced
			out.Controller = in.Controller
			out.Reason = fmt.Sprintf("%s failed during the fence: close what runs there at once", orNone(cur.Old))
			return out, true
		}
		var waiting []string
		for _, p := range in.Proxies {
			if !fenced(p, cur) {
				waiting = append(waiting, p.Name)
			}
		}
		if len(waiting) > 0 && !in.FenceExpired {
			return out, false
		}
		out.Writer, out.Epoch = in.Want, cur.Epoch
		out.Reason = fmt.Sprintf("%s fenced by all %d proxies", orNone(cur.Old), len(in.Proxies))
		if len(waiting) > 0 {
			out.Reason = fmt.Sprintf("%s fenced; fence confirmation timed out for %s", orNone(cur.Old), strings.Join(waiting, ", "))
		}
		if in.Fenced != "" {
			out.Reason += "; " + in.Fenced
		}
		switch {
		case cur.Target != "" && in.Want == cur.Target:
			out.Reason += "; operator switchover to " + cur.Target + " done"
		case cur.Target != "":
			out.Reason += fmt.Sprintf("; operator switchover to %s superseded: it is not fit now", cur.Target)
		}
		return out, true
	}
	strays := strayProxies(in.Proxies, cur)
	if in.Have && in.Want == cur.Writer && len(strays) == 0 || !in.Have && in.Want == "" {
		return out, false
	}
	if in.Have && in.Want == "" && len(strays) == 0 && in.Fenced == "" {
		// No node can take the role (a site hold-down runs, or nothing
		// is fit): a fence would name no one. Every proxy already stops
		// writing to the writer while it is unfit there (follow.Step),
		// and a writer that is fit again — after a blip of the Primary
		// component, say — simply goes on.
		return out, false
	}
	out.Epoch = cur.Epoch
	for _, p := range in.Proxies {
		out.Epoch = max(out.Epoch, p.Epoch, p.Applied)
	}
	out.Epoch++
	if (!in.Have || cur.Writer == "") && noneElsewhere(in.Proxies, in.Want) {
		// No proxy writes anywhere but to Want: nothing to fence.
		out.Writer = in.Want
		out.Reason = "no writer before"
		return out, true
	}
	if in.Want != "" && allOn(in.Proxies, in.Want) {
		// Every proxy already writes to Want alone (each failed over on
		// its own while etcd was unreachable): nobody writes to the old
		// writer, so there is nothing to fence.
		out.Writer = in.Want
		out.Reason = fmt.Sprintf("every proxy already writes to %s (decided while the control plane was unreachable)", in.Want)
		return out, true
	}
	out.Fencing, out.Old, out.Next = true, cur.Writer, in.Want
	out.OldFailed = in.OldFailed && cur.Writer != ""
	out.Reason = fmt.Sprintf("the policy moves the writer from %s to %s", orNone(cur.Writer), orNone(in.Want))
	if out.OldFailed {
		out.Reason = fmt.Sprintf("%s failed: failover to %s", cur.Writer, orNone(in.Want))
	}
	if in.Target != "" && in.Target == in.Want {
		out.Target = in.Target
		out.Reason = fmt.Sprintf("operator switchover from %s to %s", orNone(cur.Writer), in.Target)
	}
	if in.Fenced != "" {
		out.Reason = in.Fenced
	} else if in.Have && in.Want == cur.Writer {
		out.Reason = fmt.Sprintf("%s write elsewhere than %s (decided while the control plane was unreachable): fence them first", strings.Join(strays, ", "), orNone(cur.Writer))
	} else if !in.Have || cur.Writer == "" {
		out.Reason = fmt.Sprintf("proxies still write elsewhere than %s: fence them first", orNone(in.Want))
	}
	return out, true
}

// fenced says whether proxy p no longer holds up fence f: it has
// carried it out (it writes to no node but f's), or f's old writer
// failed and p routes no writes there (its own monitor saw the failure,
// or it is in no switch and writes nowhere else): waiting for it to
// confirm would only cost writes.
func fenced(p discovery.ProxyFacts, f discovery.WriterDecision) bool {
	if p.Applied >= f.Epoch {
		return true
	}
	return f.OldFailed && !p.Switching && (p.Writer == "" || p.Writer == f.Next)
}

// Answer is the controller's answer to an operator's switchover to
// target: want is the writer policy's choice with target preferred, fit
// the result of checking target at once (nil: it answers as a writer
// must). The request is accepted when the policy can choose target,
// done already when target is the writer, refused otherwise, with why.
func Answer(target, current, want string, fit error) (accept, noop bool, why string) {
	switch {
	case fit != nil:
		return false, false, fmt.Sprintf("%s cannot take the writer role now: %v", target, fit)
	case target == current:
		return true, true, target + " is already the writer"
	case want != target:
		return false, false, fmt.Sprintf("%s cannot take the writer role: it must be ONLINE here, writable, with writer_weight > 0 (see SELECT * FROM servers)", target)
	}
	return true, false, ""
}

// strayProxies names the proxies that have seen the current decision and
// still route writes to another node: they chose a writer alone while the
// control plane was unreachable, and only a new decision brings them back.
func strayProxies(ps []discovery.ProxyFacts, cur discovery.WriterDecision) []string {
	var out []string
	for _, p := range ps {
		if p.Seen >= cur.Epoch && !p.Switching && p.Writer != "" && p.Writer != cur.Writer {
			out = append(out, p.Name)
		}
	}
	return out
}

// noneElsewhere says whether no proxy routes writes to a node other than
// w (none at all is fine) or is in the middle of a switch.
func noneElsewhere(ps []discovery.ProxyFacts, w string) bool {
	for _, p := range ps {
		if p.Switching || p.Writer != "" && p.Writer != w {
			return false
		}
	}
	return true
}

// Current is the writer the controller starts from: the published one,
// or — when no valid decision is readable (none yet, or a corrupt value)
// — the writer every live proxy routes to, so that losing the decision
// key does not move the writer.
func Current(d discovery.WriterDecision, present bool, ps []discovery.ProxyFacts) string {
	if present {
		if d.Fencing {
			return d.Next
		}
		return d.Writer
	}
	w := ""
	for i, p := range ps {
		if i > 0 && p.Writer != w {
			return ""
		}
		w = p.Writer
	}
	return w
}

// allOn says whether every proxy routes writes to w and to nothing else.
func allOn(ps []discovery.ProxyFacts, w string) bool {
	for _, p := range ps {
		if p.Writer != w || p.Switching {
			return false
		}
	}
	return len(ps) > 0
}

func orNone(n string) string {
	if n == "" {
		return "(none)"
	}
	return n
}

// CutOff says why the controller keeps writer although its own monitor
// sees it failed ("" when it does not): a node the controller reaches
// still counts writer in the Primary component (heldBy) and another live
// proxy reaches it (its checks get answers). The controller is cut off
// from the writer, the cluster is not: Galera has not dropped it, and
// proxies write there. A writer that really failed (killed, hung, cut
// from everyone) answers no proxy, or Galera drops it, within seconds:
// then it moves.
func CutOff(writer string, failedHere bool, heldBy string, proxies []discovery.ProxyFacts, self string) string {
	if writer == "" || !failedHere || heldBy == "" {
		return ""
	}
	for _, p := range proxies {
		if p.Name != self && !p.Degraded && slices.Contains(p.Reached, writer) {
			return fmt.Sprintf("%s is out of this controller's reach, but %s counts it in the Primary component and proxy %s reaches it", writer, heldBy, p.Name)
		}
	}
	return ""
}
