package foundation

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/galeon-db/galeon/internal/sandbox"
	"github.com/galeon-db/galeon/internal/sandbox/sandboxtest"
)

// TestSandboxLifecycle runs one 3-node sandbox through everything a
// developer does with it: replication, a crash and IST rejoin, scaling up
// and down, and a full stop and start.
func TestSandboxLifecycle(t *testing.T) {
	t0 := time.Now()
	sb := sandboxtest.New(t, sandbox.Options{Nodes: 3})
	t.Logf("FIGURE sandbox up --nodes 3: %.1fs", time.Since(t0).Seconds())
	ctx := context.Background()

	t.Run("all synced in one primary component", func(t *testing.T) {
		uuid := ""
		for _, n := range sb.Nodes {
			if got := sandboxtest.Status(t, sb, n.Name, "wsrep_local_state_comment"); got != "Synced" {
				t.Errorf("%s state %q, want Synced", n.Name, got)
			}
			if got := sandboxtest.Status(t, sb, n.Name, "wsrep_cluster_size"); got != "3" {
				t.Errorf("%s cluster size %s, want 3", n.Name, got)
			}
			u := sandboxtest.Status(t, sb, n.Name, "wsrep_cluster_state_uuid")
			if uuid != "" && u != uuid {
				t.Errorf("%s cluster uuid %s, node1 has %s", n.Name, u, uuid)
			}
			uuid = u
		}
	})

	t.Run("a write on node1 is readable on node2 and node3", func(t *testing.T) {
		db1 := sandboxtest.AppDB(t, sb, "node1")
		mustExec(t, db1, "CREATE TABLE app.repl (id INT PRIMARY KEY, v VARCHAR(32))")
		mustExec(t, db1, "INSERT INTO app.repl VALUES (1, 'from node1')")
		for _, n := range []string{"node2", "node3"} {
			db := sandboxtest.AppDB(t, sb, n)
			db.SetMaxOpenConns(1)
			// wsrep_sync_wait=1 makes the read wait for the write-set: a
			// causal read, no polling needed.
			mustExec(t, db, "SET SESSION wsrep_sync_wait=1")
			if got := sandboxtest.QueryString(t, db, "SELECT v FROM app.repl WHERE id=1"); got != "from node1" {
				t.Errorf("%s read %q", n, got)
			}
		}
	})

	t.Run("kill shrinks the cluster, status shows the node down, restart rejoins by IST", func(t *testing.T) {
		db1 := sandboxtest.AppDB(t, sb, "node1")
		if err := sb.Kill("node3"); err != nil {
			t.Fatal(err)
		}
		killed := time.Now()
		for _, n := range []string{"node1", "node2"} {
			defer func() {
				if t.Failed() {
					t.Logf("%s log after the kill:\n%s", n, sb.LogTail(n, 60))
				}
			}()
			sandboxtest.Eventually(t, 30*time.Second, n+" sees size 2", func() error {
				size := sandboxtest.Status(t, sb, n, "wsrep_cluster_size")
				status := sandboxtest.Status(t, sb, n, "wsrep_cluster_status")
				if size != "2" || status != "Primary" {
					return fmt.Errorf("size %s, status %s", size, status)
				}
				return nil
			})
		}
		t.Logf("FIGURE kill -9 to size 2 on survivors: %.2fs", time.Since(killed).Seconds())
		// Writes go on while node3 is down: it must catch up by IST.
		for i := 2; i <= 50; i++ {
			mustExec(t, db1, "INSERT INTO app.repl VALUES (?, 'while node3 down')", i)
		}

		out, err := galeon(t, "status", "--dir", sb.Dir, "--once", "--json", "--interval", "200ms")
		if err != nil {
			t.Fatalf("galeon status: %v\n%s", err, out)
		}
		var view struct {
			Nodes []struct {
				Node  string `json:"node"`
				Up    bool   `json:"up"`
				Error string `json:"error"`
				Size  int    `json:"size"`
			} `json:"nodes"`
		}
		if err := json.Unmarshal([]byte(out), &view); err != nil {
			t.Fatalf("status --json output %q: %v", out, err)
		}
		for _, n := range view.Nodes {
			switch {
			case n.Node == "node3" && (n.Up || n.Error == ""):
				t.Errorf("status shows killed node3 as up=%v error=%q", n.Up, n.Error)
			case n.Node != "node3" && (!n.Up || n.Size != 2):
				t.Errorf("status shows %s up=%v size=%d, want up, size 2", n.Node, n.Up, n.Size)
			}
		}
		text, err := galeon(t, "status", "--dir", sb.Dir, "--once", "--interval", "200ms")
		if err != nil || !strings.Contains(text, "node3") || !strings.Contains(text, "DOWN") {
			t.Errorf("text status does not show node3 DOWN (err %v):\n%s", err, text)
		}

		_, off := sb.ErrorLogSince("node3", 0)
		restart := time.Now()
		if err := sb.Restart(ctx, "node3"); err != nil {
			t.Fatal(err)
		}
		t.Logf("FIGURE restart after kill to Synced (incl. waiting for eviction): %.1fs", time.Since(restart).Seconds())
		lines, _ := sb.ErrorLogSince("node3", off)
		if !containsLine(lines, "IST received") {
			t.Errorf("node3 did not rejoin by IST; its log since restart has no 'IST received'")
		}
		db3 := sandboxtest.AppDB(t, sb, "node3")
		if got := sandboxtest.QueryString(t, db3, "SELECT COUNT(*) FROM app.repl"); got != "50" {
			t.Errorf("node3 has %s rows after rejoin, want 50", got)
		}
		if got := sandboxtest.Status(t, sb, "node3", "wsrep_cluster_size"); got != "3" {
			t.Errorf("cluster size after rejoin %s, want 3", got)
		}
	})

	t.Run("add grows to 4, remove shrinks back to 3", func(t *testing.T) {
		n, err := sb.Add(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range sb.Nodes {
			if got := sandboxtest.Status(t, sb, m.Name, "wsrep_cluster_size"); got != "4" {
				t.Errorf("%s size %s after add, want 4", m.Name, got)
			}
			// Every node's AUTO_INCREMENT series, the running ones
			// widened for the new node: increment 4, offset its number.
			db := sandboxtest.AppDB(t, sb, m.Name)
			want := fmt.Sprintf("4 %d", m.Index)
			if got := sandboxtest.QueryString(t, db, "SELECT CONCAT(@@global.auto_increment_increment, ' ', @@global.auto_increment_offset)"); got != want {
				t.Errorf("%s numbers ids with increment and offset %s after add, want %s", m.Name, got, want)
			}
		}
		db4 := sandboxtest.AppDB(t, sb, n.Name)
		if got := sandboxtest.QueryString(t, db4, "SELECT COUNT(*) FROM app.repl"); got != "50" {
			t.Errorf("new node has %s rows, want 50", got)
		}
		if err := sb.Remove(ctx, n.Name); err != nil {
			t.Fatal(err)
		}
		if len(sb.Nodes) != 3 {
			t.Fatalf("sandbox lists %d nodes after remove", len(sb.Nodes))
		}
		for _, m := range sb.Nodes {
			if got := sandboxtest.Status(t, sb, m.Name, "wsrep_cluster_size"); got != "3" {
				t.Errorf("%s size %s after remove, want 3", m.Name, got)
			}
		}
	})

	t.Run("stop and start keep the data", func(t *testing.T) {
		if err := sb.Stop(ctx); err != nil {
			t.Fatal(err)
		}
		for _, st := range sb.Status(ctx) {
			if st.Process != "stopped" {
				t.Errorf("%s is %s after stop", st.Name, st.Process)
			}
		}
		start := time.Now()
		if err := sb.Start(ctx); err != nil {
			t.Fatal(err)
		}
		t.Logf("FIGURE sandbox start after clean stop: %.1fs", time.Since(start).Seconds())
		for _, n := range sb.Nodes {
			db := sandboxtest.AppDB(t, sb, n.Name)
			if got := sandboxtest.QueryString(t, db, "SELECT COUNT(*) FROM app.repl"); got != "50" {
				t.Errorf("%s has %s rows after stop/start, want 50", n.Name, got)
			}
			if got := sandboxtest.Status(t, sb, n.Name, "wsrep_cluster_size"); got != "3" {
				t.Errorf("%s size %s after start, want 3", n.Name, got)
			}
		}
	})

	t.Run("full crash: start bootstraps from the most advanced node", func(t *testing.T) {
		// node1 crashes first; node2 and node3 take one more write, then
		// crash too. Bootstrapping from node1 (the lowest index) would lose
		// that write: start must recover positions and pick node2 or node3.
		if err := sb.Kill("node1"); err != nil {
			t.Fatal(err)
		}
		sandboxtest.Eventually(t, 30*time.Second, "node2 sees size 2", func() error {
			if s := sandboxtest.Status(t, sb, "node2", "wsrep_cluster_size"); s != "2" {
				return fmt.Errorf("size %s", s)
			}
			return nil
		})
		mustExec(t, sandboxtest.AppDB(t, sb, "node2"), "INSERT INTO app.repl VALUES (51, 'node1 never saw it')")
		for _, n := range []string{"node2", "node3"} {
			if err := sb.Kill(n); err != nil {
				t.Fatal(err)
			}
		}
		if err := sb.Start(ctx); err != nil {
			t.Fatal(err)
		}
		for _, n := range sb.Nodes {
			db := sandboxtest.AppDB(t, sb, n.Name)
			if got := sandboxtest.QueryString(t, db, "SELECT COUNT(*) FROM app.repl"); got != "51" {
				t.Errorf("%s has %s rows after crash recovery, want 51 (the last write must survive)", n.Name, got)
			}
		}
	})
}

// TestTwoSandboxesSideBySide checks that two sandboxes with different
// names and ports are separate clusters.
func TestTwoSandboxesSideBySide(t *testing.T) {
	a := sandboxtest.New(t, sandbox.Options{Nodes: 2})
	b := sandboxtest.New(t, sandbox.Options{Name: sandboxtest.Name(t) + "b", Nodes: 1})
	ua := sandboxtest.Status(t, a, "node1", "wsrep_cluster_state_uuid")
	ub := sandboxtest.Status(t, b, "node1", "wsrep_cluster_state_uuid")
	if ua == ub {
		t.Fatalf("both sandboxes report cluster uuid %s", ua)
	}
	if got := sandboxtest.Status(t, a, "node1", "wsrep_cluster_size"); got != "2" {
		t.Errorf("sandbox a size %s, want 2", got)
	}
	if got := sandboxtest.Status(t, b, "node1", "wsrep_cluster_size"); got != "1" {
		t.Errorf("sandbox b size %s, want 1", got)
	}
	dba := sandboxtest.AppDB(t, a, "node1")
	dbb := sandboxtest.AppDB(t, b, "node1")
	mustExec(t, dba, "CREATE TABLE app.only_a (id INT PRIMARY KEY)")
	if got := sandboxtest.QueryString(t, dbb, "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema='app' AND table_name='only_a'"); got != "0" {
		t.Errorf("a table created in sandbox a is visible in sandbox b")
	}
	// Killing a node of one sandbox leaves the other alone.
	if err := a.Kill("node2"); err != nil {
		t.Fatal(err)
	}
	if got := sandboxtest.Status(t, b, "node1", "wsrep_cluster_size"); got != "1" {
		t.Errorf("sandbox b size %s after killing a node of a", got)
	}
	if st := b.Status(context.Background()); st[0].Process != "running" {
		t.Errorf("sandbox b node1 is %s after killing a node of a", st[0].Process)
	}
}

func containsLine(lines []string, s string) bool {
	for _, l := range lines {
		if strings.Contains(l, s) {
			return true
		}
	}
	return false
}
