package lifecycle

import (
	"strings"
	"testing"
	"time"

	"github.com/galeon-db/galeon/internal/discovery"
)

func TestChooseBackupNode(t *testing.T) {
	n := func(name string, synced bool, committed int64) discovery.NodeFacts {
		return discovery.NodeFacts{Name: name, Synced: synced, LastCommitted: committed}
	}
	for _, tc := range []struct {
		name    string
		nodes   []discovery.NodeFacts
		writer  string
		drained []string
		want    string
		err     string
	}{
		{"never the writer", []discovery.NodeFacts{n("node1", true, 90), n("node2", true, 80)}, "node1", nil, "node2", ""},
		{"the most advanced", []discovery.NodeFacts{n("node1", true, 90), n("node2", true, 80), n("node3", true, 85)}, "node1", nil, "node3", ""},
		{"then by name", []discovery.NodeFacts{n("node3", true, 80), n("node2", true, 80), n("node1", true, 90)}, "node1", nil, "node2", ""},
		{"not a donor or joiner", []discovery.NodeFacts{n("node1", true, 90), n("node2", false, 95), n("node3", true, 70)}, "node1", nil, "node3", ""},
		{"not one an operator drained", []discovery.NodeFacts{n("node1", true, 90), n("node2", true, 95), n("node3", true, 70)}, "node1", []string{"node2"}, "node3", ""},
		{"only the writer", []discovery.NodeFacts{n("node1", true, 90), n("node2", false, 80)}, "node1", nil, "", "no Synced node other than the writer (node1)"},
		{"every other drained", []discovery.NodeFacts{n("node1", true, 90), n("node2", true, 95)}, "node1", []string{"node2"}, "", "has not drained (node2)"},
		{"no writer", []discovery.NodeFacts{n("node1", true, 90)}, "", nil, "node1", ""},
	} {
		got, err := ChooseBackupNode(tc.nodes, tc.writer, tc.drained)
		if got != tc.want || (err == nil) != (tc.err == "") || err != nil && !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%s: %q %v, want %q %q", tc.name, got, err, tc.want, tc.err)
		}
	}
}

// live tells an operation another galeon still runs (written lately, not
// stopped) from one to take over.
func TestLive(t *testing.T) {
	now := time.Now()
	for _, tc := range []struct {
		name    string
		op      discovery.Operation
		running bool
	}{
		{"written a moment ago", discovery.Operation{Updated: now.Add(-2 * time.Second)}, true},
		{"silent past deadAfter: its galeon died", discovery.Operation{Updated: now.Add(-deadAfter - time.Second)}, false},
		{"stopped", discovery.Operation{Updated: now, Failed: "node died"}, false},
	} {
		if err := live(&tc.op); (err != nil) != tc.running {
			t.Errorf("%s: %v, want running %v", tc.name, err, tc.running)
		}
	}
}

func TestUnhealthy(t *testing.T) {
	synced := discovery.NodeFacts{Name: "node1", Up: true, Synced: true, LocalState: 4, LocalStateComment: "Synced"}
	joined := discovery.NodeFacts{Name: "node2", Up: true, LocalState: 3, LocalStateComment: "Joined"}
	desynced := discovery.NodeFacts{Name: "node2", Up: true, LocalState: 2, LocalStateComment: "Donor/Desynced"}
	joining := discovery.NodeFacts{Name: "node3", Up: true, LocalState: 1, LocalStateComment: "Joining"}
	down := discovery.NodeFacts{Name: "node3", Error: "connection refused"}
	for _, tc := range []struct {
		name      string
		nodes     []discovery.NodeFacts
		why       string
		transient bool
	}{
		{"all Synced", []discovery.NodeFacts{synced}, "", false},
		{"none registered", nil, "no node is registered", false},
		{"one catching up after a desync", []discovery.NodeFacts{synced, joined}, "node2 is not Synced (Joined)", true},
		{"one desynced", []discovery.NodeFacts{synced, desynced}, "node2 is not Synced (Donor/Desynced)", true},
		{"one receiving a state transfer", []discovery.NodeFacts{synced, joining}, "node3 is not Synced (Joining)", false},
		{"one down", []discovery.NodeFacts{synced, down}, "node3 is not Synced", false},
		{"catching up, and one down", []discovery.NodeFacts{synced, joined, down}, "node2 is not Synced (Joined)", false},
	} {
		why, transient := unhealthy(tc.nodes)
		if transient != tc.transient || (why == "") != (tc.why == "") || !strings.Contains(why, tc.why) {
			t.Errorf("%s: %q %v, want %q %v", tc.name, why, transient, tc.why, tc.transient)
		}
	}
}
