package lifecycle

import (
	"strings"
	"testing"
	"time"

	"github.com/galeon-db/galeon/internal/discovery"
	"github.com/galeon-db/galeon/internal/galera"
)

func down(name string, seqno int64, safe bool) discovery.NodeFacts {
	return discovery.NodeFacts{Name: name, Stopped: true, Position: &galera.Grastate{UUID: "u1", Seqno: seqno, SafeToBootstrap: safe}}
}

func TestBootstrapsTheMostAdvancedNodeAfterGrace(t *testing.T) {
	in := RecoveryInput{Nodes: []discovery.NodeFacts{down("node1", 40, false), down("node2", 42, false), down("node3", 42, true)},
		Expected: 3, DownFor: time.Second, Grace: 5 * time.Second, Controller: "p1"}
	if p := PlanRecovery(in); len(p.Actions) != 0 || p.Blocked {
		t.Fatalf("within grace: %+v", p)
	}
	in.DownFor = 6 * time.Second
	p := PlanRecovery(in)
	if len(p.Actions) != 1 || p.Actions[0].Node != "node3" || p.Actions[0].Kind != discovery.ActionBootstrap {
		t.Fatalf("got %+v, want a bootstrap of node3 (seqno 42, safe_to_bootstrap)", p)
	}
	// Published already: no second bootstrap.
	in.Actions = map[string]discovery.Action{"node3": p.Actions[0]}
	if p2 := PlanRecovery(in); len(p2.Actions) != 0 {
		t.Errorf("a second bootstrap: %+v", p2)
	}
	// node3 starting, not Primary yet: the recovery goes on, not blocked.
	in.Nodes[2] = discovery.NodeFacts{Name: "node3", Up: true, ClusterStatus: "non-Primary",
		Action: &discovery.ActionState{ID: p.Actions[0].ID, Kind: discovery.ActionBootstrap, Done: true}}
	if p := PlanRecovery(in); p.Blocked || len(p.Actions) != 0 {
		t.Errorf("while the bootstrapped node comes up: %+v", p)
	}
	// node3 up and Primary: the others are asked to join, one at a
	// time, the most advanced first (node2, seqno 42), each once.
	in.Nodes[2] = discovery.NodeFacts{Name: "node3", Up: true, Synced: true, ClusterStatus: "Primary"}
	p3 := PlanRecovery(in)
	if len(p3.Actions) != 1 || p3.Actions[0].Kind != discovery.ActionJoin || p3.Actions[0].ID != p.Actions[0].ID || p3.Actions[0].Node != "node2" {
		t.Fatalf("after the bootstrap: %+v, want node2 (the most advanced) to join alone", p3)
	}
	in.Actions["node2"] = p3.Actions[0]
	if p4 := PlanRecovery(in); len(p4.Actions) != 0 || !strings.Contains(p4.Status, "node2 rejoining; node1 wait") {
		t.Errorf("node1 asked while node2 joins, or joins asked twice: %+v", p4)
	}
	// node2 runs, receiving its state: node1 still waits.
	in.Nodes[1] = discovery.NodeFacts{Name: "node2", Up: true, ClusterStatus: "Primary", LocalStateComment: "Joined"}
	if p4 := PlanRecovery(in); len(p4.Actions) != 0 {
		t.Errorf("node1 asked while node2 is not Synced: %+v", p4)
	}
	// node2 Synced: node1's turn (its donor can then be node2, not the
	// writer).
	in.Nodes[1].Synced = true
	p5 := PlanRecovery(in)
	if len(p5.Actions) != 1 || p5.Actions[0].Node != "node1" || p5.Done {
		t.Fatalf("after node2 synced: %+v, want node1 to join", p5)
	}
	in.Actions["node1"] = p5.Actions[0]
	in.Nodes[0] = discovery.NodeFacts{Name: "node1", Up: true, Synced: true, ClusterStatus: "Primary"}
	if p6 := PlanRecovery(in); len(p6.Actions) != 0 || !p6.Done {
		t.Errorf("every node back: %+v, want done", p6)
	}
}

