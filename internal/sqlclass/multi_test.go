package sqlclass

import "testing"

func TestStatements(t *testing.T) {
	r := Classify("SET @a = 'x;y'; /* galeon:writer */ SELECT @a ;; UPDATE t SET b = 1 -- done\n;")
	if !r.MultiStatement {
		t.Fatal("not a multi-statement")
	}
	parts := r.Statements()
	want := []struct {
		text string
		kind Kind
		hint Hint
	}{
		{"SET @a = 'x;y'", Set, HintNone},
		{"/* galeon:writer */ SELECT @a", Select, HintWriter},
		{"UPDATE t SET b = 1 -- done", Update, HintNone},
	}
	if len(parts) != len(want) {
		t.Fatalf("got %d parts: %+v", len(parts), parts)
	}
	for i, w := range want {
		p := parts[i]
		if p.Text != w.text || p.Result.Kind != w.kind || p.Result.Hint != w.hint {
			t.Errorf("part %d = %q %v %v, want %q %v %v", i, p.Text, p.Result.Kind, p.Result.Hint, w.text, w.kind, w.hint)
		}
		if p.Result.Statements() != nil || p.Result.MultiStatement {
			t.Errorf("part %d has parts of its own", i)
		}
	}
	if r.Kind != Update || !r.IsWrite() || !r.UsesUserVars || r.Hint != HintWriter {
		t.Errorf("merged = %+v", r)
	}
	if got := Classify("SELECT 1").Statements(); got != nil {
		t.Errorf("single statement has parts %+v", got)
	}
}

// TestMultiCompound checks that a stored-program body keeps its ';'s, and
// that text after it is still a statement of its own only when the body
// did not swallow it.
func TestMultiCompound(t *testing.T) {
	r := Classify("CREATE PROCEDURE p() BEGIN SELECT 1; SELECT 2; END")
	if r.MultiStatement || r.Kind != DDL {
		t.Errorf("procedure split: %+v", r)
	}
	r = Classify("CREATE PROCEDURE p() SELECT 1; SELECT 2")
	if !r.MultiStatement || len(r.Statements()) != 2 {
		t.Errorf("procedure without body not split: %+v", r)
	}
}

func TestTxnBoundaries(t *testing.T) {
	tests := []struct {
		sql          string
		starts, ends bool
	}{
		{"BEGIN", true, true}, // BEGIN commits the open transaction first
		{"START TRANSACTION READ ONLY", true, true},
		{"COMMIT", false, true},
		{"ROLLBACK", false, true},
		{"COMMIT AND CHAIN", true, true},
		{"ROLLBACK TO SAVEPOINT a", false, false},
		{"SAVEPOINT a", false, false},
		{"RELEASE SAVEPOINT a", false, false},
		{"CREATE TABLE t (a int)", false, true},
		{"CREATE TEMPORARY TABLE t (a int)", false, false},
		{"SET autocommit = 1", false, true},
		{"SET autocommit = 0", false, false},
		{"LOCK TABLES t WRITE", false, true},
		{"SELECT 1", false, false},
		{"UPDATE t SET a = 1", false, false},
		{"BEGIN; UPDATE t SET a = 1; COMMIT", false, true},
		{"COMMIT; BEGIN", true, true},
		{"BEGIN; SELECT 1", true, true},
		{"SELECT 1; SELECT 2", false, false},
		{"SELECT 1; ROLLBACK TO SAVEPOINT a", false, false},
	}
	for _, tc := range tests {
		r := Classify(tc.sql)
		if r.StartsTxn() != tc.starts || r.EndsTxn() != tc.ends {
			t.Errorf("%q: StartsTxn=%v EndsTxn=%v, want %v %v", tc.sql, r.StartsTxn(), r.EndsTxn(), tc.starts, tc.ends)
		}
	}
}
