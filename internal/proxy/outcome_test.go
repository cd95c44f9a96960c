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
		nothing          bool
	}{
		{"COMMIT", true, true, "may or may not have committed", false},
		{"INSERT INTO t VALUES (1)", true, true, "rolled back (its COMMIT was never sent)", true},
		{"UPDATE t SET a = 1", true, false, "rolled back (its COMMIT was never sent)", true},
		{"SELECT * FROM t", true, true, "rolled back (its COMMIT was never sent)", true},
		{"BEGIN", true, true, "may have committed your transaction", false},
		{"ALTER TABLE t ADD c INT", true, true, "may or may not have committed", false},
		{"CALL p()", true, true, "may have committed your transaction", false},
		{"INSERT INTO t VALUES (1)", false, true, "may or may not have committed", false},
		{"INSERT INTO t VALUES (1)", false, false, "any transaction it opened was rolled back", true},
		{"SELECT 1", false, true, "changed nothing", true},
		{"INSERT INTO t VALUES (1); COMMIT", false, false, "may or may not have committed", false},
	}
	for _, c := range cases {
		if got, nothing := interrupted(sqlclass.Classify(c.q), c.inTx, c.autocommit); !strings.Contains(got, c.want) || nothing != c.nothing {
			t.Errorf("interrupted(%q, inTx=%v, autocommit=%v) = %q, %v; want …%s…, %v", c.q, c.inTx, c.autocommit, got, nothing, c.want, c.nothing)
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
