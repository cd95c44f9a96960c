package agent

import "testing"

func TestFenceStep(t *testing.T) {
	cases := []struct {
		name string
		in   FenceInput
		act  FenceAction
		ours bool
	}{
		{"no fence, writable: nothing", FenceInput{}, FenceKeep, false},
		{"fence, writable: set read_only", FenceInput{Fenced: true}, FenceSet, true},
		{"fence, read-only since the agent set it: keep", FenceInput{Fenced: true, ReadOnly: true, Ours: true}, FenceKeep, true},
		{"fence, read-only and the agent restarted meanwhile: the fence's", FenceInput{Fenced: true, ReadOnly: true}, FenceKeep, true},
		{"fence, the operator's read_only from before: kept, not ours", FenceInput{Fenced: true, ReadOnly: true, OperatorReadOnly: true}, FenceKeep, false},
		{"lifted, read-only for the fence: clear", FenceInput{ReadOnly: true, Ours: true}, FenceClear, false},
		{"lifted, the operator's read_only: left", FenceInput{ReadOnly: true, OperatorReadOnly: true}, FenceKeep, false},
		{"lifted, made writable by hand meanwhile: nothing", FenceInput{Ours: true}, FenceKeep, false},
	}
	for _, c := range cases {
		act, ours := FenceStep(c.in)
		if act != c.act || ours != c.ours {
			t.Errorf("%s: %v, ours %v; want %v, ours %v", c.name, act, ours, c.act, c.ours)
		}
	}
}
