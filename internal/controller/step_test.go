package controller

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/galeon-db/galeon/internal/discovery"
)

func proxies(applied ...uint64) []discovery.ProxyFacts {
	var out []discovery.ProxyFacts
	for i, a := range applied {
		out = append(out, discovery.ProxyFacts{Name: string(rune('a' + i)), Epoch: a, Applied: a})
	}
	return out
}

func TestFirstDecisionNamesTheWriterAtOnce(t *testing.T) {
	d, ok := Step(Input{Want: "node1", Proxies: proxies(0, 0), Controller: "a", Now: time.Now()})
	if !ok || d.Writer != "node1" || d.Epoch != 1 || d.Fencing {
		t.Fatalf("got %+v %v, want writer node1 epoch 1", d, ok)
	}
	if _, ok := Step(Input{Want: "", Proxies: proxies(0), Controller: "a"}); ok {
		t.Error("no node qualifies and nothing published: nothing to publish")
	}
}

func TestSameWriterPublishesNothing(t *testing.T) {
	cur := discovery.WriterDecision{Writer: "node1", Epoch: 4, Controller: "a"}
	if d, ok := Step(Input{Current: cur, Have: true, Want: "node1", Proxies: proxies(4, 4)}); ok {
		t.Fatalf("published %+v for an unchanged writer", d)
	}
}

func TestChangeOfWriterFencesFirst(t *testing.T) {
	cur := discovery.WriterDecision{Writer: "node1", Epoch: 4, Controller: "a"}
	d, ok := Step(Input{Current: cur, Have: true, Want: "node2", Proxies: proxies(4, 4, 4), Controller: "b"})
	if !ok || !d.Fencing || d.Writer != "" || d.Old != "node1" || d.Next != "node2" || d.Epoch != 5 || d.Controller != "b" {
		t.Fatalf("got %+v, want a fence of node1 for node2 at epoch 5", d)
	}
	// The epoch goes past any a proxy counted on its own (degraded).
	d, _ = Step(Input{Current: cur, Have: true, Want: "node2", Proxies: proxies(4, 7)})
	if d.Epoch != 8 {
		t.Errorf("epoch %d, want 8 (past a proxy's own 7)", d.Epoch)
	}
}

func TestFenceEndsWhenEveryProxyApplied(t *testing.T) {
	fence := discovery.WriterDecision{Fencing: true, Old: "node1", Next: "node2", Epoch: 5, Controller: "a"}
	in := Input{Current: fence, Have: true, Want: "node2", Proxies: proxies(5, 4, 5), Controller: "a"}
	if d, ok := Step(in); ok {
		t.Fatalf("published %+v while proxy b has not applied the fence", d)
	}
	in.Proxies = proxies(5, 5, 5)
	d, ok := Step(in)
	if !ok || d.Writer != "node2" || d.Epoch != 5 || d.Fencing {
		t.Fatalf("got %+v, want node2 under the fence's epoch 5", d)
	}
	// A proxy that never confirms holds the fence only until it expires.
	in.Proxies, in.FenceExpired = proxies(5, 4), true
	d, ok = Step(in)
	if !ok || d.Writer != "node2" {
		t.Fatalf("expired fence: got %+v %v", d, ok)
	}
	// The policy may want another node by the time the fence ends, or none.
	in.Want = ""
	d, ok = Step(in)
	if !ok || d.Writer != "" || d.Fencing || d.Epoch != 5 {
		t.Fatalf("no node qualifies after the fence: got %+v", d)
	}
}

func TestFromNoWriterNothingToFence(t *testing.T) {
	cur := discovery.WriterDecision{Writer: "", Epoch: 5, Controller: "a"}
	d, ok := Step(Input{Current: cur, Have: true, Want: "node3", Proxies: proxies(5)})
	if !ok || d.Writer != "node3" || d.Fencing || d.Epoch != 6 {
		t.Fatalf("got %+v, want node3 at epoch 6 without a fence", d)
	}
}

func TestDecisionsValidate(t *testing.T) {
	for _, bad := range []discovery.WriterDecision{
		{Writer: "node1", Epoch: 0, Controller: "a"},
		{Writer: "node1", Epoch: 1, Fencing: true, Controller: "a"},
		{Writer: "no de", Epoch: 1, Controller: "a"},
		{Writer: "node1", Epoch: 1},
	} {
		if bad.Validate() == nil {
			t.Errorf("%+v validated", bad)
		}
	}
}

