package lifecycle

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/galeon-db/galeon/internal/discovery"
)

func member(name, addr string, size int, members ...string) discovery.NodeFacts {
	return discovery.NodeFacts{Name: name, Address: addr, Up: true, ClusterStatus: "Primary", ClusterSize: size, Members: members}
}

func TestObserveComponent(t *testing.T) {
	now := time.Unix(1000, 0)
	three := []string{"h:1", "h:2", "h:3"}
	rec := func(members []string, names ...string) *discovery.LastComponent {
		return &discovery.LastComponent{Members: members, Names: names}
	}
	stopped := func(name, addr string) discovery.NodeFacts {
		return discovery.NodeFacts{Name: name, Address: addr, Stopped: true}
	}
	cases := []struct {
		name    string
		nodes   []discovery.NodeFacts
		prev    *discovery.LastComponent
		members []string
		names   []string
		changed bool
	}{
		{"one member seen is enough: node3 never reported Primary", []discovery.NodeFacts{
			member("node1", "h:1", 3, "h:2", "h:1", "h:3"), stopped("node2", "h:2"), stopped("node3", "h:3")},
			rec([]string{"h:1", "h:2"}, "node1", "node2"), three, []string{"node1", "node2", "node3"}, true},
		{"an address no agent registers is kept", []discovery.NodeFacts{member("node1", "h:1", 3, "h:1", "h:2", "h:3"), member("node2", "h:2", 3, "h:1", "h:2", "h:3")},
			nil, three, []string{"node1", "node2", ""}, true},
		{"unchanged: no write", []discovery.NodeFacts{member("node1", "h:1", 3, "h:1", "h:2", "h:3")},
			rec(three, "node1", "node2", "node3"), three, []string{"node1", "node2", "node3"}, false},
		{"a name learned later is recorded", []discovery.NodeFacts{member("node1", "h:1", 3, "h:1", "h:2", "h:3"), stopped("node3", "h:3")},
			rec(three, "node1", "node2", ""), three, []string{"node1", "", "node3"}, true},
		{"a shrunk component replaces the old one", []discovery.NodeFacts{member("node1", "h:1", 2, "h:1", "h:2")},
			rec(three, "node1", "node2", "node3"), []string{"h:1", "h:2"}, []string{"node1", ""}, true},
		{"no Primary report: the record stays", []discovery.NodeFacts{stopped("node1", "h:1"), {Name: "node2", Up: true, ClusterStatus: "non-Primary", ClusterSize: 1, Members: []string{"h:2"}}},
			rec(three, "node1", "node2", "node3"), three, []string{"node1", "node2", "node3"}, false},
		{"a list that disagrees with the size is ignored", []discovery.NodeFacts{member("node1", "h:1", 3, "h:1", "h:2")},
			nil, nil, nil, false},
		{"mid view change: the list most members report", []discovery.NodeFacts{
			member("node1", "h:1", 2, "h:1", "h:2"), member("node2", "h:2", 3, "h:1", "h:2", "h:3"), member("node3", "h:3", 3, "h:1", "h:2", "h:3")},
			nil, three, []string{"node1", "node2", "node3"}, true},
		{"a tie: the larger component", []discovery.NodeFacts{member("node1", "h:1", 2, "h:1", "h:2"), member("node3", "h:3", 3, "h:1", "h:2", "h:3")},
			nil, three, []string{"node1", "", "node3"}, true},
	}
	for _, c := range cases {
		got, changed := ObserveComponent(c.nodes, c.prev, "p1", now)
		if changed != c.changed || !slices.Equal(got.Members, c.members) || !slices.Equal(got.Names, c.names) {
			t.Errorf("%s: got %v %q changed=%v, want %v %q changed=%v", c.name, got.Members, got.Names, changed, c.members, c.names, c.changed)
		}
	}
}

func TestComponentNames(t *testing.T) {
	c := &discovery.LastComponent{Members: []string{"h:1", "h:2", "h:3"}, Names: []string{"node1", "node2", ""}}
	nodes := []discovery.NodeFacts{{Name: "node1", Address: "h:1"}, {Name: "node9", Address: "h:3"}}
	// node1 by its address now, node2 as recorded (no agent reports it),
	// node9 registered under node3's old address.
	if got := ComponentNames(c, nodes); !slices.Equal(got, []string{"node1", "node2", "node9"}) {
		t.Errorf("got %v", got)
	}
	// An address nobody ever registered stays an address: the recovery
	// waits for it and says which.
	if got := ComponentNames(c, nodes[:1]); !slices.Equal(got, []string{"h:3", "node1", "node2"}) {
		t.Errorf("got %v", got)
	}
	if got := ComponentNames(nil, nodes); got != nil {
		t.Errorf("nothing recorded: %v", got)
	}
}

// TestRecoveryWaitsForEveryMemberGaleraListed: the controller never saw
// node3 report Primary (killed half a second after it synced), but the
// recorded component lists it: the recovery waits for node3's position,
// then goes on — it never blocks for good.
func TestRecoveryWaitsForEveryMemberGaleraListed(t *testing.T) {
	c := &discovery.LastComponent{Members: []string{"h:1", "h:2", "h:3"}, Names: []string{"node1", "node2", "node3"}}
	n1, n2 := down("node1", 40, false), down("node2", 41, false)
	n1.Address, n2.Address = "h:1", "h:2"
	in := RecoveryInput{Nodes: []discovery.NodeFacts{n1, n2}, DownFor: time.Minute, Grace: time.Second}
	in.Expected, in.LastPrimary = len(c.Members), ComponentNames(c, in.Nodes)
	if p := PlanRecovery(in); !p.Blocked || len(p.Actions) != 0 || !strings.Contains(p.Status, "(missing: node3)") {
		t.Fatalf("node3's agent missing: %+v, want blocked, naming node3", p)
	}
	n3 := down("node3", 42, false)
	n3.Address = "h:3"
	in.Nodes = append(in.Nodes, n3)
	in.LastPrimary = ComponentNames(c, in.Nodes)
	if p := PlanRecovery(in); p.Blocked || len(p.Actions) != 1 || p.Actions[0].Node != "node3" {
		t.Errorf("every member reports: %+v, want node3 (seqno 42) bootstrapped", p)
	}
}
