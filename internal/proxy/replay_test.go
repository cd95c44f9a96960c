package proxy

import "testing"

// TestAnswerSum: errors are summed by code and their code kept (a
// replayed INSERT whose forced id was taken answers 1062); OKs by their
// counts, not their status flags.
func TestAnswerSum(t *testing.T) {
	sum := func(p []byte) answerSum {
		a := answerSum{on: true}
		a.packet(p, true)
		return a
	}
	dup := sum([]byte{0xFF, 0x26, 0x04, '#', '2', '3', '0', '0', '0', 'D', 'u', 'p'})
	if dup.code != 1062 || dup.dup != "#23000Dup" {
		t.Errorf("code %d %q, want 1062 and its message", dup.code, dup.dup)
	}
	other := sum([]byte{0xFF, 0x26, 0x04, '#', '2', '3', '0', '0', '0', 'x'})
	if other.h != dup.h {
		t.Errorf("errors with one code but other texts sum differently")
	}
	okA := sum([]byte{0x00, 1, 8, 0x02, 0x00, 0, 0})
	okB := sum([]byte{0x00, 1, 8, 0x23, 0x00, 1, 0})
	if okA.h != okB.h || okA.code != 0 || okA.insertID != 8 || okA.affected != 1 {
		t.Errorf("OKs with equal counts: %+v, %+v", okA, okB)
	}
	if okC := sum([]byte{0x00, 1, 9, 0x02, 0x00, 0, 0}); okC.h == okA.h {
		t.Errorf("OKs with other insert ids sum alike")
	}
}
