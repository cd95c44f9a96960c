package topology

import (
	"math"
	"strings"
	"testing"
	"time"
)

func TestWriterIsHighestWeightThenName(t *testing.T) {
	v := NewView([]Server{
		{Name: "c", WriterWeight: 10}, {Name: "b", WriterWeight: 100}, {Name: "a", WriterWeight: 100},
	})
	if w, _ := v.Load().Writer(); w.Name != "a" || v.Load().Epoch != 1 {
		t.Fatalf("writer %s epoch %d, want a (tie on weight broken by name), epoch 1", w.Name, v.Load().Epoch)
	}
	v.SetHealth("a", false, "unreachable")
	decide(v)
	// Two-phase switch: writes pause until the proxy fences a.
	if w, ok := v.Load().Writer(); ok || v.Load().Pending != "b" {
		t.Fatalf("during the switch: writer %q, pending %q; want none and b", w.Name, v.Load().Pending)
	}
	if old, next, ok := v.PendingSwitch(); !ok || old != "a" || next != "b" {
		t.Fatalf("PendingSwitch = %s %s %v", old, next, ok)
	}
	commit(v, "a")
	if w, _ := v.Load().Writer(); w.Name != "b" || v.Load().Epoch != 2 {
		t.Fatalf("after commit: writer %s epoch %d, want b epoch 2", w.Name, v.Load().Epoch)
	}
	// Sticky: a coming back does not take the role.
	v.SetHealth("a", true, "")
	decide(v)
	if w, _ := v.Load().Writer(); w.Name != "b" {
		t.Fatalf("recovered a took the writer role back from %s", w.Name)
	}
	v.SetHealth("b", false, "unreachable")
	v.SetHealth("c", false, "unreachable")
	v.SetHealth("a", false, "unreachable")
	decide(v)
	commit(v, "b")
	if _, ok := v.Load().Writer(); ok {
		t.Fatal("a writer was chosen with every node offline")
	}
	if why := v.Load().Why("writer"); why != "a offline (unreachable); b offline (unreachable); c offline (unreachable)" {
		t.Fatalf("Why = %q", why)
	}
}

func TestReaderSharesFollowWeights(t *testing.T) {
	v := NewView([]Server{
		{Name: "w", WriterWeight: 1},
		{Name: "r1", ReaderWeight: 100}, {Name: "r2", ReaderWeight: 300},
	})
	counts := map[string]int{}
	const n = 40000
	for i := 0; i < n; i++ {
		s, _ := v.Load().PickReader()
		counts[s.Name]++
	}
	if counts["w"] != 0 {
		t.Errorf("writer got %d reads although readers are online", counts["w"])
	}
	if got := float64(counts["r2"]) / n; math.Abs(got-0.75) > 0.02 {
		t.Errorf("r2 share %.3f, want 0.75", got)
	}
}

func TestPickReaderLoadedBalancesLoadAndKeepsWeights(t *testing.T) {
	v := NewView([]Server{
		{Name: "w", WriterWeight: 1},
		{Name: "r1", ReaderWeight: 100}, {Name: "r2", ReaderWeight: 300},
	})
	const n = 200000
	share := func(load func(string) int64) map[string]int {
		counts := map[string]int{}
		for i := 0; i < n; i++ {
			s, _ := v.Load().PickReaderLoaded(load)
			counts[s.Name]++
		}
		return counts
	}
	for _, c := range []struct {
		name           string
		loadR1, loadR2 int64
		want           float64 // r2's share
	}{
		{"nothing in flight: the weights decide", 0, 0, 0.75},
		{"load in proportion to the weights: still their shares", 10, 30, 0.75},
		// r2 gets only the reads for which both draws were r2: 0.75².
		{"r2 behind, ten times its share in flight", 10, 300, 0.5625},
	} {
		counts := share(func(name string) int64 {
			if name == "r2" {
				return c.loadR2
			}
			return c.loadR1
		})
		if got := float64(counts["r2"]) / n; counts["w"] != 0 || math.Abs(got-c.want) > 0.02 {
			t.Errorf("%s: %v, r2 share %.3f, want %.4f and no read on the writer", c.name, counts, got, c.want)
		}
	}
	// One reader: no choice to make.
	v.SetHealth("r1", false, "down")
	for i := 0; i < 100; i++ {
		if s, _ := v.Load().PickReaderLoaded(func(string) int64 { return 1000 }); s.Name != "r2" {
			t.Fatalf("only r2 online: picked %s", s.Name)
		}
	}
}

