package galera

import (
	"sort"
	"time"
)

// Failback says whether a node that becomes a better writer candidate
// than the current writer takes the role back.
type Failback struct {
	Mode  string        // "never" (default), "immediate", "after"
	After time.Duration // for "after": how long the better node must have been healthy
}

// Candidate is what the writer policy knows about a node.
type Candidate struct {
	Name         string
	WriterWeight int
	Health       Health
	// HealthySince is when the node last became ONLINE (for failback after).
	HealthySince time.Time
}

func (c Candidate) eligible() bool {
	return c.Health.State == Online && c.WriterWeight > 0 && !c.Health.ReadOnly
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
// failback allows a better node to take it. A lagging node is chosen only
// when no non-lagging candidate exists. With no eligible node it returns "".
func ChooseWriter(cands []Candidate, current string, fb Failback, now time.Time) string {
	sorted := append([]Candidate(nil), cands...)
	sort.Slice(sorted, func(i, j int) bool { return better(sorted[i], sorted[j]) })
	var best, bestLagging *Candidate
	for i := range sorted {
		c := &sorted[i]
		if !c.eligible() {
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
		if c.Name != current || !c.eligible() {
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
		switch fb.Mode {
		case "immediate":
			return best.Name
		case "after":
			if !best.HealthySince.IsZero() && now.Sub(best.HealthySince) >= fb.After {
				return best.Name
			}
		}
		return c.Name
	}
	if best == nil {
		return ""
	}
	return best.Name
}
