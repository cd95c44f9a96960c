package proxy

import (
	"strings"
	"testing"

	"github.com/galeon-db/galeon/internal/sqlclass"
)

func TestInterrupted(t *testing.T) {
	cases := []struct {
		q                string
		inTx, autocommit bool
		want             string
	}{
		{"COMMIT", true, true, "may or may not have committed"},
		{"INSERT INTO t VALUES (1)", true, true, "rolled back (its COMMIT was never sent)"},
		{"UPDATE t SET a = 1", true, false, "rolled back (its COMMIT was never sent)"},
		{"SELECT * FROM t", true, true, "rolled back (its COMMIT was never sent)"},
		{"BEGIN", true, true, "may have committed your transaction"},
		{"ALTER TABLE t ADD c INT", true, true, "may or may not have committed"},
		{"CALL p()", true, true, "may have committed your transaction"},
		{"INSERT INTO t VALUES (1)", false, true, "may or may not have committed"},
		{"INSERT INTO t VALUES (1)", false, false, "any transaction it opened was rolled back"},
		{"SELECT 1", false, true, "changed nothing"},
		{"INSERT INTO t VALUES (1); COMMIT", false, false, "may or may not have committed"},
	}
	for _, c := range cases {
		if got := interrupted(sqlclass.Classify(c.q), c.inTx, c.autocommit); !strings.Contains(got, c.want) {
			t.Errorf("interrupted(%q, inTx=%v, autocommit=%v) = %q; want …%s…", c.q, c.inTx, c.autocommit, got, c.want)
		}
	}
}

func TestChangesData(t *testing.T) {
	for q, want := range map[string]bool{
		"INSERT INTO t VALUES (1)": true, "UPDATE t SET a = 1": true, "DELETE FROM t": true, "REPLACE INTO t VALUES (1)": true,
		"CALL p()": true, "SELECT * FROM t FOR UPDATE": false, "SELECT 1": false, "BEGIN": false, "COMMIT": false,
		"SAVEPOINT a": false, "SET @a = 1": false,
	} {
		if got := changesData(sqlclass.Classify(q)); got != want {
			t.Errorf("changesData(%q) = %v, want %v", q, got, want)
		}
	}
}
