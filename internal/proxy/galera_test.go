package proxy

import "testing"

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