func TestNextJoiner(t *testing.T) {
	const rec = "recover-u1-42"
	in := func(name string) discovery.NodeFacts {
		return discovery.NodeFacts{Name: name, Up: true, Synced: true, ClusterStatus: "Primary"}
	}
	join := func(node string) discovery.Action {
		return discovery.Action{ID: rec, Kind: discovery.ActionJoin, Node: node}
	}
	failedJoin := func(n discovery.NodeFacts) discovery.NodeFacts {
		n.Action = &discovery.ActionState{ID: rec, Kind: discovery.ActionJoin, Done: true, Err: "exit status 1"}
		return n
	}
	cases := []struct {
		name   string
		nodes  []discovery.NodeFacts
		acts   map[string]discovery.Action
		next   string
		whyHas string
	}{
		{"most advanced first", []discovery.NodeFacts{in("node1"), down("node2", 40, false), down("node3", 41, false)}, nil, "node3", ""},
		{"tie: by name", []discovery.NodeFacts{in("node1"), down("node3", 41, false), down("node2", 41, false)}, nil, "node2", ""},
		{"no position last", []discovery.NodeFacts{in("node1"), {Name: "node2", Stopped: true}, down("node3", 1, false)}, nil, "node3", ""},
		{"asked, agent not there yet", []discovery.NodeFacts{in("node1"), down("node2", 40, false), down("node3", 41, false)},
			map[string]discovery.Action{"node3": join("node3")}, "", "node3 rejoining; node2 wait"},
		{"a node started by hand, not Synced", []discovery.NodeFacts{in("node1"), {Name: "node2", Up: true, ClusterStatus: "Primary"}, down("node3", 41, false)},
			nil, "", "node2 rejoining"},
		{"a donor (not Synced) holds the next one back", []discovery.NodeFacts{in("node1"), {Name: "node2", Up: true, ClusterStatus: "Primary", LocalState: 2}, down("node3", 41, false)},
			map[string]discovery.Action{"node2": join("node2")}, "", "node2 rejoining"},
		{"a failed join does not block the others", []discovery.NodeFacts{in("node1"), failedJoin(down("node2", 40, false)), down("node3", 41, false)},
			map[string]discovery.Action{"node2": join("node2")}, "node3", "rejoining failed for node2 (exit status 1)"},
		{"a failed join is not asked again", []discovery.NodeFacts{in("node1"), failedJoin(down("node2", 40, false)), in("node3")},
			map[string]discovery.Action{"node2": join("node2"), "node3": join("node3")}, "", "rejoining failed for node2"},
		{"a join of an older recovery does not count", []discovery.NodeFacts{in("node1"), down("node2", 40, false)},
			map[string]discovery.Action{"node2": {ID: "recover-u1-7", Kind: discovery.ActionJoin}}, "node2", ""},
		{"everyone in", []discovery.NodeFacts{in("node1"), in("node2")}, map[string]discovery.Action{"node2": join("node2")}, "", ""},
		{"an unknown node (agent cannot tell) is not asked", []discovery.NodeFacts{in("node1"), {Name: "node2"}}, nil, "", ""},
	}
	for _, c := range cases {
		next, why := NextJoiner(c.nodes, c.acts, rec, "node1")
		if next != c.next || (c.whyHas == "") != (why == "") || !strings.Contains(why, c.whyHas) {
			t.Errorf("%s: got %q (%q), want %q (%q)", c.name, next, why, c.next, c.whyHas)
		}
	}
}

func TestRefusesWhatItCannotProve(t *testing.T) {
	base := func() RecoveryInput {
		return RecoveryInput{Nodes: []discovery.NodeFacts{down("node1", 40, false), down("node2", 42, false)}, DownFor: time.Minute, Grace: time.Second}
	}
	in := base()
	in.Expected = 3
	if p := PlanRecovery(in); !p.Blocked || len(p.Actions) != 0 || !strings.Contains(p.Status, "2 of the cluster's 3") {
		t.Errorf("a node missing: %+v", p)
	}
	in = base()
	in.Nodes[1].Position.UUID = "u2"
	if p := PlanRecovery(in); !p.Blocked || len(p.Actions) != 0 {
		t.Errorf("two cluster UUIDs: %+v", p)
	}
	in = base()
	in.Nodes = []discovery.NodeFacts{survivor("node1", "u1", 42), survivor("node2", "u1", 41)}
	if p := PlanRecovery(in); !p.Blocked || len(p.Actions) != 0 || !strings.Contains(p.Status, "partition") {
		t.Errorf("every node runs without quorum (a partition): %+v", p)
	}
	in = base()
	in.Nodes[1].Position, in.Outage = nil, "100"
	p := PlanRecovery(in)
	if p.Blocked || len(p.Actions) != 1 || p.Actions[0].Kind != discovery.ActionPosition || p.Actions[0].Node != "node2" {
		t.Errorf("a crashed node's position unknown: %+v, want a position action for node2", p)
	}
	in.Actions = map[string]discovery.Action{"node2": p.Actions[0]}
	if p := PlanRecovery(in); len(p.Actions) != 0 {
		t.Errorf("position asked twice in one outage: %+v", p)
	}
	in = base()
	in.Nodes[0].Stopped = false // the agent cannot tell whether it runs
	if p := PlanRecovery(in); len(p.Actions) != 0 {
		t.Errorf("a node in an unknown state: %+v", p)
	}
	// A healthy cluster: nothing at all.
	if p := PlanRecovery(RecoveryInput{Nodes: []discovery.NodeFacts{{Name: "node1", Up: true, ClusterStatus: "Primary"}, down("node2", 1, false)}}); len(p.Actions) != 0 || p.Status != "" {
		t.Errorf("one node down in a healthy cluster is not a recovery: %+v", p)
	}
}

