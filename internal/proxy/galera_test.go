package proxy

import (
	"strings"
	"testing"

	"github.com/galeon-db/galeon/internal/mysqlproto"
	"github.com/galeon-db/galeon/internal/topology"
)

// TestOneEventPerStateChange: the details a node's view state goes through
// in a 60 s partition and its healing (issue 25 had one event per missed
// check: 361 of 388) make one node_state event per change of state or of
// its cause.
func TestOneEventPerStateChange(t *testing.T) {
	seq := []string{
		"ONLINE",
		"OFFLINE: unreachable after 2 missed checks (dial tcp 10.0.0.1:3306: i/o timeout)",
		"OFFLINE: unreachable after 2 missed checks (context deadline exceeded)",
		"OFFLINE: unreachable: dial tcp 10.0.0.1:3306: connect: connection refused",
		"OFFLINE: unreachable after 2 missed checks (invalid connection)",
		"OFFLINE: non-Primary (wsrep_cluster_status=non-Primary)",
		"OFFLINE: non-Primary (wsrep_cluster_status=Disconnected)",
		"OFFLINE: not Synced: Joining",
		"OFFLINE: not Synced: Joined",
		"OFFLINE: recovering: 1 of 3 good checks",
		"OFFLINE: recovering: 2 of 3 good checks",
		"ONLINE",
		"ONLINE: recv queue 150 > max 100",
		"ONLINE: recv queue 420 > max 100",
		"ONLINE",
		"DRAINING: operator drain",
	}
	want := []string{"ONLINE", seq[1], seq[5], seq[7], seq[9], "ONLINE", seq[12], "ONLINE", seq[15]}
	var got []string
	last := ""
	for _, d := range seq {
		if g := stateGist(d); g != last {
			got = append(got, d)
			last = g
		}
	}
	if len(got) != len(want) {
		t.Fatalf("events:\n%q\nwant:\n%q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("event %d: %q, want %q", i, got[i], want[i])
		}
	}
}

// TestWriterChangedNamesNoEmptyNode: 9002 names the new writer only when
// there is one (issue 25: "the writer changed from dc1-1 to  while").
func TestWriterChangedNamesNoEmptyNode(t *testing.T) {
	v := topology.NewView([]topology.Server{{Name: "dc1-1", WriterWeight: 100}, {Name: "dc1-3", WriterWeight: 50}})
	v.SetHealth("dc1-1", false, "non-Primary (wsrep_cluster_status=non-Primary)")
	v.SetHealth("dc1-3", false, "non-Primary (wsrep_cluster_status=non-Primary)")
	v.SetWriter("", 0)
	v.CommitWriter("dc1-1", "", 0)
	e := writerChanged("dc1-1", v.Load())
	if e.Code != mysqlproto.ErGaleonWriterChanged || strings.Contains(e.Message, "to  ") ||
		!strings.Contains(e.Message, "the writer dc1-1 was fenced while your transaction was open and no node has the writer role yet (dc1-1 offline (non-Primary") {
		t.Errorf("no writer: %d %q", e.Code, e.Message)
	}
	t.Logf("%d %s", e.Code, e.Message)
	v.SetHealth("dc1-3", true, "")
	v.SetWriter("dc1-3", 0)
	if e := writerChanged("dc1-1", v.Load()); !strings.Contains(e.Message, "the writer changed from dc1-1 to dc1-3 while your transaction was open; it was rolled back") {
		t.Errorf("new writer: %q", e.Message)
	}
}
