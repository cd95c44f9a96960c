package backend

import "testing"

func TestGTIDAndApplied(t *testing.T) {
	for _, tc := range []struct {
		in string
		ok bool
		g  GTID
	}{
		{"0-1-27", true, GTID{"0-1", 27}},
		{"10-3-18446744073709551615", true, GTID{"10-3", 18446744073709551615}},
		{"", false, GTID{}},
		{"0-27", false, GTID{}},
		{"a-1-x", false, GTID{}},
		{"0-1-2-3", false, GTID{}},
	} {
		g, ok := ParseGTID(tc.in)
		if ok != tc.ok || g != tc.g {
			t.Errorf("ParseGTID(%q) = %v, %v", tc.in, g, ok)
		}
		if ok && g.String() != tc.in {
			t.Errorf("String() = %q", g.String())
		}
	}
	p := NewPool(ServerInfo{Name: "n"}, Options{})
	g5, g7, other := GTID{"0-1", 5}, GTID{"0-1", 7}, GTID{"0-2", 1}
	if p.Applied(g5) {
		t.Error("nothing applied yet")
	}
	p.NoteApplied(g7)
	p.NoteApplied(g5) // older: keeps 7
	if !p.Applied(g5) || !p.Applied(g7) || p.Applied(GTID{"0-1", 8}) || p.Applied(other) {
		t.Errorf("high-water mark wrong: %v", p.applied.Load())
	}
}
