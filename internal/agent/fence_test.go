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
		{"fence, read-only and marked (set by the agent, before a restart too): keep", FenceInput{Fenced: true, ReadOnly: true, Ours: true}, FenceKeep, true},
		{"fence, read-only without the mark: the operator's, kept, not ours", FenceInput{Fenced: true, ReadOnly: true}, FenceKeep, false},
		{"fence, marked but writable (setting it failed): set again", FenceInput{Fenced: true, Ours: true}, FenceSet, true},
		{"lifted, read-only and marked: clear", FenceInput{ReadOnly: true, Ours: true}, FenceClear, false},
		{"lifted, the operator's read_only: left", FenceInput{ReadOnly: true}, FenceKeep, false},
		{"lifted, marked but made writable by hand: the mark goes", FenceInput{Ours: true}, FenceKeep, false},
	}
	for _, c := range cases {
		act, ours := FenceStep(c.in)
		if act != c.act || ours != c.ours {
			t.Errorf("%s: %v, ours %v; want %v, ours %v", c.name, act, ours, c.act, c.ours)
		}
	}
}
