package replica

import "testing"

func TestChooseMember(t *testing.T) {
	all := []string{"a", "b", "c"}
	up := func(a string) Member { return Member{Addr: a, Reachable: true, Fit: true, Component: all} }
	down := func(a string) Member { return Member{Addr: a, Why: "connection refused"} }
	alone := func(m Member, comp ...string) Member { m.Component = comp; return m }
	donor := Member{Addr: "b", Reachable: true, Why: "Donor/Desynced"}
	set := func(m Member) Member { m.HasSource = true; return m }
	running := func(m Member) Member { m.HasSource, m.Running = true, true; return m }
	for _, tc := range []struct {
		name    string
		ms      []Member
		current string
		want    string
	}{
		{"first fit when none chosen", []Member{alone(down("a"), "b", "c"), alone(up("b"), "b", "c"), alone(up("c"), "b", "c")}, "", "b"},
		{"current kept while fit", []Member{up("a"), up("b")}, "b", "b"},
		{"the one set up, after a restart", []Member{up("a"), up("b"), set(up("c"))}, "", "c"},
		{"the running one before one only set up", []Member{set(up("a")), running(up("b"))}, "", "b"},
		{"current dropped by Galera: the next fit", []Member{down("a"), alone(up("b"), "b", "c"), alone(up("c"), "b", "c")}, "a", "b"},
		{"current unreachable but still in the component: not moved", []Member{down("a"), up("b"), up("c")}, "a", ""},
		{"current not Synced: moved", []Member{up("a"), donor}, "b", "a"},
		{"none fit", []Member{down("a"), donor}, "a", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, why := ChooseMember(tc.ms, tc.current)
			if got != tc.want || why == "" {
				t.Fatalf("ChooseMember = %q (%s), want %q", got, why, tc.want)
			}
			t.Log(why)
		})
	}
}

func TestClusterApplyError(t *testing.T) {
	for msg, want := range map[string]bool{
		"Node has dropped from cluster":                                                                                 true,
		"Error 'WSREP has not yet prepared node for application use' on query":                                          true,
		"Could not execute Write_rows_v1 event on table app.t; Duplicate entry '3' for key 'PRIMARY', Error_code: 1062": false,
		"": false,
	} {
		if got := ClusterApplyError(msg); got != want {
			t.Errorf("ClusterApplyError(%q) = %v, want %v", msg, got, want)
		}
	}
}
