package outcome

import (
	"errors"
	"strings"
	"testing"
)

func TestSettle(t *testing.T) {
	m := Marker{Slot: 7, Token: 42}
	down := errors.New("dial tcp: i/o timeout")
	cases := []struct {
		name  string
		looks []Look
		want  Verdict
		how   string
	}{
		{"no node answers", []Look{{Node: "n1", Old: true, Err: down}, {Node: "n2", Err: down}}, Pending, "i/o timeout"},
		{"no node at all", nil, Pending, "no node to ask"},
		{"survivor still counts the hung writer", []Look{{Node: "n1", Old: true, Err: down}, {Node: "n2", Primary: true, ListsOld: true}}, Pending, "still counts"},
		{"survivor still counts it but has the marker", []Look{{Node: "n2", Primary: true, ListsOld: true, Found: true, Token: 42}}, Committed, "found on n2"},
		{"survivors' view without the old writer, marker absent", []Look{{Node: "n1", Old: true, Err: down}, {Node: "n2", Primary: true}}, NotCommitted, "without the old writer"},
		{"survivors' view without it, an older token", []Look{{Node: "n2", Primary: true, Found: true, Token: 41}}, NotCommitted, "n2"},
		{"survivors' view without it, marker there", []Look{{Node: "n2", Primary: true, Found: true, Token: 42}}, Committed, "found on n2"},
		{"old writer thawed, its thread ended, marker there", []Look{{Node: "n1", Old: true, Primary: true, ThreadGone: true, Found: true, Token: 42}}, Committed, "found on n1"},
		{"old writer thawed, its thread ended, marker absent", []Look{{Node: "n1", Old: true, Primary: true, ThreadGone: true, Found: true, Token: 41}}, NotCommitted, "ended there"},
		{"old writer's thread still there", []Look{{Node: "n1", Old: true, Primary: true, Token: 41, Found: true}}, Pending, "still there"},
		{"old writer outside a Primary component proves no absence", []Look{{Node: "n1", Old: true, ThreadGone: true}}, Pending, "not in a Primary component"},
		{"old writer outside a Primary component proves a commit", []Look{{Node: "n1", Old: true, ThreadGone: true, Found: true, Token: 42}}, Committed, "found on n1"},
		{"a non-Primary survivor proves no absence", []Look{{Node: "n3"}}, Pending, "not in a Primary component"},
		{"a later proof of commit wins over an earlier absence", []Look{{Node: "n2", Primary: true}, {Node: "n3", Primary: true, Found: true, Token: 42}}, Committed, "found on n3"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v, how := Settle(m, c.looks)
			if v != c.want || !strings.Contains(how, c.how) {
				t.Errorf("Settle = %s (%s); want %s (…%s…)", v, how, c.want, c.how)
			}
		})
	}
}

func TestStatements(t *testing.T) {
	m := Marker{Slot: 1<<40 | 3, Token: 99}
	if got := m.Statement(false); !strings.Contains(got, "VALUES (1099511627779, 99, NOW(6))") || !strings.HasPrefix(got, "INSERT INTO galeon.commit_marker") {
		t.Errorf("Statement(false) = %s", got)
	}
	if got := m.Statement(true); got != "UPDATE galeon.commit_marker SET token = 99, at = NOW(6) WHERE slot = 1099511627779" {
		t.Errorf("Statement(true) = %s", got)
	}
	if got := ReadStatement(5); got != "SET STATEMENT wsrep_sync_wait=1 FOR SELECT * FROM galeon.commit_marker WHERE slot = 5" {
		t.Errorf("ReadStatement = %s", got)
	}
	if got := m.WrappedStatement(true); got != "UPDATE galeon.commit_marker SET token = 99, at = NOW(6), rc = @galeon_rc, lid = @galeon_lid WHERE slot = 1099511627779 AND @@in_transaction" {
		t.Errorf("WrappedStatement(true) = %s", got)
	}
	if got := m.WrappedStatement(false); got != "INSERT INTO galeon.commit_marker (slot, token, at, rc, lid) SELECT 1099511627779, 99, NOW(6), @galeon_rc, @galeon_lid FROM DUAL WHERE @@in_transaction "+
		"ON DUPLICATE KEY UPDATE token = VALUES(token), at = VALUES(at), rc = VALUES(rc), lid = VALUES(lid)" {
		t.Errorf("WrappedStatement(false) = %s", got)
	}
	looks := []Look{{Node: "n1", Found: true, Token: 98, RC: 5, Counted: true}, {Node: "n2", Found: true, Token: 99, RC: -1, LID: 7, Counted: true}}
	if rc, lid, ok := Counts(m, looks); !ok || rc != -1 || lid != 7 {
		t.Errorf("Counts = %d %d %v, want the counts stored with token 99", rc, lid, ok)
	}
	if _, _, ok := Counts(m, looks[:1]); ok {
		t.Error("Counts found counts of another token")
	}
	if !Unavailable(1142) || !Unavailable(1146) || Unavailable(1213) || Unavailable(1205) || Unavailable(1290) || Unavailable(1792) {
		t.Error("Unavailable: a missing grant or table turns the marker off; a deadlock, a timeout or a read-only server or transaction does not")
	}
}

func TestMarkerFailed(t *testing.T) {
	for code, want := range map[uint16]MarkerFailure{
		1146: TxIntact, 1142: TxIntact, 1054: TxIntact, 1044: TxIntact, 1049: TxIntact,
		1047: TxIntact, 1193: TxIntact, 1290: TxIntact, 1792: TxIntact,
		1213: TxRolledBack, 1180: TxRolledBack, 1206: TxRolledBack,
		1205: TxUnknown, 1062: TxUnknown, 2013: TxUnknown, 0: TxUnknown,
	} {
		if got := MarkerFailed(code); got != want {
			t.Errorf("MarkerFailed(%d) = %d, want %d", code, got, want)
		}
	}
}
