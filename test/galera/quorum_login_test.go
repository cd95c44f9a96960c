package galera_test

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/galeon-db/galeon/internal/testkit"
)

// TestLoginWithoutQuorum: while the cluster has lost quorum (two of three
// nodes paused with SIGSTOP, the third non-Primary), a client logs in
// through galeon as it would on the surviving node itself — galeon checks
// the password against its own accounts — and each statement gets the
// node's own answer, 1047; a wrong password is still refused. Once the
// nodes come back, statements succeed on the same connection and on new
// ones.
func TestLoginWithoutQuorum(t *testing.T) {
	r := newRig(t, nil)
	c := r.sb.Credentials
	open := func(addr, password string) *sql.DB {
		mc := mysql.NewConfig()
		mc.User, mc.Passwd, mc.Net, mc.Addr, mc.DBName = c.AppUser, password, "tcp", addr, "app"
		mc.Timeout, mc.ReadTimeout, mc.WriteTimeout = 5*time.Second, 20*time.Second, 20*time.Second
		db, err := sql.Open("mysql", mc.FormatDSN())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return db
	}
	code := func(err error) uint16 {
		var me *mysql.MySQLError
		if errors.As(err, &me) {
			return me.Number
		}
		return 0
	}
	ctx := context.Background()

	for _, n := range []string{"node2", "node3"} {
		if err := r.sb.Pause(n); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = r.sb.Resume(n) })
	}
	paused := time.Now()
	testkit.WaitFor(t, 60*time.Second, "node1 non-Primary", func() bool {
		var name, status string
		_ = r.nodes["node1"].QueryRow("SHOW STATUS LIKE 'wsrep_cluster_status'").Scan(&name, &status)
		return status == "non-Primary"
	})
	t.Logf("node1 non-Primary %s after pausing node2 and node3", time.Since(paused).Round(time.Millisecond))
	testkit.WaitFor(t, 10*time.Second, "galeon sees node1 non-Primary", func() bool {
		return strings.HasPrefix(r.state("node1"), "OFFLINE non-Primary")
	})

	// What the node itself does: it accepts the login (with a schema)
	// and refuses the statement with 1047.
	direct := open(r.sb.Nodes[0].Addr(), c.AppPassword)
	dc, err := direct.Conn(ctx)
	if err != nil {
		t.Fatalf("login directly on node1 without quorum: %v", err)
	}
	_, derr := dc.ExecContext(ctx, "INSERT INTO app.ledger (node, at) VALUES ('direct', NOW(6))")
	dc.Close()
	if code(derr) != 1047 {
		t.Fatalf("node1 itself answered %v, want 1047 (this test's reference)", derr)
	}
	t.Logf("node1 itself: %v", derr)

	// Through galeon: the login succeeds at once ...
	through := open(r.addr, c.AppPassword)
	start := time.Now()
	conn, err := through.Conn(ctx)
	if err != nil {
		t.Fatalf("login through galeon without quorum: %v", err)
	}
	defer conn.Close()
	if err := conn.PingContext(ctx); err != nil {
		t.Fatalf("ping through galeon without quorum: %v", err)
	}
	login := time.Since(start)
	t.Logf("login through galeon without quorum took %s", login.Round(time.Microsecond))
	if login > time.Second {
		t.Errorf("login took %s: it must not wait for a node (no_backend_timeout is 2s)", login)
	}
	// ... a wrong password is still refused ...
	if err := open(r.addr, "wrong-password").PingContext(ctx); code(err) != 1045 {
		t.Errorf("wrong password without quorum: %v, want 1045", err)
	}
	// ... and statements get the node's 1047, saying why.
	for _, q := range []string{"INSERT INTO app.ledger (node, at) VALUES ('galeon', NOW(6))", "SELECT COUNT(*) FROM app.ledger"} {
		start := time.Now()
		_, err := conn.ExecContext(ctx, q)
		if code(err) != 1047 || !strings.Contains(err.Error(), "WSREP has not yet prepared node for application use") ||
			!strings.Contains(err.Error(), "no node is in a Primary component") {
			t.Errorf("%s without quorum: %v, want 1047 saying no node is in a Primary component", q, err)
		}
		t.Logf("%s: after %s: %v", q, time.Since(start).Round(time.Millisecond), err)
	}

	// The nodes come back: the same connection and a new one work.
	for _, n := range []string{"node2", "node3"} {
		if err := r.sb.Resume(n); err != nil {
			t.Fatal(err)
		}
	}
	resumed := time.Now()
	var lastErr error
	testkit.WaitFor(t, 90*time.Second, "a write on the same connection after the nodes came back", func() bool {
		_, lastErr = conn.ExecContext(ctx, "INSERT INTO app.ledger (node, at) VALUES ('galeon', NOW(6))")
		return lastErr == nil
	})
	t.Logf("first write on the same connection %s after SIGCONT", time.Since(resumed).Round(time.Millisecond))
	// A new connection reads what that write committed. It may be routed
	// to a reader that has certified the write but not yet applied it
	// (Galera applies asynchronously, and a node that just came back can
	// still be applying): a causal read (wsrep_sync_wait, which galeon
	// keeps for the session on whichever node serves it) is how a client
	// asks to see writes made on other connections.
	mc := mysql.NewConfig()
	mc.User, mc.Passwd, mc.Net, mc.Addr, mc.DBName = c.AppUser, c.AppPassword, "tcp", r.addr, "app"
	mc.Params = map[string]string{"wsrep_sync_wait": "1"}
	fresh, err := sql.Open("mysql", mc.FormatDSN())
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Close()
	var n int
	if err := fresh.QueryRowContext(ctx, "SELECT COUNT(*) FROM app.ledger WHERE node = 'galeon'").Scan(&n); err != nil || n < 1 {
		t.Errorf("a new connection after the nodes came back: %d rows, %v", n, err)
	}
}
