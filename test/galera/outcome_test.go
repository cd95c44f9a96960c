package galera_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/galeon-db/galeon/internal/sandbox/sandboxtest"
)

// TestCommitInFlight sends a COMMIT to a writer that cannot answer (it is
// frozen with SIGSTOP, so the COMMIT waits in its socket) and makes each
// outcome happen for certain:
//
//   - committed: the writer is thawed as soon as galeon has fenced it,
//     before Galera evicts it, so it runs the COMMIT it received and
//     replicates it (the "9002 … rolled back" that had committed);
//   - not committed: the writer is thawed only after the survivors formed
//     a Primary component without it, so its COMMIT can no longer be
//     ordered;
//   - not committed, the writer killed (kill -9) with the COMMIT unread.
//
// In each case the client's answer must be the truth, read back from
// every node: OK and the row there once, or 9002 saying it did not
// commit and the row nowhere.
func TestCommitInFlight(t *testing.T) {
	r := newRig(t, nil)
	ctx := context.Background()
	// viewSeen: when the test saw the survivors' view without the writer.
	var viewSeen time.Time
	for _, tc := range []struct {
		name      string
		committed bool
		fault     func(t *testing.T, writer string)
	}{
		{"thawed after the fence, before Galera's eviction", true, func(t *testing.T, w string) {
			r.waitWriterNot(t, w, 30*time.Second)
			if err := r.sb.Resume(w); err != nil {
				t.Fatal(err)
			}
		}},
		{"thawed after the survivors' view without it", false, func(t *testing.T, w string) {
			r.waitPrimaryWithout(t, w, 30*time.Second)
			viewSeen = time.Now()
			if err := r.sb.Resume(w); err != nil {
				t.Fatal(err)
			}
		}},
		{"killed with the COMMIT unread", false, func(t *testing.T, w string) {
			if err := r.sb.Kill(w); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r.waitWhole(t)
			w, _ := r.p.View().Load().Writer()
			conn, err := r.db.Conn(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			tag := fmt.Sprintf("inflight-%d", time.Now().UnixNano())
			if _, err := conn.ExecContext(ctx, "BEGIN"); err != nil {
				t.Fatal(err)
			}
			if _, err := conn.ExecContext(ctx, "INSERT INTO app.ledger (node, at) VALUES (?, NOW(6))", tag); err != nil {
				t.Fatal(err)
			}
			if err := r.sb.Pause(w.Name); err != nil {
				t.Fatal(err)
			}
			paused := time.Now()
			answer := make(chan error, 1)
			go func() {
				_, err := conn.ExecContext(ctx, "COMMIT")
				answer <- err
			}()
			tc.fault(t, w.Name)
			var got error
			select {
			case got = <-answer:
			case <-time.After(60 * time.Second):
				t.Fatal("no answer to the COMMIT after 60 s")
			}
			t.Logf("FIGURE COMMIT in flight on %s, %s: answered after %s: %v", w.Name, tc.name, time.Since(paused).Round(time.Millisecond), got)
			if !viewSeen.IsZero() {
				t.Logf("FIGURE answered %s after the test saw the survivors' view without %s", time.Since(viewSeen).Round(time.Millisecond), w.Name)
				viewSeen = time.Time{}
			}
			if w.Name != "" {
				// Whatever the case, the frozen node is thawed for the
				// next one (a no-op on a running or killed node).
				_ = r.sb.Resume(w.Name)
			}
			var me *mysql.MySQLError
			switch {
			case tc.committed && got != nil:
				t.Errorf("COMMIT answered %v; it committed (the node ran it after the thaw)", got)
			case !tc.committed && (!errors.As(got, &me) || me.Number != 9002 || !strings.Contains(me.Message, "did not commit")):
				t.Errorf("COMMIT answered %v; want 9002 saying that it did not commit", got)
			}
			r.waitWhole(t)
			want := 0
			if tc.committed {
				want = 1
			}
			for _, node := range r.sb.Nodes {
				name, db := node.Name, r.direct(t, node.Name)
				var n int
				if err := db.QueryRow("SET STATEMENT wsrep_sync_wait=1 FOR SELECT COUNT(*) FROM app.ledger WHERE node = ?", tag).Scan(&n); err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				if n != want {
					t.Errorf("%s has the transaction's row %d times, want %d (client's answer: %v)", name, n, want, got)
				}
			}
		})
	}
	for _, c := range r.p.Counters() {
		if strings.HasPrefix(c.Name, "commits_") {
			t.Logf("%s = %d", c.Name, c.Value)
		}
	}
}

// waitWriterNot waits until the proxy's writer is a node other than old.
func (r *rig) waitWriterNot(t *testing.T, old string, d time.Duration) {
	t.Helper()
	sandboxtest.Eventually(t, d, "a writer other than "+old, func() error {
		if w, ok := r.p.View().Load().Writer(); !ok || w.Name == old {
			return fmt.Errorf("writer %q", w.Name)
		}
		return nil
	})
}

// waitPrimaryWithout waits until another node is in a Primary component
// that does not count node.
func (r *rig) waitPrimaryWithout(t *testing.T, node string, d time.Duration) {
	t.Helper()
	addr := ""
	for _, n := range r.sb.Nodes {
		if n.Name == node {
			addr = n.Addr()
		}
	}
	sandboxtest.Eventually(t, d, "a Primary component without "+node, func() error {
		for _, n := range r.sb.Nodes {
			if n.Name == node {
				continue
			}
			db := r.direct(t, n.Name)
			var status, members string
			err := db.QueryRow("SELECT MAX(IF(VARIABLE_NAME='WSREP_CLUSTER_STATUS', VARIABLE_VALUE, NULL)), "+
				"MAX(IF(VARIABLE_NAME='WSREP_INCOMING_ADDRESSES', VARIABLE_VALUE, NULL)) FROM information_schema.GLOBAL_STATUS").Scan(&status, &members)
			if err == nil && status == "Primary" && !strings.Contains(members, addr) {
				return nil
			}
		}
		return errors.New("every Primary node still counts it")
	})
}

// waitWhole waits until every node runs, is Primary, Synced in a 3-node
// view, and the proxy has a writer; a killed node is started again.
func (r *rig) waitWhole(t *testing.T) {
	t.Helper()
	for _, n := range r.sb.Nodes {
		if !r.sb.Running(n.Name) {
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			err := r.sb.StartNode(ctx, n.Name)
			cancel()
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	sandboxtest.Eventually(t, 2*time.Minute, "every node Primary, Synced, size 3, and a writer", func() error {
		for _, n := range r.sb.Nodes {
			name, db := n.Name, r.direct(t, n.Name)
			var status, state, size string
			err := db.QueryRow("SELECT MAX(IF(VARIABLE_NAME='WSREP_CLUSTER_STATUS', VARIABLE_VALUE, NULL)), "+
				"MAX(IF(VARIABLE_NAME='WSREP_LOCAL_STATE_COMMENT', VARIABLE_VALUE, NULL)), "+
				"MAX(IF(VARIABLE_NAME='WSREP_CLUSTER_SIZE', VARIABLE_VALUE, NULL)) FROM information_schema.GLOBAL_STATUS").Scan(&status, &state, &size)
			if err != nil || status != "Primary" || state != "Synced" || size != "3" {
				return fmt.Errorf("%s: %s %s size %s %v", name, status, state, size, err)
			}
		}
		for _, n := range r.sb.Nodes {
			if s, _ := r.p.View().Load().Server(n.Name); !s.Online {
				return fmt.Errorf("%s not ONLINE in the proxy: %s", n.Name, s.Reason)
			}
		}
		if _, ok := r.p.View().Load().Writer(); !ok {
			return errors.New("no writer")
		}
		return nil
	})
}

// direct is a connection to node as the sandbox has it now (a killed
// node's earlier handle is closed).
func (r *rig) direct(t *testing.T, node string) *sql.DB {
	t.Helper()
	db, err := r.sb.DB(node)
	if err != nil {
		t.Fatal(err)
	}
	return db
}
