// Package testkit holds what integration tests of several packages need
// alike: the galeon binary built once per test binary, and a polling wait
// that reports when a condition first held (to time what tests measure).
package testkit

import (
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
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
// wsrep_sync_wait so that a node's apply lag is no excuse.
func CheckLedger(t testing.TB, nodes map[string]*sql.DB, ids []int64) {
	t.Helper()
	want := map[int64]bool{}
	for _, id := range ids {
		want[id] = true
	}
	for name, db := range nodes {
		if _, err := db.Exec("SET SESSION wsrep_sync_wait = 1"); err != nil {
			t.Fatal(err)
		}
		rows, err := db.Query("SELECT id FROM app.ledger")
		if err != nil {
			t.Fatal(err)
		}
		have := map[int64]bool{}
		for rows.Next() {
			var id int64
			_ = rows.Scan(&id)
			have[id] = true
		}
		rows.Close()
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
