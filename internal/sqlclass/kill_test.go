package sqlclass

import "testing"

func TestKillTarget(t *testing.T) {
	cases := []struct {
		q         string
		id        uint32
		queryOnly bool
		ok        bool
	}{
		{"KILL 1073741825", 1073741825, false, true},
		{"kill query 1073741900;", 1073741900, true, true},
		{"KILL HARD CONNECTION 1073741826", 1073741826, false, true},
		{"KILL SOFT QUERY 1073741827", 1073741827, true, true},
		{"KILL 42", 42, false, true},                  // parsed; refused later: a node thread id
		{"KILL QUERY ID 1073741825", 0, false, false}, // a query id, not a connection
		{"KILL USER app", 0, false, false},
		{"KILL 99999999999", 0, false, false},
		{"KILL", 0, false, false},
	}
	for _, c := range cases {
		id, q, ok := KillTarget(c.q)
		if id != c.id || q != c.queryOnly || ok != c.ok {
			t.Errorf("%q: got (%d, %v, %v), want (%d, %v, %v)", c.q, id, q, ok, c.id, c.queryOnly, c.ok)
		}
	}
}