func TestProxiesAlreadyOnTheWantedWriterNeedNoFence(t *testing.T) {
	cur := discovery.WriterDecision{Writer: "node1", Epoch: 4, Controller: "a"}
	ps := []discovery.ProxyFacts{{Name: "a", Writer: "node2", Epoch: 5, Applied: 4}, {Name: "b", Writer: "node2", Epoch: 5, Applied: 4}}
	d, ok := Step(Input{Current: cur, Have: true, Want: "node2", Proxies: ps})
	if !ok || d.Fencing || d.Writer != "node2" || d.Epoch != 6 {
		t.Fatalf("got %+v, want node2 at epoch 6 without a fence", d)
	}
	ps[1].Writer = ""
	if d, _ := Step(Input{Current: cur, Have: true, Want: "node2", Proxies: ps}); !d.Fencing {
		t.Errorf("a proxy without a writer could still follow node1 back: want a fence, got %+v", d)
	}
}

func TestLostDecisionFencesProxiesWritingElsewhere(t *testing.T) {
	ps := []discovery.ProxyFacts{{Name: "a", Writer: "node2", Epoch: 4, Applied: 4}, {Name: "b", Writer: "node2", Epoch: 4, Applied: 4}}
	// A corrupt decision key: the controller keeps the proxies' writer.
	if cur := Current(discovery.WriterDecision{Writer: "node 1"}, false, ps); cur != "node2" {
		t.Fatalf("current %q, want node2 (every proxy's writer)", cur)
	}
	d, ok := Step(Input{Want: "node2", Proxies: ps})
	if !ok || d.Fencing || d.Writer != "node2" || d.Epoch != 5 {
		t.Fatalf("got %+v, want node2 republished at epoch 5", d)
	}
	// If the policy wants another node, the proxies on node2 are fenced.
	d, _ = Step(Input{Want: "node1", Proxies: ps})
	if !d.Fencing || d.Next != "node1" {
		t.Fatalf("got %+v, want a fence before node1", d)
	}
	ps[1].Writer = "node3"
	if cur := Current(discovery.WriterDecision{}, false, ps); cur != "" {
		t.Errorf("proxies disagree: current %q, want none", cur)
	}
}

func TestProxyThatDecidedAloneIsBroughtBack(t *testing.T) {
	cur := discovery.WriterDecision{Writer: "node1", Epoch: 4, Controller: "a"}
	ps := []discovery.ProxyFacts{{Name: "a", Writer: "node1", Epoch: 4, Applied: 4, Seen: 4}, {Name: "b", Writer: "node2", Epoch: 5, Applied: 3, Seen: 4}}
	d, ok := Step(Input{Current: cur, Have: true, Want: "node1", Proxies: ps})
	if !ok || !d.Fencing || d.Next != "node1" || d.Epoch != 6 {
		t.Fatalf("got %+v, want a fence back to node1 at epoch 6", d)
	}
	// A proxy that has not seen the decision yet is not a stray.
	ps[1].Seen = 3
	if d, ok := Step(Input{Current: cur, Have: true, Want: "node1", Proxies: ps}); ok {
		t.Errorf("published %+v for a proxy that has not seen the decision", d)
	}
}

func TestFailedWriterIsAFailover(t *testing.T) {
	cur := discovery.WriterDecision{Writer: "node1", Epoch: 4, Controller: "a"}
	d, ok := Step(Input{Current: cur, Have: true, Want: "node2", OldFailed: true, Proxies: proxies(4, 4), Controller: "a"})
	if !ok || !d.Fencing || !d.OldFailed || d.Old != "node1" || !strings.Contains(d.Reason, "failed") {
		t.Fatalf("got %+v, want a failover fence of node1", d)
	}
	if err := d.Validate(); err != nil {
		t.Fatal(err)
	}
	// A healthy writer moved by the policy is a planned fence.
	d, _ = Step(Input{Current: cur, Have: true, Want: "node2", Proxies: proxies(4, 4), Controller: "a"})
	if d.OldFailed {
		t.Fatalf("planned move marked as failover: %+v", d)
	}
}

