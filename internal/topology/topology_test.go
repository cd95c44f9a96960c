package topology

import (
	"math"
	"testing"
)

func TestWriterIsHighestWeightThenName(t *testing.T) {
	v := NewView([]Server{
		{Name: "c", WriterWeight: 10}, {Name: "b", WriterWeight: 100}, {Name: "a", WriterWeight: 100},
	})
	if w, _ := v.Load().Writer(); w.Name != "a" {
		t.Fatalf("writer %s, want a (tie on weight broken by name)", w.Name)
	}
	v.SetHealth("a", false, "unreachable")
	if w, _ := v.Load().Writer(); w.Name != "b" {
		t.Fatalf("writer %s after a went offline, want b", w.Name)
	}
	v.SetHealth("b", false, "unreachable")
	v.SetHealth("c", false, "unreachable")
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

func TestReadsFallBackToWriter(t *testing.T) {
	v := NewView([]Server{{Name: "w", WriterWeight: 1}, {Name: "r", ReaderWeight: 1}})
	v.SetHealth("r", false, "down")
	if s, ok := v.Load().PickReader(); !ok || s.Name != "w" {
		t.Fatalf("PickReader = %v %v, want the writer when no reader is online", s.Name, ok)
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

type testErr struct{}

func (testErr) Error() string { return "test" }

var errTest = testErr{}
