package replica

import (
	"fmt"
	"strings"
)

// Member is one node of a DR cluster (a Galera cluster that replicates
// the cluster asynchronously through one of its nodes), as the DR
// cluster's agent sees it.
type Member struct {
	Addr string
	// Reachable: it answered; Fit: Synced in its cluster's Primary
	// component (a node that is not applies nothing: its replication
	// would stop on the first event); HasSource: replication is set up
	// on it.
	Reachable, Fit, HasSource bool
	// Why it is not fit, when it is not.
	Why string
}

// ChooseMember is the DR cluster node that replicates: the current one
// while it is fit, else one a replication is set up on (an agent that
// restarted finds its choice), else the first fit one in the given
// order. "" when none is fit, with why.
//
// Only one node of a DR cluster may apply the cluster's transactions:
// Galera carries them to the others, and a second applier would apply
// them twice. The agent stops replication on every other node it
// reaches before it starts it on the chosen one; a node it cannot reach
// is out of its cluster's Primary component (or down), where applying
// fails.
func ChooseMember(ms []Member, current string) (string, string) {
	fit := func(m Member) bool { return m.Reachable && m.Fit }
	for _, m := range ms {
		if m.Addr == current && fit(m) {
			return m.Addr, "replicating through " + m.Addr
		}
	}
	for _, m := range ms {
		if m.HasSource && fit(m) {
			return m.Addr, "replication is set up on " + m.Addr
		}
	}
	for _, m := range ms {
		if fit(m) {
			if current != "" {
				return m.Addr, fmt.Sprintf("%s cannot replicate (%s): moving replication to %s", current, whyNot(ms, current), m.Addr)
			}
			return m.Addr, "replicating through " + m.Addr + ", the first node fit"
		}
	}
	why := make([]string, 0, len(ms))
	for _, m := range ms {
		why = append(why, m.Addr+": "+whyNot(ms, m.Addr))
	}
	return "", "no node of the DR cluster can replicate: " + strings.Join(why, "; ")
}

func whyNot(ms []Member, addr string) string {
	for _, m := range ms {
		if m.Addr == addr {
			switch {
			case !m.Reachable:
				return "unreachable"
			case m.Why != "":
				return m.Why
			}
			return "not Synced"
		}
	}
	return "not a node of the DR cluster"
}