func TestPickReaderBehindFollowsWeightsByReadsServed(t *testing.T) {
	v := NewView([]Server{
		{Name: "w", WriterWeight: 1},
		{Name: "r1", ReaderWeight: 100}, {Name: "r2", ReaderWeight: 300},
	})
	const n = 200000
	for _, c := range []struct {
		name               string
		servedR1, servedR2 int64
		loadR1, loadR2     int64
		want               float64 // r2's share of the draws
	}{
		{"nothing served, nothing in flight: the weights decide", 0, 0, 0, 0, 0.75},
		{"served in proportion to the weights: the weights decide", 1000, 3000, 2, 6, 0.75},
		// Two different draws go to r1: r2 only when both were r2 (0.75²).
		{"r2 ahead of its share: r1 gets the runs", 1000, 9000, 2, 6, 0.5625},
		// Two different draws go to r2: r1 only when both were r1 (0.25²).
		{"r2 behind its share: r2 gets the runs", 1000, 1000, 2, 6, 0.9375},
		{"r2 behind with its share in flight: still r2", 1000, 1000, 3, 9, 0.9375},
		{"r2 behind, r1 idle, r2 a few in flight (the slack): still r2", 1000, 1000, 0, 4, 0.9375},
		// Refused for its load: the less loaded per weight, r1.
		{"r2 behind with more in use per weight than r1, past the slack: r1", 1000, 1000, 1, 8, 0.5625},
		// Refused for no progress: the less loaded per weight, r1 here...
		{"r2 behind because it hangs (no read served, connections in use): r1", 1000, 0, 1, 6, 0.5625},
		// ... and r2 when r1 is the more loaded: a hang is told by
		// the load it piles up, not by the share it misses.
		{"r2 behind with no read served yet, r1 more loaded: r2", 1000, 0, 50, 6, 0.9375},
		{"r2 behind, slow but serving (few reads, many in use): still r2", 1000, 5, 20, 6, 0.9375},
		{"equal shares: the less loaded per weight", 1000, 3000, 10, 300, 0.5625},
	} {
		counts := map[string]int{}
		by := func(r1, r2 int64) func(string) int64 {
			return func(name string) int64 {
				if name == "r2" {
					return r2
				}
				return r1
			}
		}
		for i := 0; i < n; i++ {
			s, _ := v.Load().PickReaderBehind(by(c.loadR1, c.loadR2), by(c.servedR1, c.servedR2))
			counts[s.Name]++
		}
		if got := float64(counts["r2"]) / n; counts["w"] != 0 || math.Abs(got-c.want) > 0.02 {
			t.Errorf("%s: %v, r2 share %.3f, want %.4f and no read on the writer", c.name, counts, got, c.want)
		}
	}
	v.SetHealth("r1", false, "down")
	for i := 0; i < 100; i++ {
		if s, _ := v.Load().PickReaderBehind(func(string) int64 { return 1000 }, func(string) int64 { return 0 }); s.Name != "r2" {
			t.Fatalf("only r2 online: picked %s", s.Name)
		}
	}
}

func TestAheadOfWeight(t *testing.T) {
	v := NewView([]Server{
		{Name: "w", WriterWeight: 1},
		{Name: "r1", ReaderWeight: 100}, {Name: "r2", ReaderWeight: 300},
	})
	for _, tc := range []struct {
		name   string
		r1, r2 int64 // reads served
		load   map[string]int64
		ahead1 bool // r1 ahead
		ahead2 bool
	}{
		{"on the weights", 250, 750, nil, false, false},
		{"within the slack", 270, 730, nil, false, false},
		{"r1 over its share by more than 10%", 290, 710, nil, true, false},
		{"r2 over its share by more than 10%", 150, 850, nil, false, true},
		{"too few reads to say", 90, 0, nil, false, false},
		// r2 hangs (its statements pile up, it serves next to none):
		// r1 serving everything is not ahead of a share r2 cannot take.
		{"r2 does not keep up", 1000, 0, map[string]int64{"r2": 40}, false, false},
		// Slow but serving: it counts, and r1 is ahead of its share.
		{"r2 slow but serving", 1000, 3, map[string]int64{"r2": 40}, true, false},
	} {
		served := func(n string) int64 { return map[string]int64{"r1": tc.r1, "r2": tc.r2, "w": 5000}[n] }
		load := func(n string) int64 { return tc.load[n] }
		snap := v.Load()
		if got := snap.AheadOfWeight("r1", load, served, 10, 100); got != tc.ahead1 {
			t.Errorf("%s: r1 ahead %v, want %v", tc.name, got, tc.ahead1)
		}
		if got := snap.AheadOfWeight("r2", load, served, 10, 100); got != tc.ahead2 {
			t.Errorf("%s: r2 ahead %v, want %v", tc.name, got, tc.ahead2)
		}
		if snap.AheadOfWeight("w", load, served, 10, 100) {
			t.Errorf("%s: the writer (not a reader) ahead", tc.name)
		}
	}
	v.SetHealth("r1", false, "down")
	if v.Load().AheadOfWeight("r2", func(string) int64 { return 0 }, func(string) int64 { return 1000 }, 10, 100) {
		t.Error("the only reader is ahead of its share")
	}
}

