package replica

import (
	"fmt"
	"slices"
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
	// on it; Running: a replication thread runs there.
	Reachable, Fit, HasSource, Running bool
	// Component is the client addresses of the members of its Primary
	// component (wsrep_incoming_addresses), when it is fit.
	Component []string
	// Why it is not fit, when it is not.
	Why string
}

// ChooseMember is the DR cluster node that replicates: the current one
// while it is fit, else one replication runs on (an agent that restarted
// finds its choice), else one replication is set up on, else the first
// fit one in the given order. "" when none may replicate now, with why.
//
// Only one node of a DR cluster may apply the cluster's transactions:
// Galera carries them to the others, and a second applier would apply
// them twice. The agent stops replication on every other node it
// reaches before it starts it on the chosen one. A node it cannot reach
// may still be applying (a network cut between the agent and that node,
// too many connections): a node other than the current one is chosen
// only when no node it cannot reach is in the chosen node's Primary
// component (Galera has dropped them: out of it, applying fails).
func ChooseMember(ms []Member, current string) (string, string) {
	fit := func(m Member) bool { return m.Reachable && m.Fit }
	for _, m := range ms {
		if m.Addr == current && fit(m) {
			return m.Addr, "replicating through " + m.Addr
		}
	}
	var pick *Member
	why := ""
	for _, rule := range []struct {
		ok  func(Member) bool
		why string
	}{
		{func(m Member) bool { return m.Running }, "replication runs on %s"},
		{func(m Member) bool { return m.HasSource }, "replication is set up on %s"},
		{func(Member) bool { return true }, "%s is the first node fit"},
	} {
		for i := range ms {
			if fit(ms[i]) && rule.ok(ms[i]) {
				pick, why = &ms[i], fmt.Sprintf(rule.why, ms[i].Addr)
				break
			}
		}
		if pick != nil {
			break
		}
	}
	if pick == nil {
		why := make([]string, 0, len(ms))
		for _, m := range ms {
			why = append(why, m.Addr+": "+whyNot(ms, m.Addr))
		}
		return "", "no node of the DR cluster can replicate: " + strings.Join(why, "; ")
	}
	for _, m := range ms {
		if !m.Reachable && slices.Contains(pick.Component, m.Addr) {
			return "", fmt.Sprintf("%s does not answer the agent but is still in the DR cluster's Primary component (as %s sees it): it may still be applying, so replication does not move until Galera drops it or the agent reaches it (%s)",
				m.Addr, pick.Addr, whyNot(ms, m.Addr))
		}
	}
	if current != "" {
		return pick.Addr, fmt.Sprintf("%s cannot replicate (%s): moving replication to %s (%s)", current, whyNot(ms, current), pick.Addr, why)
	}
	return pick.Addr, "replicating through " + pick.Addr + ": " + why
}

func whyNot(ms []Member, addr string) string {
	for _, m := range ms {
		if m.Addr == addr {
			switch {
			case !m.Reachable && m.Why != "":
				return "unreachable: " + m.Why
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

// ClusterApplyError says whether a replication SQL thread's error is
// one of Galera's for a node that left its Primary component (1047 "WSREP
// has not yet prepared node for application use", "Node has dropped from
// cluster"), not one about the data: a DR cluster's node that is Synced
// again may go on.
func ClusterApplyError(msg string) bool {
	return strings.Contains(msg, "WSREP has not yet prepared node") || strings.Contains(msg, "Node has dropped from cluster") ||
		strings.Contains(msg, "error code: 1047")
}