func TestWriterFailingDuringAPlannedFence(t *testing.T) {
	fence := discovery.WriterDecision{Fencing: true, Old: "node1", Next: "node2", Epoch: 5, Controller: "a"}
	ps := proxies(5, 4)
	ps[1].Writer = "node1" // still lets node1's transactions finish
	in := Input{Current: fence, Have: true, Want: "node2", OldFailed: true, Proxies: ps, Controller: "b", Now: time.Now()}
	d, ok := Step(in)
	if !ok || !d.Fencing || !d.OldFailed || d.Epoch != 5 || d.Old != "node1" || d.Next != "node2" || d.Controller != "b" {
		t.Fatalf("got %+v %v, want the same fence republished as a failover", d, ok)
	}
	// Once published as a failover it is not republished again.
	in.Current = d
	if d, ok := Step(in); ok {
		t.Fatalf("published %+v while proxy b has not fenced", d)
	}
}

func TestFailoverFenceWaitsOnlyForProxiesThatMayWriteThere(t *testing.T) {
	fence := discovery.WriterDecision{Fencing: true, Old: "node1", Next: "node2", Epoch: 5, OldFailed: true, Controller: "a"}
	ps := proxies(5, 4, 4)
	ps[1].Writer = ""      // its own monitor saw node1 fail: writes nowhere
	ps[2].Writer = "node1" // still routes to node1
	in := Input{Current: fence, Have: true, Want: "node2", Proxies: ps, Controller: "a"}
	if d, ok := Step(in); ok {
		t.Fatalf("published %+v while proxy c still writes to the failed node1", d)
	}
	ps[2].Writer, ps[2].Switching = "", true // fencing now
	if d, ok := Step(in); ok {
		t.Fatalf("published %+v while proxy c is in the middle of its fence", d)
	}
	ps[2].Switching = false
	d, ok := Step(in)
	if !ok || d.Writer != "node2" || d.Epoch != 5 {
		t.Fatalf("got %+v %v, want node2 named: no proxy can write to node1", d, ok)
	}
	// A planned fence waits for every confirmation.
	fence.OldFailed = false
	in.Current = fence
	if d, ok := Step(in); ok {
		t.Fatalf("planned fence ended before proxies b and c confirmed: %+v", d)
	}
}

func TestSwitchoverTargetIsOneShot(t *testing.T) {
	cur := discovery.WriterDecision{Writer: "node3", Epoch: 4, Controller: "a"}
	d, ok := Step(Input{Current: cur, Have: true, Want: "node1", Target: "node1", Proxies: proxies(4), Controller: "a"})
	if !ok || !d.Fencing || d.Target != "node1" || d.Next != "node1" || !strings.Contains(d.Reason, "operator switchover") {
		t.Fatalf("got %+v, want a fence for the operator's target node1", d)
	}
	// Fulfilled: the named decision carries no target any more.
	done, ok := Step(Input{Current: d, Have: true, Want: "node1", Proxies: proxies(5), Controller: "a"})
	if !ok || done.Writer != "node1" || done.Target != "" || done.Fencing || !strings.Contains(done.Reason, "done") {
		t.Fatalf("got %+v, want node1 named and the target spent", done)
	}
	// Superseded: the target failed during the fence.
	sup, ok := Step(Input{Current: d, Have: true, Want: "node2", Proxies: proxies(5), Controller: "a"})
	if !ok || sup.Writer != "node2" || sup.Target != "" || !strings.Contains(sup.Reason, "superseded") {
		t.Fatalf("got %+v, want node2 named and the target forgotten", sup)
	}
	if err := sup.Validate(); err != nil {
		t.Fatal(err)
	}
}

func TestAnswer(t *testing.T) {
	dead := errors.New("unreachable: connection refused")
	cases := []struct {
		name                  string
		target, current, want string
		fit                   error
		accept, noop          bool
		why                   string
	}{
		{"fit and chosen", "node2", "node1", "node2", nil, true, false, ""},
		{"killed a moment ago", "node2", "node1", "node2", dead, false, false, "connection refused"},
		{"not fit in the controller's view", "node2", "node1", "node1", nil, false, false, "ONLINE here"},
		{"already the writer", "node1", "node1", "node1", nil, true, true, "already the writer"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			accept, noop, why := Answer(c.target, c.current, c.want, c.fit)
			if accept != c.accept || noop != c.noop || !strings.Contains(why, c.why) {
				t.Fatalf("Answer = %v %v %q, want %v %v %q", accept, noop, why, c.accept, c.noop, c.why)
			}
		})
	}
}

func TestVetoIsBounded(t *testing.T) {
	v := map[string]time.Time{}
	t0 := time.Now()
	if !vetoing(v, "node2", t0) || !vetoing(v, "node2", t0.Add(vetoLimit-time.Millisecond)) {
		t.Fatal("a node that fails its check is not named within the limit")
	}
	if vetoing(v, "node2", t0.Add(vetoLimit)) {
		t.Fatal("failed checks kept node2 from the role past the limit: the monitor's verdict must stand")
	}
	if !vetoing(v, "node3", t0.Add(vetoLimit)) {
		t.Fatal("each node has its own limit")
	}
}

