package lifecycle

import (
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/galeon-db/galeon/internal/discovery"
)

// ObserveComponent returns the Primary component the agents' reports show
// now, as Galera lists its members (wsrep_incoming_addresses), and whether
// it differs from prev, the one recorded (nil: none yet) — then the
// controller records it in etcd. It is a pure function:
//
//   - Only a running node in a Primary component whose list has as many
//     members as its wsrep_cluster_size speaks for it: every member of
//     the component lists the same members, so one member seen is
//     enough — a member the controller never saw report (killed half a
//     second after it synced) is in the list all the same.
//   - While a view changes, members may list different components for a
//     moment: the list most of them report wins, then the larger one,
//     then the first by its text, so that the choice is stable.
//   - With no such report (no Primary component, or agents that do not
//     publish the list) the record stays as it is.
func ObserveComponent(nodes []discovery.NodeFacts, prev *discovery.LastComponent, controller string, now time.Time) (discovery.LastComponent, bool) {
	count := map[string]int{}
	lists := map[string][]string{}
	for _, n := range nodes {
		if !n.Up || n.ClusterStatus != "Primary" || len(n.Members) == 0 || len(n.Members) != n.ClusterSize {
			continue
		}
		m := make([]string, 0, len(n.Members))
		for _, a := range n.Members {
			if a = strings.TrimSpace(a); a != "" {
				m = append(m, a)
			}
		}
		sort.Strings(m)
		key := strings.Join(m, ",")
		count[key]++
		lists[key] = m
	}
	best := ""
	for key := range count {
		if best == "" || count[key] > count[best] ||
			count[key] == count[best] && (len(lists[key]) > len(lists[best]) || len(lists[key]) == len(lists[best]) && key < best) {
			best = key
		}
	}
	if best == "" {
		if prev != nil {
			return *prev, false
		}
		return discovery.LastComponent{}, false
	}
	byAddr := map[string]string{}
	for _, n := range nodes {
		byAddr[n.Address] = n.Name
	}
	c := discovery.LastComponent{Members: lists[best], Controller: controller, At: now.UTC()}
	for _, a := range c.Members {
		c.Names = append(c.Names, byAddr[a])
	}
	if prev != nil && slices.Equal(prev.Members, c.Members) && !namesLearned(prev.Names, c.Names) {
		return *prev, false
	}
	return c, true
}

// namesLearned says whether names maps an address to a node that old did
// not know.
func namesLearned(old, names []string) bool {
	for i, n := range names {
		if n != "" && (i >= len(old) || old[i] != n) {
			return true
		}
	}
	return false
}

// ComponentNames names the members of the recorded component c (nil: none
// recorded), for RecoveryInput.LastPrimary: each member address as the
// node registered under it now, else as the node registered under it when
// the component was recorded, else as the address itself — a member no
// agent reports still counts as missing, and is named in the status.
func ComponentNames(c *discovery.LastComponent, nodes []discovery.NodeFacts) []string {
	if c == nil || len(c.Members) == 0 {
		return nil
	}
	byAddr := map[string]string{}
	for _, n := range nodes {
		byAddr[n.Address] = n.Name
	}
	out := make([]string, 0, len(c.Members))
	for i, a := range c.Members {
		switch {
		case byAddr[a] != "":
			out = append(out, byAddr[a])
		case i < len(c.Names) && c.Names[i] != "":
			out = append(out, c.Names[i])
		default:
			out = append(out, a)
		}
	}
	sort.Strings(out)
	return out
}
