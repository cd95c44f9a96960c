// Package testkit holds what integration tests of several packages need
// alike: the galeon binary built once per test binary, and a polling wait
// that reports when a condition first held (to time what tests measure).
package testkit

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
)

// RunWithGaleon builds the galeon CLI into a temporary directory, runs the
// tests with *bin set to it, and removes it; for TestMain.
func RunWithGaleon(m *testing.M, bin *string) int {
	dir, err := os.MkdirTemp("", "galeon-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	*bin = filepath.Join(dir, "galeon")
	build := exec.Command("go", "build", "-o", *bin, "github.com/galeon-db/galeon/cmd/galeon")
	build.Stdout, build.Stderr = os.Stdout, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "build galeon:", err)
		return 1
	}
	return m.Run()
}

// WaitFor polls cond every 5 ms (fine enough to time routing changes) and
// returns when it first held; it fails the test after timeout.
func WaitFor(t testing.TB, timeout time.Duration, what string, cond func() bool) time.Time {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for: %s", timeout, what)
		}
		time.Sleep(5 * time.Millisecond)
	}
	return time.Now()
}

// CheckLedger asserts that every acknowledged write (ids of app.ledger,
// the table the load tests write) is on each node, reading with
// wsrep_sync_wait so that a node's apply lag is no excuse. A node outside
// a Primary component answers 1047: Galera can leave and re-form its
// component well after a fault (nodes thawed after SIGSTOP install
// singleton views ~10 s later, then merge again), so a 1047 is retried
// for up to a minute, logged, and only then fails the test.
func CheckLedger(t testing.TB, nodes map[string]*sql.DB, ids []int64) {
	t.Helper()
	want := map[int64]bool{}
	for _, id := range ids {
		want[id] = true
	}
	for name, db := range nodes {
		have, err := ledgerIDs(t, name, db, time.Minute)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		missing := 0
		for id := range want {
			if !have[id] {
				missing++
			}
		}
		if missing > 0 {
			t.Errorf("%s lacks %d of %d acknowledged writes", name, missing, len(want))
		}
	}
}

// ledgerIDs reads app.ledger's ids on one node, after a causal wait,
// retrying while the node is outside a Primary component (1047).
func ledgerIDs(t testing.TB, name string, db *sql.DB, bound time.Duration) (map[int64]bool, error) {
	t.Helper()
	start, refused := time.Now(), 0
	for {
		have, err := readLedger(db)
		var me *mysql.MySQLError
		if err != nil && errors.As(err, &me) && me.Number == 1047 && time.Since(start) < bound {
			refused++
			time.Sleep(50 * time.Millisecond)
			continue
		}
		if refused > 0 {
			t.Logf("%s was outside a Primary component for %s (%d reads refused) before the ledger check could read", name, time.Since(start).Round(time.Millisecond), refused)
		}
		return have, err
	}
}

// readLedger reads app.ledger's ids with wsrep_sync_wait on one connection.
func readLedger(db *sql.DB) (map[int64]bool, error) {
	ctx := context.Background()
	conn, err := db.Conn(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "SET SESSION wsrep_sync_wait = 1"); err != nil {
		return nil, err
	}
	rows, err := conn.QueryContext(ctx, "SELECT id FROM app.ledger")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	have := map[int64]bool{}
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		have[id] = true
	}
	return have, rows.Err()
}
