package follow

import (
	"strings"
	"testing"
	"time"

	"github.com/galeon-db/galeon/internal/galera"
)

var t0 = time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)

// node builds a candidate: state "on" (ONLINE), "off", "drain", "ro"
// (ONLINE but read_only), with writer weight w.
func node(name, state string, w int) galera.Candidate {
	c := galera.Candidate{Name: name, WriterWeight: w, Health: galera.Health{State: galera.Online}}
	switch state {
	case "off":
		c.Health = galera.Health{State: galera.Offline, Reason: "unreachable"}
	case "drain":
		c.Health = galera.Health{State: galera.Draining, Reason: "desync"}
	case "ro":
		c.Health.ReadOnly = true
	}
	return c
}

func nodes(states ...string) []galera.Candidate {
	names := []string{"node1", "node2", "node3"}
	weights := []int{100, 60, 20}
	out := make([]galera.Candidate, len(states))
	for i, st := range states {
		out[i] = node(names[i], st, weights[i])
	}
	return out
}

// held marks name as out of reach but counted in the Primary component
// by by.
func held(ns []galera.Candidate, name, by string) []galera.Candidate {
	for i := range ns {
		if ns[i].Name == name {
			ns[i].HeldBy = by
		}
	}
	return ns
}

func dec(writer string, epoch uint64) Decision {
	return Decision{Writer: writer, Epoch: epoch, Controller: "p1"}
}

func fence(next string, epoch uint64) Decision {
	return Decision{Fencing: true, Next: next, Epoch: epoch, Controller: "p1"}
}

// following is a proxy that has applied decision d and routes to its
// writer.
func following(d Decision) State {
	return State{Following: true, Have: true, Decision: d, Rev: 10, Applied: d.Epoch}
}

