package sandbox

import (
	"errors"
	"strings"
	"testing"
)

// TestSettledCountsWhatRuns: the component waited for is every member
// that runs, and the message says what each node that differs sees.
func TestSettledCountsWhatRuns(t *testing.T) {
	cases := []struct {
		size int
		seen []componentSeen
		ok   bool
		why  []string
	}{
		// 1+1+garbd after dc2-1 was killed: dc1-1 and the arbitrator.
		{2, []componentSeen{{Node: "dc1-1", Size: "2", Status: "Primary"}}, true, nil},
		// The dead incarnation not yet evicted.
		{2, []componentSeen{{Node: "dc1-1", Size: "3", Status: "Primary"}}, false, []string{"dc1-1 sees 3 members, Primary"}},
		{3, []componentSeen{{Node: "dc1-1", Size: "3", Status: "Primary"}, {Node: "dc2-1", Size: "1", Status: "non-Primary"}},
			false, []string{"dc2-1 sees 1 members, non-Primary"}},
		{3, []componentSeen{{Node: "dc1-1", Err: errors.New("connection refused")}}, false, []string{"dc1-1 does not answer (connection refused)"}},
		{3, []componentSeen{{Node: "dc1-1"}}, false, []string{"dc1-1 sees ? members, no status"}},
		{0, nil, true, nil},
	}
	for i, c := range cases {
		ok, why := settled(c.size, c.seen)
		if ok != c.ok {
			t.Errorf("case %d: settled = %v (%s), want %v", i, ok, why, c.ok)
		}
		for _, w := range c.why {
			if !strings.Contains(why, w) {
				t.Errorf("case %d: %q does not say %q", i, why, w)
			}
		}
	}
	e := expectedMembers{size: 2, nodes: []string{"dc1-1"}, arbitrators: []string{"dc3-garbd"}}
	if got, want := e.String(), "a Primary component of 2 members (running: data node dc1-1; arbitrator dc3-garbd)"; got != want {
		t.Errorf("expected members: %q, want %q", got, want)
	}
}

// TestLingering: a member about to start waits while a running node
// still lists its previous run; garbd is listed with an empty address.
func TestLingering(t *testing.T) {
	const both = "172.30.166.11:14601,172.30.166.12:14602,"
	cases := []struct {
		incoming, addr string
		otherArbs      int
		want           bool
	}{
		{both, "172.30.166.12:14602", 1, true},
		{"172.30.166.11:14601,", "172.30.166.12:14602", 1, false},
		{"172.30.166.11:14601", "172.30.166.12:14602", 0, false},
		// The arbitrator: its dead run still listed, then gone.
		{both, "", 0, true},
		{"172.30.166.11:14601,172.30.166.12:14602", "", 0, false},
		// Two arbitrators, the other one running.
		{"a:1,,", "", 1, true},
		{"a:1,", "", 1, false},
		{"", "a:1", 0, false},
	}
	for _, c := range cases {
		if got := lingering(c.incoming, c.addr, c.otherArbs); got != c.want {
			t.Errorf("lingering(%q, %q, %d) = %v, want %v", c.incoming, c.addr, c.otherArbs, got, c.want)
		}
	}
}

// TestLastComponentOfGarbdLog reads the arbitrator's state from its log.
func TestLastComponentOfGarbdLog(t *testing.T) {
	log := `2026-11-26 10:09:01.100  INFO: New COMPONENT: primary = yes, bootstrap = no, my_idx = 2, memb_num = 3
2026-11-26 10:09:05.511  INFO: New COMPONENT: primary = no, bootstrap = no, my_idx = 0, memb_num = 1
2026-11-26 10:09:08.511  INFO: New COMPONENT: primary = yes, bootstrap = no, my_idx = 1, memb_num = 2
2026-11-26 10:09:08.512  INFO: STATE EXCHANGE: Waiting for state UUID.`
	if c := lastComponent(log); c.status != "Primary" || c.size != "2" {
		t.Errorf("last component %+v, want Primary of 2", c)
	}
	if c := lastComponent(strings.SplitN(log, "\n", 3)[1]); c.status != "non-Primary" || c.size != "1" {
		t.Errorf("last component %+v, want non-Primary of 1", c)
	}
	if c := lastComponent("starting"); c.status != "" {
		t.Errorf("no component yet: %+v", c)
	}
}

// TestArbitratorNames: node commands name arbitrators too, and a data
// node's unknown name lists them.
func TestArbitratorNames(t *testing.T) {
	s := &State{Name: "g1", Nodes: []Node{{Name: "dc1-1", Index: 1}, {Name: "dc2-1", Index: 2}},
		Arbitrators: []Arbitrator{{Name: "dc3-garbd", Site: "dc3"}}}
	if _, ok := s.arbitrator("dc3-garbd"); !ok {
		t.Error("dc3-garbd is not found as an arbitrator")
	}
	_, err := s.Node("dc3-garbd")
	if err == nil || !strings.Contains(err.Error(), "arbitrator") {
		t.Errorf("Node(dc3-garbd): %v", err)
	}
	_, err = s.Node("dc9-1")
	if err == nil || !strings.Contains(err.Error(), "arbitrators: dc3-garbd") {
		t.Errorf("Node(dc9-1): %v", err)
	}
}