func TestCutOff(t *testing.T) {
	seesN1 := discovery.ProxyFacts{Name: "p2", Reached: []string{"n1", "n2"}}
	blind := discovery.ProxyFacts{Name: "p3", Online: []string{"n1"}, Reached: []string{"n2"}}
	degraded := discovery.ProxyFacts{Name: "p4", Reached: []string{"n1"}, Degraded: true}
	self := discovery.ProxyFacts{Name: "p1", Reached: []string{"n1"}}
	cases := []struct {
		name       string
		failedHere bool
		heldBy     string
		proxies    []discovery.ProxyFacts
		kept       bool
	}{
		{"cut from the controller only: kept", true, "n2", []discovery.ProxyFacts{self, seesN1, blind}, true},
		{"healthy here: nothing to keep", false, "", []discovery.ProxyFacts{seesN1}, false},
		{"Galera dropped it: it failed", true, "", []discovery.ProxyFacts{seesN1}, false},
		{"no other proxy reaches it: it failed (kill -9, hang)", true, "n2", []discovery.ProxyFacts{self, blind}, false},
		{"only a degraded proxy sees it: not evidence", true, "n2", []discovery.ProxyFacts{self, degraded}, false},
		{"its own record does not count", true, "n2", []discovery.ProxyFacts{self}, false},
	}
	for _, c := range cases {
		why := CutOff("n1", c.failedHere, c.heldBy, c.proxies, "p1")
		if (why != "") != c.kept {
			t.Errorf("%s: CutOff = %q, want kept %v", c.name, why, c.kept)
		}
	}
	if why := CutOff("", true, "n2", []discovery.ProxyFacts{seesN1}, "p1"); why != "" {
		t.Errorf("no writer: %q", why)
	}
}

// TestNoFenceToNobody: when no node can take the role (a site hold-down,
// nothing fit), the writer is not fenced in favour of no one.
func TestNoFenceToNobody(t *testing.T) {
	cur := discovery.WriterDecision{Writer: "n1", Epoch: 4, Controller: "a"}
	ps := []discovery.ProxyFacts{{Name: "a", Writer: "", Epoch: 4, Applied: 4}, {Name: "b", Writer: "n1", Epoch: 4, Applied: 4}}
	if d, ok := Step(Input{Current: cur, Have: true, Want: "", OldFailed: true, Proxies: ps, Controller: "a"}); ok {
		t.Errorf("published %+v, want nothing while no node can take the role", d)
	}
	// A proxy writing to another node still gets fenced back.
	ps = append(ps, discovery.ProxyFacts{Name: "c", Writer: "n2", Epoch: 5, Seen: 4})
	if _, ok := Step(Input{Current: cur, Have: true, Want: "", Proxies: ps, Controller: "a"}); !ok {
		t.Error("a stray proxy writing to n2 is not fenced")
	}
}

func TestPromotionFencesTheWriterForNobody(t *testing.T) {
	cur := discovery.WriterDecision{Writer: "n1", Epoch: 4, Controller: "a"}
	why := "the cluster is fenced: replica dr1 was promoted"
	// A healthy writer, every proxy on it: fenced all the same.
	d, ok := Step(Input{Current: cur, Have: true, Want: "", Fenced: why, Proxies: proxies(4, 4), Controller: "a"})
	if !ok || !d.Fencing || d.Old != "n1" || d.Next != "" || d.Epoch != 5 || d.Reason != why {
		t.Fatalf("got %+v %v, want a fence of n1 for nobody, saying why", d, ok)
	}
	// Once every proxy applied it: no writer, and the reason says why.
	d, ok = Step(Input{Current: d, Have: true, Want: "", Fenced: why, Proxies: proxies(5, 5), Controller: "a"})
	if !ok || d.Fencing || d.Writer != "" || d.Epoch != 5 || !strings.Contains(d.Reason, why) || d.Fenced != why {
		t.Fatalf("got %+v %v, want no writer under epoch 5", d, ok)
	}
	// Then nothing more to publish.
	if d2, ok := Step(Input{Current: d, Have: true, Want: "", Fenced: why, Proxies: proxies(5, 5), Controller: "a"}); ok {
		t.Errorf("published %+v again", d2)
	}
}