// TestStep mirrors the per-proxy cases the integration tests drive
// (test/control, test/galera, test/sites) one input at a time.
func TestStep(t *testing.T) {
	allUp := nodes("on", "on", "on")
	cases := []struct {
		name   string
		state  State
		in     Input
		writer string
		epoch  uint64
		// reason, when set, must be contained in the output's reason;
		// note, in its notes' details.
		reason, note string
		check        func(t *testing.T, s State)
	}{
		// Alone (no control plane): the policy.
		{name: "alone: highest writer weight at start", in: Input{Nodes: allUp}, writer: "node1", reason: "policy chooses node1"},
		{name: "alone: the writer is sticky", in: Input{Nodes: allUp, Current: "node2"}, writer: "node2", reason: "policy keeps node2"},
		{name: "alone: a failed writer is replaced (kill -9)", in: Input{Nodes: nodes("off", "on", "on"), Current: "node1"}, writer: "node2"},
		{name: "alone: a draining writer is replaced (desync, drain)", in: Input{Nodes: nodes("drain", "on", "on"), Current: "node1"}, writer: "node2"},
		{name: "alone: read_only is not a writer", in: Input{Nodes: nodes("ro", "on", "on"), Current: "node1"}, writer: "node2"},
		{name: "alone: no node fit, no writer", in: Input{Nodes: nodes("off", "off", "ro"), Current: "node1"}, writer: "", reason: "no node can take writes"},
		{name: "alone: failback immediate takes the better node back", in: Input{Nodes: allUp, Current: "node2", Settings: Settings{Failback: galera.Failback{Mode: "immediate"}}}, writer: "node1"},
		{name: "alone: operator switchover", state: State{Preferred: "node3"}, in: Input{Nodes: allUp, Current: "node1"}, writer: "node3", reason: "operator switchover to node3"},
		{name: "alone: a preferred node that is not fit is passed over, and forgotten", state: State{Preferred: "node3"}, in: Input{Nodes: nodes("on", "on", "off"), Current: "node1"}, writer: "node1",
			note: "switchover to node3 superseded", check: func(t *testing.T, s State) { want(t, s.Preferred, "", "Preferred") }},
		{name: "alone: a superseded preference never pulls the writer back", state: State{}, in: Input{Nodes: allUp, Current: "node2"}, writer: "node2"},
		{name: "alone: a writer cut off from this proxy only is held, not replaced", in: Input{Nodes: held(nodes("off", "on", "on"), "node1", "node2"), Current: "node1"},
			writer: "", reason: "deciding alone: the writer node1 is out of reach here, but node2 still counts it",
			check: func(t *testing.T, s State) { want(t, s.Held, "node1", "Held") }},
		{name: "alone: a held writer reachable again is taken back, not a better node", state: State{Held: "node2"}, in: Input{Nodes: allUp, Current: ""},
			writer: "node2", reason: "policy keeps node2", check: func(t *testing.T, s State) { want(t, s.Held, "", "Held") }},
		{name: "alone: a blip of the Primary component does not forget the held writer", state: State{Held: "node1"},
			in: Input{Nodes: nodes("off", "off", "off"), Current: ""}, writer: "",
			check: func(t *testing.T, s State) { want(t, s.Held, "node1", "Held") }},
		{name: "alone: an operator's switchover is not held", state: State{Preferred: "node3"}, in: Input{Nodes: held(nodes("off", "on", "on"), "node1", "node2"), Current: "node1"},
			writer: "node3", reason: "operator switchover to node3"},
		{name: "alone: Prefer input sets the target", in: Input{Kind: Prefer, Node: "node2", Nodes: allUp, Current: "node1"}, writer: "node2",
			check: func(t *testing.T, s State) { want(t, s.Preferred, "node2", "Preferred") }},
		{name: "alone: Committed on the target spends the preference", state: State{Preferred: "node2"}, in: Input{Kind: Committed, Nodes: allUp, Current: "node2"}, writer: "node2",
			check: func(t *testing.T, s State) { want(t, s.Preferred, "", "Preferred") }},
		{name: "alone: Committed elsewhere keeps the preference", state: State{Preferred: "node2"}, in: Input{Kind: Committed, Nodes: allUp, Current: "node1"}, writer: "node2",
			check: func(t *testing.T, s State) { want(t, s.Preferred, "node2", "Preferred") }},

		// Following a controller.
		{name: "follow: no decision yet, no writer", in: Input{Kind: Follow, Nodes: allUp, Current: "node1"}, writer: "", reason: "first decision"},
		{name: "follow: a decision is applied with its epoch", state: State{Following: true},
			in: Input{Kind: Publish, Decision: dec("node2", 7), Rev: 3, Nodes: allUp}, writer: "node2", epoch: 7, note: "controller p1: writer node2, epoch 7"},
		{name: "follow: the published writer wins over the proxy's own policy", state: following(dec("node3", 4)),
			in: Input{Nodes: allUp, Current: "node3"}, writer: "node3", epoch: 4, reason: "the controller's decision, epoch 4"},
		{name: "follow: a fence stops writes, epoch kept", state: following(dec("node1", 4)),
			in: Input{Kind: Publish, Decision: fence("node2", 5), Rev: 11, Nodes: allUp, Current: "node1"}, writer: "", epoch: 5,
			reason: "fences the writer before node2", note: "fence the writer before node2 takes over, epoch 5"},
		{name: "follow: no writer named: the controller's reason is told", state: following(Decision{Epoch: 6, Controller: "p1", Reason: "the cluster is fenced: replica dr1 was promoted"}),
			in: Input{Nodes: allUp, Current: ""}, writer: "", epoch: 6, reason: "the controller names no writer: the cluster is fenced: replica dr1 was promoted"},
		{name: "follow: a fenced cluster stays without a writer when the control plane is lost",
			state: func() State {
				s := following(Decision{Epoch: 6, Controller: "p1", Fenced: "replica dr1 was promoted"})
				s.Degraded = true
				return s
			}(),
			in: Input{Nodes: allUp, Current: ""}, writer: "", epoch: 6, reason: "its last decision fenced the cluster: replica dr1 was promoted"},
		{name: "follow: the published writer failed here: no writer until the next decision", state: following(dec("node1", 4)),
			in: Input{Nodes: nodes("off", "on", "on"), Current: "node1"}, writer: "", epoch: 4, reason: "not fit here"},
		{name: "follow: an older revision read late is ignored", state: following(dec("node2", 8)),
			in: Input{Kind: Publish, Decision: dec("node1", 7), Rev: 9, Nodes: allUp, Current: "node2"}, writer: "node2", epoch: 8,
			check: func(t *testing.T, s State) { want(t, s.Decision.Epoch, uint64(8), "kept epoch") }},
		{name: "follow: the same decision again makes no note", state: following(dec("node2", 8)),
			in: Input{Kind: Publish, Decision: dec("node2", 8), Rev: 12, Nodes: allUp, Current: "node2"}, writer: "node2", epoch: 8},
		{name: "follow: a preference does not override the controller", state: following(dec("node1", 2)),
			in: Input{Kind: Prefer, Node: "node3", Nodes: allUp, Current: "node1"}, writer: "node1", epoch: 2},

		// Degraded: the control plane is unreachable.
		{name: "degraded: keeps the published writer while healthy", state: following(dec("node1", 4)),
			in: Input{Kind: Degrade, On: true, Why: "context deadline exceeded", Nodes: allUp, Current: "node1"}, writer: "node1", epoch: 0,
			reason: "keeping node1", note: "control plane unreachable (context deadline exceeded)"},
		{name: "degraded: fails over alone when the writer fails", state: func() State { s := following(dec("node1", 4)); s.Degraded = true; return s }(),
			in: Input{Nodes: nodes("off", "on", "on"), Current: "node1"}, writer: "node2", epoch: 0, reason: "deciding alone"},
		{name: "degraded: a fence in progress is ended by deciding alone", state: func() State { s := following(fence("node2", 5)); s.Degraded = true; return s }(),
			in: Input{Nodes: nodes("off", "on", "on"), Current: ""}, writer: "node2"},
		// The rule of deciding alone: a writer out of reach here that a
		// Primary node still counts as a member keeps writes waiting.
		{name: "degraded: a writer cut off from this proxy only is not replaced", state: func() State { s := following(dec("node1", 4)); s.Degraded = true; return s }(),
			in: Input{Nodes: held(nodes("off", "on", "on"), "node1", "node2"), Current: "node1"}, writer: "", reason: "node2 still counts it in the Primary component",
			check: func(t *testing.T, s State) { want(t, s.Held, "node1", "Held") }},
		{name: "degraded: writes keep waiting once the view has no writer", state: func() State { s := following(dec("node1", 4)); s.Degraded, s.Held = true, "node1"; return s }(),
			in: Input{Nodes: held(nodes("off", "on", "on"), "node1", "node3"), Current: ""}, writer: "", reason: "writes wait rather than go to a second node"},
		{name: "degraded: the last published writer is held even if the view routed nowhere", state: func() State { s := following(dec("node1", 4)); s.Degraded = true; return s }(),
			in: Input{Nodes: held(nodes("off", "on", "on"), "node1", "node2"), Current: ""}, writer: "", reason: "out of reach here"},
		{name: "degraded: once Galera drops the held writer, the policy chooses", state: func() State { s := following(dec("node1", 4)); s.Degraded, s.Held = true, "node1"; return s }(),
			in: Input{Nodes: nodes("off", "on", "on"), Current: ""}, writer: "node2", reason: "deciding alone",
			check: func(t *testing.T, s State) { want(t, s.Held, "", "Held") }},
		{name: "degraded: the held writer reachable again takes writes", state: func() State { s := following(dec("node1", 4)); s.Degraded, s.Held = true, "node1"; return s }(),
			in: Input{Nodes: allUp, Current: ""}, writer: "node1", reason: "deciding alone"},
		{name: "following: a published writer out of reach names the cut", state: following(dec("node1", 4)),
			in: Input{Nodes: held(nodes("off", "on", "on"), "node1", "node2"), Current: "node1"}, writer: "", epoch: 4, reason: "a network cut between this proxy and node1"},
		{name: "degraded twice: one note", state: func() State { s := following(dec("node1", 4)); s.Degraded = true; return s }(),
			in: Input{Kind: Degrade, On: true, Nodes: allUp, Current: "node1"}, writer: "node1"},

		// etcd back.
		{name: "etcd back: keeps the writer chosen alone (stale)", state: func() State { s := following(dec("node1", 4)); s.Degraded = true; return s }(),
			in: Input{Kind: Degrade, On: false, Nodes: nodes("off", "on", "on"), Current: "node2"}, writer: "node2", reason: "has published nothing newer than epoch 4",
			note: "control plane reachable again",
			check: func(t *testing.T, s State) {
				want(t, s.Stale, true, "Stale")
				want(t, s.StaleBelow, uint64(4), "StaleBelow")
				want(t, s.Rev, int64(0), "Rev (the store may have been rebuilt)")
			}},
		{name: "etcd back: the old decision read again does not move writes back", state: State{Following: true, Have: true, Decision: dec("node1", 4), Stale: true, StaleBelow: 4, Applied: 4},
			in: Input{Kind: Publish, Decision: dec("node1", 4), Rev: 20, Nodes: allUp, Current: "node2"}, writer: "node2"},
		{name: "etcd back: a newer decision ends stale", state: State{Following: true, Have: true, Decision: dec("node1", 4), Stale: true, StaleBelow: 4, Applied: 4},
			in: Input{Kind: Publish, Decision: dec("node2", 5), Rev: 21, Nodes: allUp, Current: "node2"}, writer: "node2", epoch: 5,
			note:  "writer node2, epoch 5",
			check: func(t *testing.T, s State) { want(t, s.Stale, false, "Stale") }},
		{name: "etcd back: stale ends when the published writer is the one routed to", state: State{Following: true, Have: true, Decision: dec("node2", 4), Stale: true, StaleBelow: 4},
			in: Input{Nodes: allUp, Current: "node2"}, writer: "node2", epoch: 4,
			check: func(t *testing.T, s State) { want(t, s.Stale, false, "Stale") }},
		{name: "etcd back: stale ends when nothing was chosen alone", state: State{Following: true, Have: true, Decision: dec("node1", 4), Stale: true, StaleBelow: 4},
			in: Input{Nodes: allUp, Current: ""}, writer: "node1", epoch: 4},

		// Sites: a hold-down asks for another look.
		{name: "sites: the home site's writer failed, hold-down before leaving", state: State{},
			in: Input{Nodes: func() []galera.Candidate {
				n := nodes("off", "on", "on")
				n[0].Site, n[1].Site, n[2].Site = "dc1", "dc1", "dc2"
				n[1].Health = galera.Health{State: galera.Offline, Reason: "unreachable"}
				n[0].DownSince, n[1].DownSince = t0.Add(-time.Second), t0.Add(-time.Second)
				return n
			}(), Current: "node1", Settings: Settings{Sites: galera.SitePolicy{Preferred: "dc1", HoldDown: 5 * time.Second}}}, writer: ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := c.in
			in.Now = t0
			s, out := Step(c.state, in)
			want(t, out.Writer, c.writer, "writer")
			want(t, out.Epoch, c.epoch, "epoch")
			if c.reason != "" && !strings.Contains(out.Reason, c.reason) {
				t.Errorf("reason %q, want it to contain %q", out.Reason, c.reason)
			}
			if out.Reason == "" {
				t.Errorf("no reason given")
			}
			var notes []string
			for _, n := range out.Notes {
				notes = append(notes, n.Detail)
			}
			all := strings.Join(notes, " | ")
			if c.note != "" && !strings.Contains(all, c.note) {
				t.Errorf("notes %q, want one containing %q", all, c.note)
			}
			if c.note == "" && len(notes) > 0 {
				t.Errorf("notes %q, want none", all)
			}
			if c.check != nil {
				c.check(t, s)
			}
		})
	}
}

