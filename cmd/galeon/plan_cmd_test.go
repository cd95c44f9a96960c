package main

import (
	"strings"
	"testing"
	"time"

	"github.com/galeon-db/galeon/internal/discovery"
	"github.com/galeon-db/galeon/internal/quorum"
)

// TestClusterLayoutFromAgents: a running cluster's layout comes from its
// agents' registrations; members without an agent must be placed with
// --arbitrator, and the group latency each site reports becomes advice.
func TestClusterLayoutFromAgents(t *testing.T) {
	two := 2
	facts := []discovery.NodeFacts{
		{Name: "a1", Site: "dc1", Segment: 0, ClusterStatus: "Primary", ClusterSize: 5, ReplLatency: 0.031},
		{Name: "a2", Site: "dc1", Segment: 0, ClusterStatus: "Primary", ClusterSize: 5, Weight: &two},
		{Name: "b1", Site: "dc2", Segment: 1, ClusterStatus: "Primary", ClusterSize: 5, ReplLatency: 0.029},
		{Name: "b2", Segment: 1, ClusterStatus: "Primary", ClusterSize: 5},
	}
	if _, _, err := clusterLayout(facts, nil); err == nil || !strings.Contains(err.Error(), "--arbitrator") {
		t.Fatalf("5 members, 4 registered, no --arbitrator: %v", err)
	}
	if _, _, err := clusterLayout(facts, []string{"dc3", "dc4"}); err == nil || !strings.Contains(err.Error(), "names 2 members") {
		t.Fatalf("too many --arbitrator sites: %v", err)
	}
	l, rtts, err := clusterLayout(facts, []string{"dc3"})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range l.Members {
		got = append(got, m.Name+"@"+m.Site)
		if m.Name == "a2" && m.Weight != 2 {
			t.Errorf("a2's pc.weight is %d, want 2", m.Weight)
		}
		if m.Arbitrator && m.Segment != 3 {
			t.Errorf("the arbitrator in a site of its own got segment %d, want 3", m.Segment)
		}
	}
	// b2's agent has no --site: its segment names its site.
	if want := "a1@dc1 a2@dc1 b1@dc2 b2@segment1 dc3-garbd1@dc3"; strings.Join(got, " ") != want {
		t.Errorf("members %s, want %s", strings.Join(got, " "), want)
	}
	if len(rtts) != 2 || rtts[0].RTT != 31*time.Millisecond || rtts[0].To != "" {
		t.Errorf("measured %v, want dc1's 31 ms and dc2's 29 ms", rtts)
	}
	r := quorum.Plan(l)
	r.Measured(rtts)
	if !strings.Contains(strings.Join(r.Advice, "\n"), "every commit waits at least 31 ms") {
		t.Errorf("advice does not give the commit floor: %v", r.Advice)
	}
	// A partition: nodes see smaller components than there are
	// registered nodes; nobody is unaccounted for.
	split := []discovery.NodeFacts{
		{Name: "a1", Site: "dc1", ClusterStatus: "Primary", ClusterSize: 2},
		{Name: "a2", Site: "dc1", ClusterStatus: "Primary", ClusterSize: 2},
		{Name: "b1", Site: "dc2", Segment: 1, ClusterStatus: "non-Primary", ClusterSize: 1},
	}
	if l, _, err := clusterLayout(split, nil); err != nil || len(l.Members) != 3 {
		t.Errorf("partitioned cluster: %v, %d members", err, len(l.Members))
	}
	if _, _, err := clusterLayout(nil, nil); err == nil || !strings.Contains(err.Error(), "agent") {
		t.Errorf("no registrations: %v", err)
	}
}

// TestGcacheHorizon: the node whose gcache holds the fewest write-sets,
// at the commit rate between two readings, bounds how long a site may be
// away and rejoin by IST.
func TestGcacheHorizon(t *testing.T) {
	t0 := time.Date(2026, 11, 23, 20, 0, 0, 0, time.UTC)
	t1 := t0.Add(5 * time.Second)
	before := []discovery.NodeFacts{{Name: "a", LastCommitted: 1000, UpdatedAt: t0}, {Name: "b", LastCommitted: 1000, UpdatedAt: t0}}
	after := []discovery.NodeFacts{
		{Name: "a", LastCommitted: 1500, CachedDownto: 1, UpdatedAt: t1},    // 1499 write-sets
		{Name: "b", LastCommitted: 1500, CachedDownto: 1001, UpdatedAt: t1}, // 499
	}
	node, h, rate := gcacheHorizon(before, after)
	if node != "b" || rate != 100 || h != 4990*time.Millisecond {
		t.Fatalf("horizon %s %s at %.0f/s, want b 4.99s at 100/s", node, h, rate)
	}
	if _, _, rate := gcacheHorizon(before, before); rate != 0 {
		t.Errorf("no commits: rate %.1f", rate)
	}
}
