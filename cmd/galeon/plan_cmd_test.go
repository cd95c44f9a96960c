package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/galeon-db/galeon/internal/config"
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
	r.Measured(rtts, quorum.Running{})
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

// TestPrintPlanCutsAndLosses: for 3+1 the plan prints dc1 lost (writes
// stop) and dc1 cut off (dc1 keeps writing) as two rows, in the text and
// in the JSON, and warns of no even split, since none exists.
func TestPrintPlanCutsAndLosses(t *testing.T) {
	l, err := quorum.ParseLayout("dc1:3,dc2:1")
	if err != nil {
		t.Fatal(err)
	}
	r := quorum.PlanFor(l, quorum.Options{DefaultHoldDown: config.Defaults().Galera.SiteHoldDown.D()})
	var b strings.Builder
	printPlan(&b, r)
	var rows []string
	for _, line := range strings.Split(b.String(), "\n") {
		rows = append(rows, strings.Join(strings.Fields(line), " "))
	}
	text := strings.Join(rows, "\n")
	for _, want := range []string{
		"lose site dc1 STOP (none) [dc2-1]",
		"cut off site dc1 ok dc1-1 dc1-2 dc1-3 [dc2-1]",
		"cut off site dc2 ok dc1-1 dc1-2 dc1-3 [dc2-1]",
		"cut dc1 <-> dc2 ok dc1-1 dc1-2 dc1-3 [dc2-1]",
		`galera.writer_site = "dc1"`,
		`galera.site_hold_down = "30s" (`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the plan lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "even") {
		t.Errorf("3+1 has no even split, the plan warns of one:\n%s", text)
	}
	// What the advice calls the default is this galeon's default.
	def := config.Defaults().Galera.SiteHoldDown.D()
	if called := strings.Contains(text, `"30s" (the default)`); called != (def == quorum.SiteHoldDown) {
		t.Errorf("the default hold-down is %s, and the plan says:\n%s", def, text)
	}
	js, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(js), `"Kind":"site cut","Node":"","Site":"dc1"`) {
		t.Errorf("the JSON plan has no site cut of dc1: %s", js)
	}
}