func TestHoldDownAsksForAnotherLook(t *testing.T) {
	n := nodes("off", "off", "on")
	n[0].Site, n[1].Site, n[2].Site = "dc1", "dc1", "dc2"
	n[0].DownSince, n[1].DownSince = t0.Add(-time.Second), t0.Add(-time.Second)
	in := Input{Nodes: n, Current: "node1", Now: t0, Settings: Settings{Sites: galera.SitePolicy{Preferred: "dc1", HoldDown: 5 * time.Second}}}
	_, out := Step(State{}, in)
	if out.Writer != "" || out.Recheck <= 0 || out.Recheck > 4*time.Second {
		t.Fatalf("during the hold-down: writer %q recheck %s; want none and about 4s", out.Writer, out.Recheck)
	}
	in.Now = t0.Add(out.Recheck)
	if _, out = Step(State{}, in); out.Writer != "node3" {
		t.Fatalf("after the hold-down: writer %q, want node3 in the other site", out.Writer)
	}
}

// TestStepIsPure: the same state and input give the same answer, and the
// state passed in is not changed.
func TestStepIsPure(t *testing.T) {
	s := following(dec("node1", 4))
	in := Input{Kind: Publish, Decision: fence("node2", 5), Rev: 11, Nodes: nodes("on", "on", "on"), Current: "node1", Now: t0}
	s1, o1 := Step(s, in)
	s2, o2 := Step(s, in)
	if s1 != s2 || o1.Writer != o2.Writer || o1.Epoch != o2.Epoch || o1.Reason != o2.Reason {
		t.Fatalf("two runs differ: %+v %+v / %+v %+v", s1, o1, s2, o2)
	}
	if s.Decision.Epoch != 4 {
		t.Fatalf("the state passed in was changed")
	}
}

