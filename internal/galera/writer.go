package galera

import (
	"slices"
	"sort"
	"time"
)

// Failback says whether a node that becomes a better writer candidate
// than the current writer takes the role back.
type Failback struct {
	Mode  string        // "never" (default), "immediate", "after"
	After time.Duration // for "after": how long the better node must have been healthy
}

// allows says whether the policy hands the writer role to b, a node
// that beats the current writer.
func (fb Failback) allows(b Candidate, now time.Time) bool {
	switch fb.Mode {
	case "immediate":
		return true
	case "after":
		return !b.HealthySince.IsZero() && now.Sub(b.HealthySince) >= fb.After
	}
	return false
}

// Candidate is what the writer policy knows about a node.
type Candidate struct {
	Name         string
	WriterWeight int
	Health       Health
	// HealthySince is when the node last became ONLINE (for failback after).
	HealthySince time.Time
	// Site is the node's data centre; DownSince when it last stopped
	// being ONLINE (zero while it is, or if it never was): what a site's
	// hold-down counts from (see ChooseWriterInSites).
	Site      string
	DownSince time.Time
	// HeldBy names a node that answered from a Primary component listing
	// this node among its members while the proxy cannot reach this node
	// over the network, or while it proves itself back from such a cut
	// (see HeldBy): it runs on in the cluster.
	HeldBy string
}

// Eligible says whether the node can take writes: ONLINE, writable, with
// a writer weight.
func (c Candidate) Eligible() bool {
	return c.Health.State == Online && c.WriterWeight > 0 && !c.Health.ReadOnly
}

// Electable says whether the node can be given the writer role now:
// Eligible, and in a Primary component as of its latest check, which
// succeeded. A node that missed a check stays ONLINE until
// max_missed_checks, which lets a writer ride out a slow check, but it
// does not take the role on an older answer. (That no check is older
// than another node's departure from the Primary component is the
// Monitor's part: see confirmHold.)
func (c Candidate) Electable() bool {
	return c.Eligible() && c.Health.Missed == 0
}

func better(a, b Candidate) bool {
	if a.WriterWeight != b.WriterWeight {
		return a.WriterWeight > b.WriterWeight
	}
	return a.Name < b.Name
}

// startupGrace bounds how long a fresh writer choice waits for a better
// node that is still coming up (a few monitor intervals).
const startupGrace = 3 * time.Second

// ChooseWriter returns the writer given the candidates and the current
// writer ("" if none). It is a pure function: every proxy that sees the
// same states and the same current writer chooses the same node.
//
// Sticky: the current writer keeps the role while it is eligible, unless
// failback allows a better node to take it. Any other node takes it only
// when Electable. A lagging node is chosen only when no non-lagging
// candidate exists. With no electable node (and no eligible current
// writer) it returns "".
func ChooseWriter(cands []Candidate, current string, fb Failback, now time.Time) string {
	sorted := append([]Candidate(nil), cands...)
	sort.Slice(sorted, func(i, j int) bool { return better(sorted[i], sorted[j]) })
	var best, bestLagging *Candidate
	for i := range sorted {
		c := &sorted[i]
		if !c.Electable() {
			continue
		}
		if !c.Health.Lagging && best == nil {
			best = c
		}
		if c.Health.Lagging && bestLagging == nil {
			bestLagging = c
		}
	}
	if best == nil {
		best = bestLagging
	}
	if current == "" && best != nil {
		// Nothing to keep: a writer is chosen afresh (at start, or after
		// no node qualified). If a node that would beat best is still
		// coming up, wait for it — for at most startupGrace after best
		// became healthy — so that the choice does not depend on which
		// node happened to answer its checks first: every proxy starting
		// over the same nodes must end up with the same writer.
		for _, c := range sorted {
			if c.Name == best.Name {
				break
			}
			if c.WriterWeight > 0 && !c.Health.ReadOnly && ComingUp(c.Health.Reason) &&
				(best.HealthySince.IsZero() || now.Sub(best.HealthySince) < startupGrace) {
				return ""
			}
		}
	}
	for _, c := range sorted {
		if c.Name != current || !c.Eligible() {
			continue
		}
		// The current writer is still fit. Keep it unless lagging while a
		// fit node exists, or failback prefers a better node.
		if c.Health.Lagging && best != nil && !best.Health.Lagging {
			break
		}
		if best == nil || best.Name == c.Name || !better(*best, c) {
			return c.Name
		}
		if fb.allows(*best, now) {
			return best.Name
		}
		return c.Name
	}
	if best == nil {
		return ""
	}
	return best.Name
}

// SitePolicy keeps the writer in one data centre across short failures.
type SitePolicy struct {
	// Preferred is the site the writer belongs in; "" means the site of
	// the current writer, wherever that is.
	Preferred string
	// HoldDown is how long the writer's site must have had no eligible
	// node before the role moves to another site: a latency spike or a
	// short partition pauses writes instead of moving every write across
	// the WAN for good (the writer is sticky). 0 moves it at once.
	HoldDown time.Duration
}

// ChooseWriterInSites is ChooseWriter for a cluster spread over sites
// (Candidate.Site). It is also pure; recheck > 0 asks the caller to
// decide again after that long, when a hold-down ends.
//
//   - While a node of the writer's site (Preferred, or the current
//     writer's) is eligible, the writer is chosen among that site's nodes
//     by ChooseWriter. A writer that had to move to another site comes
//     back when the failback policy says so (never, immediate, after).
//   - With no eligible node there, the current writer stays if it is
//     eligible (it is in another site already); otherwise the role moves
//     to another site only once the site's last eligible node has been
//     gone for HoldDown. Until then there is no writer: writes pause.
func ChooseWriterInSites(cands []Candidate, current string, fb Failback, sp SitePolicy, now time.Time) (writer string, recheck time.Duration) {
	home := sp.Preferred
	var cur *Candidate
	for i := range cands {
		if cands[i].Name == current {
			cur = &cands[i]
		}
	}
	if home == "" && cur != nil {
		home = cur.Site
	}
	if home == "" {
		return ChooseWriter(cands, current, fb, now), 0
	}
	var local []Candidate
	localCurrent := ""
	eligible := false
	var lastDown time.Time
	for _, c := range cands {
		if c.Site != home {
			continue
		}
		local = append(local, c)
		if c.Name == current {
			localCurrent = current
		}
		if c.Eligible() {
			eligible = true
		}
		if c.DownSince.After(lastDown) {
			lastDown = c.DownSince
		}
	}
	if eligible {
		best := ChooseWriter(local, localCurrent, fb, now)
		if cur == nil || cur.Site == home || !cur.Eligible() || best == "" {
			return best, 0
		}
		// The writer is away from home and still fit: failback decides.
		b := local[slices.IndexFunc(local, func(c Candidate) bool { return c.Name == best })]
		if fb.allows(b, now) {
			return best, 0
		}
		if fb.Mode == "after" && !b.HealthySince.IsZero() {
			return current, fb.After - now.Sub(b.HealthySince)
		}
		return current, 0
	}
	if cur != nil && cur.Eligible() {
		return current, 0
	}
	for _, c := range local {
		if current == "" && c.Health.Reason == ReasonNotChecked {
			return "", 0 // at start: the home site has not been checked yet
		}
	}
	if sp.HoldDown > 0 && !lastDown.IsZero() {
		if left := sp.HoldDown - now.Sub(lastDown); left > 0 {
			return "", left
		}
	}
	return ChooseWriter(cands, current, fb, now), 0
}