func TestSameReaders(t *testing.T) {
	servers := []Server{
		{Name: "w", WriterWeight: 1},
		{Name: "r1", ReaderWeight: 100}, {Name: "r2", ReaderWeight: 300},
	}
	v := NewView(servers)
	before := v.Load()
	if !before.SameReaders(before) || before.SameReaders(nil) {
		t.Fatal("SameReaders of itself / of nil")
	}
	// The writer's status changes: a new snapshot, the same readers.
	v.SetHealth("w", true, "lag 3")
	if after := v.Load(); after == before || !after.SameReaders(before) {
		t.Errorf("a writer status change: new snapshot %v, same readers %v; want both", after != before, after.SameReaders(before))
	}
	if err := v.Update(func(s *Server) error {
		if s.Name == "r2" {
			s.ReaderWeight = 200
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if v.Load().SameReaders(before) {
		t.Error("a reader's weight changed: same readers")
	}
	v2 := NewView(servers)
	v2.SetHealth("r1", false, "down")
	if v2.Load().SameReaders(before) {
		t.Error("a reader left: same readers")
	}
}

func TestPickReaderAvoidingSkipsNodesThatJustFailed(t *testing.T) {
	v := NewView([]Server{
		{Name: "w", WriterWeight: 1},
		{Name: "r1", ReaderWeight: 100}, {Name: "r2", ReaderWeight: 300}, {Name: "r3", ReaderWeight: 100},
	})
	counts := map[string]int{}
	for i := 0; i < 20000; i++ {
		s, _ := v.Load().PickReaderAvoiding([]string{"r2"})
		counts[s.Name]++
	}
	if counts["r2"] != 0 || counts["w"] != 0 || math.Abs(float64(counts["r1"])/20000-0.5) > 0.03 {
		t.Errorf("avoiding r2: %v, want r1 and r3 half each", counts)
	}
	// Every reader failed: back to the usual choice, not to no node.
	if s, ok := v.Load().PickReaderAvoiding([]string{"r1", "r2", "r3"}); !ok || s.Name == "w" {
		t.Errorf("all readers avoided: %v %v, want a reader anyway", s.Name, ok)
	}
}

func TestReadsFallBackToWriter(t *testing.T) {
	v := NewView([]Server{{Name: "w", WriterWeight: 1}, {Name: "r", ReaderWeight: 1}})
	v.SetHealth("r", false, "down")
	if s, ok := v.Load().PickReader(); !ok || s.Name != "w" {
		t.Fatalf("PickReader = %v %v, want the writer when no reader is online", s.Name, ok)
	}
	v.SetReaderPolicy(WriterReadsNever)
	if _, ok := v.Load().PickReader(); ok {
		t.Fatal("writer_is_also_reader=never still sent reads to the writer")
	}
	v.SetReaderPolicy(WriterReadsAlways)
	v.SetHealth("r", true, "")
	v.Update(func(s *Server) error { s.ReaderWeight = 1; return nil })
	seen := map[string]bool{}
	for i := 0; i < 200; i++ {
		s, _ := v.Load().PickReader()
		seen[s.Name] = true
	}
	if !seen["w"] || !seen["r"] {
		t.Fatalf("writer_is_also_reader=always: reads went to %v", seen)
	}
}

func TestLaggingNodesServeNoReads(t *testing.T) {
	v := NewView([]Server{{Name: "w", WriterWeight: 1}, {Name: "r1", ReaderWeight: 1}, {Name: "r2", ReaderWeight: 1}})
	v.SetState("r1", func(s *Server) { s.Lagging = true })
	for i := 0; i < 100; i++ {
		if s, _ := v.Load().PickReader(); s.Name != "r2" {
			t.Fatalf("read went to %s, want only r2 (r1 lags)", s.Name)
		}
	}
}

func TestUpdateIsAllOrNothing(t *testing.T) {
	v := NewView([]Server{{Name: "a", ReaderWeight: 1}, {Name: "b", ReaderWeight: 1}})
	err := v.Update(func(s *Server) error {
		s.ReaderWeight = 5
		if s.Name == "b" {
			return errTest
		}
		return nil
	})
	if err == nil {
		t.Fatal("update error lost")
	}
	for _, s := range v.Load().Servers {
		if s.ReaderWeight != 1 {
			t.Fatalf("%s weight %d after a failed update", s.Name, s.ReaderWeight)
		}
	}
}

func TestUpdateAllIsAllOrNothing(t *testing.T) {
	v := NewView([]Server{{Name: "a", ReaderWeight: 1}, {Name: "b", ReaderWeight: 1}})
	err := v.UpdateAll(func(servers []Server) error {
		servers[0].ReaderWeight = 5
		return errTest // e.g. a named server is gone
	})
	if err == nil || v.Load().Servers[0].ReaderWeight != 1 {
		t.Fatalf("refused UpdateAll: err %v, weight %d", err, v.Load().Servers[0].ReaderWeight)
	}
	if err := v.UpdateAll(func(servers []Server) error { servers[1].ReaderWeight = 7; return nil }); err != nil {
		t.Fatal(err)
	}
	if w := v.Load().Servers[1].ReaderWeight; w != 7 {
		t.Fatalf("UpdateAll not published: weight %d", w)
	}
}

type testErr struct{}

func (testErr) Error() string { return "test" }

var errTest = testErr{}

func TestEveryWriterChangeIsHeardOnce(t *testing.T) {
	v := NewView([]Server{{Name: "a", WriterWeight: 100}, {Name: "b", WriterWeight: 50}})
	var heard []string
	hear := func(ch Change, ok bool) {
		if ok {
			heard = append(heard, ch.Old+">"+ch.New+"@"+string(rune('0'+ch.Epoch)))
		}
	}
	v.SetHealth("a", false, "unreachable")
	hear(decide(v))      // pending: nothing changes yet
	hear(commit(v, "a")) // a -> b, fenced
	v.SetHealth("b", false, "unreachable")
	hear(decide(v))
	hear(commit(v, "b")) // b -> none
	v.SetHealth("a", true, "")
	hear(decide(v))
	hear(commit(v, "x")) // not the writer: no-op
	want := []string{"a>b@2", "b>@3", ">a@4"}
	if len(heard) != len(want) {
		t.Fatalf("heard %v, want %v", heard, want)
	}
	for i := range want {
		if heard[i] != want[i] {
			t.Fatalf("heard %v, want %v", heard, want)
		}
	}
	if v.Load().Epoch != 4 {
		t.Errorf("epoch %d, want 4", v.Load().Epoch)
	}
}

// decide plays the proxy's part in these tests: a writer rule (here the
// simplest, StickyHighestWeight) decided after a change and handed to the
// view in one call.
func decide(v *View) (Change, bool) {
	cur, _ := v.Current()
	return v.SetWriter(StickyHighestWeight(v.Load().Servers, cur), 0)
}

// commit ends a pending switch as the proxy's fence loop does: the writer
// is decided at that moment, as if the pending one were current.
func commit(v *View, old string) (Change, bool) {
	_, pending, _ := v.PendingSwitch()
	return v.CommitWriter(old, StickyHighestWeight(v.Load().Servers, pending), 0)
}

// An epoch handed with the current writer is adopted; a different writer
// handed back before the fence cancels the switch.
func TestSetWriterAdoptsEpochsAndCancelsSwitches(t *testing.T) {
	v := NewView([]Server{{Name: "a", WriterWeight: 100}, {Name: "b", WriterWeight: 50}})
	if _, changed := v.SetWriter("a", 7); changed || v.Load().Epoch != 7 {
		t.Fatalf("epoch %d after SetWriter(a, 7), want 7 adopted (no change of writer)", v.Load().Epoch)
	}
	v.SetWriter("b", 8)
	if s := v.Load(); !s.Switching || s.Pending != "b" {
		t.Fatalf("switching %v pending %q, want a switch to b waiting for its fence", s.Switching, s.Pending)
	}
	v.SetWriter("a", 7)
	if s := v.Load(); s.Switching || s.Epoch != 7 {
		t.Fatalf("switching %v epoch %d, want the switch cancelled, epoch 7", s.Switching, s.Epoch)
	}
	v.SetWriter("b", 8)
	if ch, ok := v.CommitWriter("a", "b", 8); !ok || ch.New != "b" || ch.Epoch != 8 {
		t.Fatalf("commit: %+v %v, want b at epoch 8", ch, ok)
	}
	// A snapshot says when it is replaced: waiting sessions wake on it.
	snap := v.Load()
	select {
	case <-snap.Changed():
		t.Fatal("Changed closed before any change")
	default:
	}
	// A failed writer takes no writes even before a decision moves them.
	v.SetHealth("b", false, "unreachable")
	select {
	case <-snap.Changed():
	default:
		t.Fatal("Changed not closed after the view changed")
	}
	if _, ok := v.Load().Writer(); ok {
		t.Fatal("an OFFLINE writer took writes")
	}
}

// TestMembershipChanges: a discovered node enters offline and routes once
// healthy; removing the writer goes through the fenced two-phase switch.
func TestMembershipChanges(t *testing.T) {
	v := NewView([]Server{{Name: "node1", WriterWeight: 100, ReaderWeight: 100}})
	if !v.AddServer(Server{Name: "node2", WriterWeight: 50, ReaderWeight: 100, Discovered: true}) {
		t.Fatal("AddServer refused a new node")
	}
	if v.AddServer(Server{Name: "node2"}) {
		t.Fatal("AddServer accepted a duplicate")
	}
	if s, _ := v.Load().Server("node2"); s.Online || s.Reason != "not checked yet" {
		t.Fatalf("a new node must start offline until checked: %+v", s)
	}
	if r, _ := v.Load().PickReader(); r.Name != "node1" {
		t.Fatalf("unchecked node2 served a read")
	}
	v.SetHealth("node2", true, "")
	if r, _ := v.Load().PickReader(); r.Name != "node2" {
		t.Fatalf("healthy node2 is not the reader (writer reads only when no other reader): got %s", r.Name)
	}
	if !v.RemoveServer("node1") {
		t.Fatal("RemoveServer of the writer")
	}
	decide(v)
	if _, ok := v.Load().Writer(); ok || v.Load().Pending != "node2" {
		t.Fatalf("removing the writer must pause writes until it is fenced; pending %q", v.Load().Pending)
	}
	commit(v, "node1")
	if w, _ := v.Load().Writer(); w.Name != "node2" || v.Load().Epoch != 2 {
		t.Fatalf("after the fence: writer %s epoch %d, want node2 epoch 2", w.Name, v.Load().Epoch)
	}
	if v.RemoveServer("node9") {
		t.Fatal("RemoveServer of an unknown node reported success")
	}
}

// A writer that fails with no node to take over is fenced like any
// other: writes stop at once instead of going to a dead node.
func TestFailedWriterWithNoSuccessorIsFenced(t *testing.T) {
	v := NewView([]Server{{Name: "a", WriterWeight: 10}, {Name: "b", WriterWeight: 0, ReaderWeight: 1}})
	v.SetHealth("a", false, "unreachable")
	decide(v)
	if _, ok := v.Load().Writer(); ok {
		t.Fatal("a failed writer still takes writes")
	}
	old, next, ok := v.PendingSwitch()
	if !ok || old != "a" || next != "" {
		t.Fatalf("pending switch %q -> %q (%v), want a -> none", old, next, ok)
	}
	commit(v, "a")
	snap := v.Load()
	if _, ok := snap.Writer(); ok || snap.Switching {
		t.Errorf("after fencing: writer present or still switching (%+v)", snap)
	}
	v.SetHealth("a", true, "")
	decide(v)
	if w, ok := v.Load().Writer(); !ok || w.Name != "a" {
		t.Errorf("a back: writer %q %v", w.Name, ok)
	}
}

// TestReadsStayInTheHomeSite: a proxy with a home site reads from its own
// site's readers while one can serve, then from its own site's writer,
// and only then from other sites.
func TestReadsStayInTheHomeSite(t *testing.T) {
	v := NewView([]Server{
		{Name: "a1", Site: "dc1", WriterWeight: 100, ReaderWeight: 1, Online: true},
		{Name: "a2", Site: "dc1", ReaderWeight: 1, Online: true},
		{Name: "b1", Site: "dc2", ReaderWeight: 5, Online: true},
		{Name: "b2", Site: "dc2", ReaderWeight: 5, Online: true},
	})
	reads := func() map[string]int {
		seen := map[string]int{}
		for range 400 {
			s, ok := v.Load().PickReader()
			if !ok {
				t.Fatal("no reader")
			}
			seen[s.Name]++
		}
		return seen
	}
	if got := reads(); len(got) != 3 {
		t.Fatalf("no home site: reads went to %v, want a2, b1, b2", got)
	}
	v.SetHomeSite("dc1")
	if got := reads(); got["a2"] != 400 {
		t.Fatalf("home dc1: reads went to %v, want only a2", got)
	}
	v.SetHealth("a2", false, "down")
	if got := reads(); got["a1"] != 400 {
		t.Fatalf("home dc1 without its reader: reads went to %v, want the local writer a1", got)
	}
	v.SetHomeSite("dc3") // nothing there: every reader
	if got := reads(); got["b1"] == 0 || got["b2"] == 0 || got["a1"] != 0 {
		t.Fatalf("home dc3 (empty): reads went to %v, want b1 and b2", got)
	}
}

// TestStaleReadsOnlyWhenNothingFresherServes: nodes outside the Primary
// component serve reads only when allowed and when no online node is
// left; a stale writer never takes writes, and the home site still comes
// first among stale nodes.
func TestStaleReadsOnlyWhenNothingFresherServes(t *testing.T) {
	v := NewView([]Server{
		{Name: "a1", Site: "dc1", WriterWeight: 100},
		{Name: "b1", Site: "dc2", ReaderWeight: 1},
		{Name: "b2", Site: "dc2", ReaderWeight: 1},
		{Name: "c1", Site: "dc3", ReaderWeight: 1},
	})
	v.SetHomeSite("dc2")
	cut := func(s *Server) { s.Online, s.Stale, s.Reason = false, true, "non-Primary" }
	v.SetState("b1", cut)
	v.SetState("b2", cut)
	if got, _ := v.Load().PickReader(); got.Name != "c1" {
		t.Fatalf("dc2 cut off, c1 online: read from %q, want c1 (fresh beats local)", got.Name)
	}
	v.SetStaleReads(true)
	if got, _ := v.Load().PickReader(); got.Name != "c1" || v.Load().StaleReads {
		t.Fatalf("stale reads allowed, c1 online: read from %q (stale %v), want c1", got.Name, v.Load().StaleReads)
	}
	v.SetHealth("a1", false, "unreachable")
	v.SetHealth("c1", false, "unreachable")
	v.SetStaleReads(false)
	if got, ok := v.Load().PickReader(); ok {
		t.Fatalf("nothing online, stale reads off: read from %q, want none", got.Name)
	}
	if why := v.Load().Why("reader"); !strings.Contains(why, "galera.stale_reads") {
		t.Errorf("Why does not point at galera.stale_reads: %s", why)
	}
	v.SetStaleReads(true)
	seen := map[string]int{}
	for range 200 {
		s, ok := v.Load().PickReader()
		if !ok {
			t.Fatal("stale reads allowed: no reader")
		}
		seen[s.Name]++
	}
	if seen["b1"] == 0 || seen["b2"] == 0 || len(seen) != 2 || !v.Load().StaleReads {
		t.Fatalf("stale reads: went to %v, want b1 and b2", seen)
	}
	if w, ok := v.Load().Writer(); ok {
		t.Fatalf("a stale node became the writer: %s", w.Name)
	}
	v.SetState("a1", cut) // a stale writer-only node is not preferred over readers
	if s, _ := v.Load().PickReader(); s.Name == "a1" {
		t.Fatal("a stale writer-only node served reads while stale readers exist")
	}
	// Only the writer-only node of the home site is left stale: it
	// serves (with weight 1: it has no reader weight).
	fresh := func(s *Server) { s.Stale = false }
	v.SetState("b1", fresh)
	v.SetState("b2", fresh)
	v.SetHomeSite("dc1")
	if s, ok := v.Load().PickReader(); !ok || s.Name != "a1" || !v.Load().IsReader("a1") {
		t.Fatalf("only a1 stale, home dc1: read from %q (%v), want a1", s.Name, ok)
	}
	// A node of a Primary component answers (not serving yet): reads
	// wait for it rather than read stale data.
	v.SetState("c1", func(s *Server) { s.Primary, s.Reason = true, "recovering: 1 of 2 good checks" })
	if s, ok := v.Load().PickReader(); ok || v.Load().StaleReads {
		t.Fatalf("a Primary node answers: read from %q, want none until it serves", s.Name)
	}
	v.SetHealth("c1", true, "")
	if got, _ := v.Load().PickReader(); got.Name != "c1" || v.Load().StaleReads {
		t.Fatalf("c1 back: read from %q (stale %v), want c1", got.Name, v.Load().StaleReads)
	}
}

// TestNearestSite: a proxy learns its site only where one site is
// clearly nearer than the others.
func TestNearestSite(t *testing.T) {
	ms := func(v ...float64) []time.Duration {
		var out []time.Duration
		for _, x := range v {
			out = append(out, time.Duration(x*float64(time.Millisecond)))
		}
		return out
	}
	for _, tc := range []struct {
		lat  map[string][]time.Duration
		want string
		ok   bool
	}{
		{map[string][]time.Duration{"dc1": ms(0.3, 0.4, 9), "dc2": ms(31, 32), "dc3": ms(30)}, "dc1", true},
		{map[string][]time.Duration{"dc1": ms(0.3, 0.4), "dc2": ms(0.5, 0.4)}, "", false}, // beside both
		{map[string][]time.Duration{"dc2": ms(2)}, "dc2", true},
		{map[string][]time.Duration{"": ms(0.1), "dc1": nil}, "", false},
	} {
		got, ok := NearestSite(tc.lat)
		if got != tc.want || ok != tc.ok {
			t.Errorf("NearestSite(%v) = %q %v, want %q %v", tc.lat, got, ok, tc.want, tc.ok)
		}
	}
}

func TestWhyNamesReadOnlyNodes(t *testing.T) {
	srv := func(name string, online, ro bool) Server {
		return Server{Name: name, Online: online, ReadOnly: ro, WriterWeight: 1, ReaderWeight: 1, Reason: "unreachable"}
	}
	for _, tc := range []struct {
		name    string
		servers []Server
		want    string
	}{
		{"all read-only", []Server{srv("a", true, true), srv("b", true, true)}, "a, b ONLINE but read_only = ON (a DR cluster that still replicates its primary, or fenced): write to the primary, or promote this cluster"},
		{"some read-only", []Server{srv("a", true, false), srv("b", true, true)}, "a ONLINE here; b read_only = ON"},
		{"offline and read-only", []Server{srv("a", false, false), srv("b", true, true)}, "a offline (unreachable); b read_only = ON"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &Snapshot{Servers: tc.servers}
			if got := s.Why("writer"); got != tc.want {
				t.Fatalf("Why = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestBusy(t *testing.T) {
	v := NewView([]Server{
		{Name: "w", WriterWeight: 1},
		{Name: "r1", ReaderWeight: 1}, {Name: "r2", ReaderWeight: 3},
	})
	for _, tc := range []struct {
		load map[string]int64
		busy bool
	}{
		{map[string]int64{}, false},
		{map[string]int64{"r1": 1, "r2": 2}, false},
		{map[string]int64{"r1": 0, "r2": 4}, true},
		{map[string]int64{"r1": 2, "r2": 2}, true},
		// The writer is not a reader here: its load does not count.
		{map[string]int64{"w": 50, "r1": 1}, false},
	} {
		got := v.Load().Busy(func(n string) int64 { return tc.load[n] }, 2)
		if got != tc.busy {
			t.Errorf("load %v: busy %v, want %v", tc.load, got, tc.busy)
		}
	}
	if NewView([]Server{{Name: "w", WriterWeight: 1}}).Load().Busy(func(string) int64 { return 9 }, 2) {
		t.Error("no readers: busy")
	}
}