func survivor(name, uuid string, seqno int64) discovery.NodeFacts {
	return discovery.NodeFacts{Name: name, Up: true, ClusterStatus: "non-Primary", StateUUID: uuid, LastCommitted: seqno}
}

func TestPromotesASurvivorThatLostQuorum(t *testing.T) {
	in := RecoveryInput{Nodes: []discovery.NodeFacts{survivor("node1", "u1", 42), down("node2", 42, true), down("node3", 41, false)},
		Expected: 3, DownFor: 6 * time.Second, Grace: 5 * time.Second, Controller: "p1"}
	p := PlanRecovery(in)
	if len(p.Actions) != 1 || p.Actions[0].Node != "node1" || p.Actions[0].Kind != discovery.ActionPromote {
		t.Fatalf("got %+v, want node1 promoted in place (tied with node2 on seqno 42, and running)", p)
	}
	// Promoted and Primary: the stopped nodes are asked to join.
	in.Actions = map[string]discovery.Action{"node1": p.Actions[0]}
	in.Nodes[0].ClusterStatus, in.Nodes[0].Synced = "Primary", true
	if p := PlanRecovery(in); len(p.Actions) != 1 || p.Actions[0].Kind != discovery.ActionJoin || p.Actions[0].Node != "node2" {
		t.Errorf("after the promotion: %+v, want node2 (then node3) to join", p)
	}
	// A stopped node ahead of the survivor is the one bootstrapped.
	in.Actions, in.Nodes[0].ClusterStatus = nil, "non-Primary"
	in.Nodes[2] = down("node3", 43, false)
	if p := PlanRecovery(in); len(p.Actions) != 1 || p.Actions[0].Node != "node3" || p.Actions[0].Kind != discovery.ActionBootstrap {
		t.Errorf("got %+v, want node3 (seqno 43) bootstrapped", p)
	}
	// The survivor's view of the cluster differs: refused.
	in.Nodes[0].StateUUID = "u2"
	if p := PlanRecovery(in); !p.Blocked || len(p.Actions) != 0 {
		t.Errorf("a survivor of another cluster: %+v", p)
	}
}

func TestAnOperatorCanForceTheChoice(t *testing.T) {
	at := time.Unix(1000, 0)
	// node3's agent is gone: the controller cannot prove anything.
	in := RecoveryInput{Nodes: []discovery.NodeFacts{down("node1", 40, false), survivor("node2", "u1", 39)}, Expected: 3, DownFor: time.Hour, Grace: time.Second}
	if p := PlanRecovery(in); !p.Blocked || !strings.Contains(p.Status, "--force") {
		t.Fatalf("unprovable: %+v, want blocked with the --force hint", p)
	}
	in.Force = &discovery.Force{Node: "node1", By: "ops", At: at}
	p := PlanRecovery(in)
	if len(p.Actions) != 1 || p.Actions[0].Node != "node1" || p.Actions[0].Kind != discovery.ActionBootstrap || p.ClearForce {
		t.Fatalf("forced on a stopped node: %+v, want node1 bootstrapped", p)
	}
	in.Actions = map[string]discovery.Action{"node1": p.Actions[0]}
	if p := PlanRecovery(in); len(p.Actions) != 0 {
		t.Errorf("forced twice: %+v", p)
	}
	in.Actions = nil
	in.Force.Node = "node2"
	if p := PlanRecovery(in); len(p.Actions) != 1 || p.Actions[0].Kind != discovery.ActionPromote {
		t.Errorf("forced on a running survivor: %+v, want a promotion", p)
	}
	in.Held = "galeon cluster stop"
	if p := PlanRecovery(in); len(p.Actions) != 1 {
		t.Errorf("an order overrides the hold: %+v", p)
	}
	in.Force.Node = "node9"
	if p := PlanRecovery(in); !p.Blocked || !p.ClearForce || len(p.Actions) != 0 {
		t.Errorf("forced on an unknown node: %+v, want refused and the order cleared", p)
	}
	in.Nodes[1].ClusterStatus = "Primary"
	if p := PlanRecovery(in); !p.ClearForce || len(p.Actions) != 0 {
		t.Errorf("a Primary component exists: %+v, want the order cleared, nothing done", p)
	}
}

func TestAHeldClusterStaysDown(t *testing.T) {
	in := RecoveryInput{Nodes: []discovery.NodeFacts{down("node1", 40, true), down("node2", 40, false)}, DownFor: time.Hour, Grace: time.Second, Held: "galeon cluster stop"}
	if p := PlanRecovery(in); len(p.Actions) != 0 || !strings.Contains(p.Status, "on purpose") {
		t.Errorf("held: %+v", p)
	}
	in.Held = ""
	if p := PlanRecovery(in); len(p.Actions) != 1 || p.Actions[0].Node != "node1" {
		t.Errorf("hold cleared: %+v, want a bootstrap of node1 (safe_to_bootstrap)", p)
	}
}

