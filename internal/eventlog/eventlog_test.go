package eventlog

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"
)

func TestEventLogKeepsTheNewestNewestFirst(t *testing.T) {
	var l Log
	if got := l.List(); len(got) != 0 {
		t.Fatalf("empty log lists %v", got)
	}
	for i := 1; i <= maxEvents+5; i++ {
		l.Add(NodeState, "node1", fmt.Sprint(i))
	}
	got := l.List()
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

// TestEventsAreLogLines checks that every event is one structured log
// line with its kind, node, the writer epoch and the cause, at warning
// level for the kinds an operator must notice.
func TestEventsAreLogLines(t *testing.T) {
	var buf bytes.Buffer
	epoch := uint64(7)
	l := New(slog.New(slog.NewJSONHandler(&buf, nil)), func() uint64 { return epoch })
	l.Add(Drain, "node2", "operator drain: new transactions go elsewhere")
	epoch = 8
	l.Add(WriterChange, "node3", "from node1 to node3, epoch 8")
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("%d log lines for 2 events:\n%s", len(lines), buf.String())
	}
	want := []map[string]any{
		{"level": "INFO", "msg": "event", "id": 1.0, "kind": "drain", "node": "node2", "epoch": 7.0, "cause": "operator drain: new transactions go elsewhere"},
		{"level": "WARN", "msg": "event", "id": 2.0, "kind": "writer_change", "node": "node3", "epoch": 8.0, "cause": "from node1 to node3, epoch 8"},
	}
	for i, line := range lines {
		var got map[string]any
		if err := json.Unmarshal([]byte(line), &got); err != nil {
			t.Fatalf("line %d is not JSON: %s", i, line)
		}
		for k, v := range want[i] {
			if got[k] != v {
				t.Errorf("line %d: %s = %v, want %v (%s)", i, k, got[k], v, line)
			}
		}
	}
}

// TestNoiseKeepsTheIncident: a flood of one kind (a node flapping, or
// many nodes changing state through a long partition) evicts only older
// events of that kind: the incident's writer change and decisions stay,
// and the list is still in the order things happened.
func TestNoiseKeepsTheIncident(t *testing.T) {
	var l Log
	l.Add(WriterChange, "node1", "node1 is the writer at start")
	l.Add(NodeState, "node2", "OFFLINE: unreachable")
	l.Add(WriterChange, "node3", "from node2 to node3")
	l.Add(Decision, "node3", "epoch 4")
	for i := range 3 * maxEvents {
		l.Add(NodeState, "node2", fmt.Sprint("noise ", i))
	}
	l.Add(Switchover, "node1", "operator switchover from node3 to node1")
	got := l.List()
	if len(got) != maxEvents+4 {
		t.Fatalf("kept %d events, want %d node_state and the 4 others", len(got), maxEvents)
	}
	for i := 1; i < len(got); i++ {
		if got[i].ID >= got[i-1].ID {
			t.Fatalf("events %d and %d out of order: %d then %d", i-1, i, got[i-1].ID, got[i].ID)
		}
	}
	kept := map[string]int{}
	for _, e := range got {
		kept[e.Kind]++
	}
	if kept[WriterChange] != 2 || kept[Decision] != 1 || kept[Switchover] != 1 || kept[NodeState] != maxEvents {
		t.Errorf("kept by kind %v: want both writer changes, the decision, the switchover and %d node_state", kept, maxEvents)
	}
	if got[0].Kind != Switchover || got[len(got)-1].Detail != "node1 is the writer at start" {
		t.Errorf("newest %+v, oldest %+v", got[0], got[len(got)-1])
	}
	if got[len(got)-3].ID != 4 || got[len(got)-4].Detail != fmt.Sprint("noise ", 2*maxEvents) {
		t.Errorf("the oldest node_state kept is %+v, want noise %d just after the decision", got[len(got)-4], 2*maxEvents)
	}
	if l.Total() != int64(3*maxEvents+5) {
		t.Errorf("total %d", l.Total())
	}
}
