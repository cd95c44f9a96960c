package replica

import "testing"

func TestChooseMember(t *testing.T) {
	up := func(a string) Member { return Member{Addr: a, Reachable: true, Fit: true} }
	down := func(a string) Member { return Member{Addr: a} }
	donor := Member{Addr: "b", Reachable: true, Why: "Donor/Desynced"}
	src := up("c")
	src.HasSource = true
	for _, tc := range []struct {
		name    string
		ms      []Member
		current string
		want    string
	}{
		{"first fit when none chosen", []Member{down("a"), up("b"), up("c")}, "", "b"},
		{"current kept while fit", []Member{up("a"), up("b")}, "b", "b"},
		{"the one set up, after a restart", []Member{up("a"), up("b"), src}, "", "c"},
		{"current down: the next fit", []Member{down("a"), up("b")}, "a", "b"},
		{"current not Synced: moved", []Member{up("a"), donor}, "b", "a"},
		{"none fit", []Member{down("a"), donor}, "a", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, why := ChooseMember(tc.ms, tc.current)
			if got != tc.want || why == "" {
				t.Fatalf("ChooseMember = %q (%s), want %q", got, why, tc.want)
			}
		})
	}
}