// Review findings: the latest recovery counts, not the greatest ID; a
// recovery whose node died does not wait forever; a hold keeps stopped
// nodes stopped even when old recovery actions remain.
func TestRecoveryFollowsTheLatestActionAndNeverWaitsForever(t *testing.T) {
	t0 := time.Unix(1000, 0)
	in := RecoveryInput{Nodes: []discovery.NodeFacts{down("node1", 40, false), down("node2", 40, false), {Name: "node3", Up: true, ClusterStatus: "Primary"}},
		Actions: map[string]discovery.Action{
			"node1": {ID: "recover-u1-40", Kind: discovery.ActionBootstrap, Node: "node1", At: t0},
			"node3": {ID: "force-node3-1", Kind: discovery.ActionBootstrap, Node: "node3", At: t0.Add(time.Minute)},
		}}
	if p := PlanRecovery(in); len(p.Actions) != 1 || p.Actions[0].ID != "force-node3-1" || p.Actions[0].Node != "node1" {
		t.Errorf("after a forced recovery overtook a failed one: %+v, want node1 (then node2) asked to join the forced one", p)
	}
	in.Held = "galeon cluster stop"
	if p := PlanRecovery(in); len(p.Actions) != 0 {
		t.Errorf("held: %+v, want no joins", p)
	}
	// node1 bootstrapped (done), then down again; node2 runs without a
	// Primary component: not "waiting for the Primary component" forever.
	in = RecoveryInput{Nodes: []discovery.NodeFacts{
		{Name: "node1", Stopped: true, Position: &galera.Grastate{UUID: "u1", Seqno: 40},
			Action: &discovery.ActionState{ID: "recover-u1-40", Kind: discovery.ActionBootstrap, Done: true}},
		survivor("node2", "u1", 39)},
		Actions:  map[string]discovery.Action{"node1": {ID: "recover-u1-40", Kind: discovery.ActionBootstrap, Node: "node1", At: t0}},
		Expected: 2, DownFor: time.Minute, Grace: time.Second}
	if p := PlanRecovery(in); !p.Blocked || len(p.Actions) != 0 || !strings.Contains(p.Status, "down again") {
		t.Errorf("the recovered node died: %+v, want blocked, saying so", p)
	}
}

func TestAFailedPositionRecoveryIsRetriedOnceThenBlocks(t *testing.T) {
	in := RecoveryInput{Nodes: []discovery.NodeFacts{down("node1", 40, false), {Name: "node2", Stopped: true,
		Action: &discovery.ActionState{ID: "position-7", Kind: discovery.ActionPosition, Done: true, Err: "no position in the log"}}},
		Outage: "7", DownFor: time.Minute, Grace: time.Second,
		Actions: map[string]discovery.Action{"node2": {ID: "position-7", Kind: discovery.ActionPosition, Node: "node2"}}}
	p := PlanRecovery(in)
	if len(p.Actions) != 1 || p.Actions[0].ID != "position-7-again" || p.Blocked {
		t.Fatalf("after a failed recovery: %+v, want it asked again", p)
	}
	in.Nodes[1].Action.ID = "position-7-again"
	in.Actions["node2"] = p.Actions[0]
	if p := PlanRecovery(in); !p.Blocked || len(p.Actions) != 0 || !strings.Contains(p.Status, "no position in the log") {
		t.Errorf("after two failures: %+v, want blocked with the agent's error", p)
	}
}

// TestAMemberOfTheLastPrimaryIsMissing: node1 crashed first, node2 and
// node3 went on as a Primary component of two, then both crashed, and
// node3's agent is gone with its machine. Two nodes report, the last
// Primary had two members, but node1 was not one of them: node3 may hold
// the last transactions, so nothing is recovered without an operator.
func TestAMemberOfTheLastPrimaryIsMissing(t *testing.T) {
	in := RecoveryInput{Nodes: []discovery.NodeFacts{down("node1", 40, false), down("node2", 42, false)},
		Expected: 2, LastPrimary: []string{"node2"}, DownFor: 6 * time.Second, Grace: 5 * time.Second, Controller: "p1"}
	if p := PlanRecovery(in); !p.Blocked || !strings.Contains(p.Status, "--force") || len(p.Actions) != 0 {
		t.Fatalf("got %+v, want blocked, naming --force", p)
	}
	in.LastPrimary = []string{"node1", "node2"}
	if p := PlanRecovery(in); p.Blocked {
		t.Fatalf("every member of the last Primary reports, yet: %+v", p)
	}
}