// TestApplied: what the controller waits for before it ends a fence.
func TestApplied(t *testing.T) {
	cases := []struct {
		name      string
		s         State
		writer    string
		switching bool
		want      uint64
	}{
		{"no decision", State{Following: true, Applied: 0}, "node1", false, 0},
		{"routes to the published writer", State{Have: true, Decision: dec("node2", 5), Applied: 4}, "node2", false, 5},
		{"still routes to another node", State{Have: true, Decision: dec("node2", 5), Applied: 4}, "node1", false, 4},
		{"no writer: writes nowhere else", State{Have: true, Decision: dec("node2", 5), Applied: 4}, "", false, 5},
		{"a switch waits for its fence", State{Have: true, Decision: dec("node2", 5), Applied: 4}, "node1", true, 4},
		{"fence: done once nothing is written", State{Have: true, Decision: fence("node2", 5), Applied: 4}, "", false, 5},
		{"fence: not while the old writer takes writes", State{Have: true, Decision: fence("node2", 5), Applied: 4}, "node1", false, 4},
		{"degraded: nothing new is confirmed", State{Have: true, Decision: dec("node2", 5), Applied: 4, Degraded: true}, "node2", false, 4},
		{"stale: nothing new is confirmed", State{Have: true, Decision: dec("node2", 5), Applied: 4, Stale: true}, "node2", false, 4},
		{"never goes back", State{Have: true, Decision: dec("node2", 5), Applied: 6}, "node2", false, 6},
	}
	for _, c := range cases {
		if got := Applied(c.s, c.writer, c.switching); got != c.want {
			t.Errorf("%s: Applied = %d, want %d", c.name, got, c.want)
		}
	}
	// Step remembers what the view showed before the next decision
	// arrives: a fence right after an applied decision keeps it.
	s := following(dec("node1", 4))
	s.Applied = 0
	s, _ = Step(s, Input{Kind: Publish, Decision: fence("node2", 5), Rev: 11, Nodes: nodes("on", "on", "on"), Current: "node1", Now: t0})
	if s.Applied != 4 {
		t.Errorf("after the fence arrived: Applied %d, want 4 (the decision the view carried out)", s.Applied)
	}
}

func want[T comparable](t *testing.T, got, exp T, what string) {
	t.Helper()
	if got != exp {
		t.Errorf("%s = %v, want %v", what, got, exp)
	}
}
