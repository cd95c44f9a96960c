package proxy

import (
	"fmt"
	"testing"
)

func TestEventLogKeepsTheNewestNewestFirst(t *testing.T) {
	var l eventLog
	if got := l.list(); len(got) != 0 {
		t.Fatalf("empty log lists %v", got)
	}
	for i := 1; i <= maxEvents+5; i++ {
		l.add(EventNodeState, "node1", fmt.Sprint(i))
	}
	got := l.list()
	if len(got) != maxEvents {
		t.Fatalf("kept %d events, want the bound %d", len(got), maxEvents)
	}
	if got[0].ID != maxEvents+5 || got[0].Detail != fmt.Sprint(maxEvents+5) {
		t.Errorf("newest is %+v, want id %d", got[0], maxEvents+5)
	}
	if last := got[len(got)-1]; last.ID != 6 {
		t.Errorf("oldest kept is id %d, want 6", last.ID)
	}
	for i := 1; i < len(got); i++ {
		if got[i].ID != got[i-1].ID-1 || got[i].At.After(got[i-1].At) {
			t.Fatalf("events %d and %d out of order: %+v %+v", i-1, i, got[i-1], got[i])
		}
	}
}
