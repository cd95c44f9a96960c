package galera_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/galeon-db/galeon/internal/config"
	"github.com/galeon-db/galeon/internal/eventlog"
	"github.com/galeon-db/galeon/internal/proxy"
	"github.com/galeon-db/galeon/internal/proxy/proxytest"
	"github.com/galeon-db/galeon/internal/proxyadmin"
	"github.com/galeon-db/galeon/internal/sandbox"
	"github.com/galeon-db/galeon/internal/sandbox/sandboxtest"
)

type rig struct {
	cfg   config.Config // the proxy's configuration, for more proxies
	sb    *sandbox.Sandbox
	p     *proxy.Proxy
	addr  string
	db    *sql.DB
	nodes map[string]*sql.DB // direct admin connections
}

// newRig starts a sandbox and a Galera-aware proxy: writer weights
// node1 > node2 > node3, equal reader weights.
func newRig(t *testing.T, mutate func(*config.Config)) *rig {
	t.Helper()
	sb := sandboxtest.New(t, sandbox.Options{Nodes: 3})
	cfg := config.Defaults()
	c := sb.Credentials
	cfg.Users = []config.User{{Name: c.AppUser, Password: c.AppPassword}}
	cfg.Galera.MonitorUser, cfg.Galera.MonitorPassword = c.MonitorUser, c.MonitorPassword
	cfg.Galera.DrainGrace = config.Duration(5 * time.Second)
	for i, n := range sb.Nodes {
		cfg.Servers = append(cfg.Servers, config.Server{Name: n.Name, Address: n.Addr(), WriterWeight: 100 - 40*i, ReaderWeight: 100})
	}
	if mutate != nil {
		mutate(&cfg)
	}
	level := slog.LevelWarn
	if os.Getenv("GALEON_TEST_VERBOSE") != "" {
		level = slog.LevelDebug
	}
	p, addr := proxytest.Start(t, &cfg, slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level})))
	db := appDB(t, sb, addr)
	r := &rig{cfg: cfg, sb: sb, p: p, addr: addr, db: db, nodes: map[string]*sql.DB{}}
	for _, n := range sb.Nodes {
		d, err := sb.DB(n.Name)
		if err != nil {
			t.Fatal(err)
		}
		r.nodes[n.Name] = d
	}
	if _, err := r.nodes["node1"].Exec("CREATE TABLE app.ledger (id BIGINT AUTO_INCREMENT PRIMARY KEY, node VARCHAR(32), at DATETIME(6), KEY(at))"); err != nil {
		t.Fatal(err)
	}
	// Galera applies the CREATE on node2 and node3 after node1 has
	// answered: a causal read on each makes the table visible there before
	// the load's first read (a CI run once read 1146 from a reader).
	for _, n := range sb.Nodes {
		if _, err := r.nodes[n.Name].Exec("SET STATEMENT wsrep_sync_wait=1 FOR SELECT 1 FROM app.ledger LIMIT 0"); err != nil {
			t.Fatalf("%s: app.ledger after the CREATE: %v", n.Name, err)
		}
	}
	r.waitWriter(t, "node1", 10*time.Second)
	return r
}

// appDB is a pool of application connections through the proxy at addr.
// Reads may wait 60 s: a COMMIT lost with the writer waits for the
// cluster's answer (galera.commit_settle_timeout).
func appDB(t *testing.T, sb *sandbox.Sandbox, addr string) *sql.DB {
	t.Helper()
	c := sb.Credentials
	mc := mysql.NewConfig()
	mc.User, mc.Passwd, mc.Net, mc.Addr, mc.DBName = c.AppUser, c.AppPassword, "tcp", addr, "app"
	mc.Timeout, mc.ReadTimeout, mc.WriteTimeout = 5*time.Second, 60*time.Second, 20*time.Second
	db, err := sql.Open("mysql", mc.FormatDSN())
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxIdleConns(64)
	t.Cleanup(func() { db.Close() })
	return db
}

// waitWriter waits until the proxy routes writes to node.
func (r *rig) waitWriter(t *testing.T, node string, d time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	for {
		if w, ok := r.p.View().Load().Writer(); ok && w.Name == node {
			return time.Since(start)
		}
		if time.Since(start) > d {
			w, _ := r.p.View().Load().Writer()
			t.Fatalf("writer is %q, want %s after %s", w.Name, node, d)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func (r *rig) state(node string) string {
	s, _ := r.p.View().Load().Server(node)
	return s.State() + " " + s.Reason
}

func (r *rig) waitState(t *testing.T, node, prefix string, d time.Duration) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !strings.HasPrefix(r.state(node), prefix) {
		if time.Now().After(deadline) {
			t.Fatalf("%s is %q, want %q after %s", node, r.state(node), prefix, d)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (r *rig) setGlobal(t *testing.T, node, assignment string) {
	t.Helper()
	if _, err := r.nodes[node].Exec("SET GLOBAL " + assignment); err != nil {
		t.Fatalf("%s: SET GLOBAL %s: %v", node, assignment, err)
	}
}

// TestReadsNeverFail removes readers one by one with
// wsrep_reject_queries=ALL: every read keeps succeeding, the last ones on
// the writer; restoring them rebalances.
func TestReadsNeverFail(t *testing.T) {
	r := newRig(t, nil)
	l := startLoad(t, r.db, 2, 6, true)
	time.Sleep(time.Second)
	r.setGlobal(t, "node2", "wsrep_reject_queries=ALL")
	r.waitState(t, "node2", "DRAINING reject_queries=ALL", 5*time.Second)
	r.setGlobal(t, "node3", "wsrep_reject_queries=ALL")
	r.waitState(t, "node3", "DRAINING reject_queries=ALL", 5*time.Second)
	before := l.readOK.Load()
	time.Sleep(time.Second)
	if l.readOK.Load() == before {
		t.Errorf("no read succeeded while only the writer was left")
	}
	if n, _ := r.p.View().Load().PickReader(); n.Name != "node1" {
		t.Errorf("with both readers out, reads go to %s, want the writer node1", n.Name)
	}
	r.setGlobal(t, "node2", "wsrep_reject_queries=NONE")
	r.setGlobal(t, "node3", "wsrep_reject_queries=NONE")
	r.waitState(t, "node2", "ONLINE", 5*time.Second)
	r.waitState(t, "node3", "ONLINE", 5*time.Second)
	acks := l.finish()
	if n := l.readErr.Load(); n != 0 {
		t.Errorf("%d reads failed while the writer was healthy: %v", n, l.errorsSeen())
	}
	if n := l.wErr.Load(); n != 0 {
		t.Errorf("%d writes failed: %v", n, l.errorsSeen())
	}
	t.Logf("reads ok %d, writes acknowledged %d", l.readOK.Load(), len(acks))
	counts := map[string]int{}
	for i := 0; i < 3000; i++ {
		s, _ := r.p.View().Load().PickReader()
		counts[s.Name]++
	}
	if counts["node2"] < 1200 || counts["node3"] < 1200 || counts["node1"] > 0 {
		t.Errorf("after restoring the readers, reads split %v; want node2 and node3 about evenly, none on the writer", counts)
	}
}

// TestPlannedWorkCostsNothing: desync of the writer, reject_queries on the
// writer, and a switchover each move writes to the next writer with zero
// client errors and never two writers at once.
//
// wsrep_reject_queries=ALL makes the node itself refuse every statement,
// including those of transactions already open on it: no proxy can finish
// those without replaying them. So this test's writers are autocommit;
// TestDesyncAndSwitchoverWithTransactions covers transactions.
func TestPlannedWorkCostsNothing(t *testing.T) {
	r := newRig(t, nil)
	l := startLoad(t, r.db, 4, 4, false)
	time.Sleep(time.Second)

	r.setGlobal(t, "node1", "wsrep_desync=ON")
	took := r.waitWriter(t, "node2", 15*time.Second)
	t.Logf("FIGURE desync of the writer: writes moved to node2 in %s", took.Round(time.Millisecond))
	time.Sleep(time.Second)
	r.setGlobal(t, "node1", "wsrep_desync=OFF")
	r.waitState(t, "node1", "ONLINE", 10*time.Second)
	if w, _ := r.p.View().Load().Writer(); w.Name != "node2" {
		t.Errorf("node1 took the writer role back after desync ended (failback=never)")
	}

	r.setGlobal(t, "node2", "wsrep_reject_queries=ALL")
	took = r.waitWriter(t, "node1", 15*time.Second)
	t.Logf("FIGURE reject_queries=ALL on the writer: writes moved to node1 in %s", took.Round(time.Millisecond))
	time.Sleep(time.Second)
	r.setGlobal(t, "node2", "wsrep_reject_queries=NONE")
	r.waitState(t, "node2", "ONLINE", 10*time.Second)

	start := time.Now()
	if err := r.p.Switchover("node3"); err != nil {
		t.Fatal(err)
	}
	r.waitWriter(t, "node3", 15*time.Second)
	t.Logf("FIGURE switchover node1 -> node3: %s", time.Since(start).Round(time.Millisecond))
	time.Sleep(time.Second)

	acks := l.finish()
	if n := l.wErr.Load() + l.readErr.Load(); n != 0 {
		t.Errorf("%d client errors during planned work (want 0): %v", n, l.errorsSeen())
	}
	order := checkOneWriter(t, r.nodes["node3"], r.p.View().Load().Epoch-1)
	t.Logf("writer sequence %v; writes %s; acknowledged %d", order, writesByNode(t, r.nodes["node3"]), len(acks))
	if strings.Join(order, ",") != "node1,node2,node1,node3" {
		t.Errorf("writer sequence %v, want node1,node2,node1,node3", order)
	}
	checkNothingLost(t, r.nodes, acks)
}

// TestDesyncAndSwitchoverWithTransactions: with explicit transactions in
// flight, desync of the writer and a switchover finish them on the old
// writer and start new ones on the new writer: zero errors.
func TestDesyncAndSwitchoverWithTransactions(t *testing.T) {
	r := newRig(t, nil)
	l := startLoad(t, r.db, 6, 4, true)
	time.Sleep(time.Second)
	r.setGlobal(t, "node1", "wsrep_desync=ON")
	r.waitWriter(t, "node2", 15*time.Second)
	time.Sleep(time.Second)
	start := time.Now()
	if err := r.p.Switchover("node3"); err != nil {
		t.Fatal(err)
	}
	r.waitWriter(t, "node3", 15*time.Second)
	t.Logf("FIGURE switchover with transactions in flight: %s", time.Since(start).Round(time.Millisecond))
	time.Sleep(time.Second)
	r.setGlobal(t, "node1", "wsrep_desync=OFF")
	acks := l.finish()
	if n := l.wErr.Load() + l.readErr.Load(); n != 0 {
		t.Errorf("%d client errors (want 0): %v", n, l.errorsSeen())
	}
	order := checkOneWriter(t, r.nodes["node3"], r.p.View().Load().Epoch-1)
	t.Logf("writer sequence %v; writes %s; acknowledged %d", order, writesByNode(t, r.nodes["node3"]), len(acks))
	checkNothingLost(t, r.nodes, acks)
}

// TestSwitchoverDoesNotWaitForIdleSessions: sessions idle on the writer
// with no transaction open — the connection kept after an autocommit
// INSERT (for a LAST_INSERT_ID() that may follow), or held for a
// temporary table — lose nothing when the writer role moves, so a
// switchover does not wait drain_grace for them (it did: writes paused
// for the whole grace while any client idled after a write). The first
// goes on as if nothing happened; the second is told its state is gone.
func TestSwitchoverDoesNotWaitForIdleSessions(t *testing.T) {
	grace := 30 * time.Second
	r := newRig(t, func(c *config.Config) { c.Galera.DrainGrace = config.Duration(grace) })
	ctx := context.Background()
	if _, err := r.db.Exec("CREATE TABLE app.idle (id INT AUTO_INCREMENT PRIMARY KEY, v INT)"); err != nil {
		t.Fatal(err)
	}
	soft, err := r.db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer soft.Close()
	res, err := soft.ExecContext(ctx, "INSERT INTO app.idle (v) VALUES (1)")
	if err != nil {
		t.Fatal(err)
	}
	id, _ := res.LastInsertId()
	pinned, err := r.db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer pinned.Close()
	for _, q := range []string{"CREATE TEMPORARY TABLE scratch (a INT)", "INSERT INTO scratch VALUES (1)"} {
		if _, err := pinned.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	w, _ := r.p.View().Load().Writer()
	start := time.Now()
	if err := r.p.Switchover("node3"); err != nil {
		t.Fatal(err)
	}
	r.waitWriter(t, "node3", grace+10*time.Second)
	took := time.Since(start)
	t.Logf("FIGURE switchover %s -> node3 with two sessions idle on %s (drain_grace %s): %s", w.Name, w.Name, grace, took.Round(time.Millisecond))
	if took > grace/2 {
		t.Errorf("the switchover took %s: it waited for sessions idle with no transaction (drain_grace %s)", took.Round(time.Millisecond), grace)
	}
	// The soft session goes on: the id it was given, then a write on
	// the new writer.
	var last int64
	if err := soft.QueryRowContext(ctx, "SELECT LAST_INSERT_ID()").Scan(&last); err != nil || last != id {
		t.Errorf("LAST_INSERT_ID() after the switchover: %d (%v), want %d", last, err, id)
	}
	if _, err := soft.ExecContext(ctx, "INSERT INTO app.idle (v) VALUES (2)"); err != nil {
		t.Errorf("a write after the switchover: %v", err)
	}
	// The session with a temporary table on the old writer is told.
	var me *mysql.MySQLError
	if _, err := pinned.ExecContext(ctx, "INSERT INTO scratch VALUES (2)"); !errors.As(err, &me) || me.Number != 9002 {
		t.Errorf("a session whose temporary table was on the old writer: %v, want 9002", err)
	}
}

// TestKillWriter: kill -9 of the writer. Reads do not fail; writes resume
// on the next writer; the restarted node does not take the role back.
func TestKillWriter(t *testing.T) {
	for _, fb := range []string{"never", "immediate"} {
		t.Run("failback="+fb, func(t *testing.T) {
			r := newRig(t, func(c *config.Config) { c.Galera.Failback = fb })
			l := startLoad(t, r.db, 4, 6, true)
			time.Sleep(time.Second)
			if err := r.sb.Kill("node1"); err != nil {
				t.Fatal(err)
			}
			// Kill returns once the process is gone: writes issued before
			// then may still commit on node1 and are not failover figures.
			killed := time.Now()
			primary := waitPrimaryWithout(t, r, "node2", 3, killed)
			took := r.waitWriter(t, "node2", 20*time.Second)
			firstWrite := firstAckAfter(l, killed, 20*time.Second)
			t.Logf("FIGURE kill -9 writer: Galera new Primary view after %s; galeon writer switch after %s; first acknowledged write %s after the kill (%s after the view)",
				primary.Round(time.Millisecond), took.Round(time.Millisecond), firstWrite.Round(time.Millisecond), (firstWrite - primary).Round(time.Millisecond))
			time.Sleep(time.Second)
			if err := r.sb.StartNode(context.Background(), "node1"); err != nil {
				t.Fatal(err)
			}
			r.waitState(t, "node1", "ONLINE", 30*time.Second)
			if fb == "never" {
				// node2 may hand the role on (e.g. to node3 while it
				// donates IST to node1): only node1 must not get it back.
				time.Sleep(2 * time.Second)
				if w, _ := r.p.View().Load().Writer(); w.Name == "node1" {
					t.Errorf("restarted node1 took the writer role back with failback=never")
				}
			} else {
				r.waitWriter(t, "node1", 15*time.Second)
			}
			time.Sleep(time.Second)
			acks := l.finish()
			if n := l.readErr.Load(); n != 0 {
				t.Errorf("%d autocommit reads failed (want 0): %v", n, l.errorsSeen())
			}
			t.Logf("FIGURE kill -9 writer: failed reads %d of %d; failed/aborted writes %d; acknowledged writes %d; errors %v",
				l.readErr.Load(), l.readOK.Load()+l.readErr.Load(), l.wErr.Load(), len(acks), l.errorsSeen())
			order := checkOneWriter(t, r.nodes["node2"], r.p.View().Load().Epoch-1)
			t.Logf("writer sequence %v, writes %s", order, writesByNode(t, r.nodes["node2"]))
			alive := map[string]*sql.DB{"node2": r.nodes["node2"], "node3": r.nodes["node3"]}
			if d, err := r.sb.DB("node1"); err == nil {
				alive["node1"] = d
			}
			checkNothingLost(t, alive, acks)
			checkIncidentRecorded(t, r, l)
		})
	}
}

// checkIncidentRecorded asserts that what operators read after a writer
// crash tells the story: node1 went OFFLINE, then the writer moved from
// node1 with its connections closed; the abort counters cover every
// 9002/9003 the clients saw; every node has a fresh monitor check.
func checkIncidentRecorded(t *testing.T, r *rig, l *load) {
	t.Helper()
	var offline, change *eventlog.Event
	events := r.p.Events()
	for i := len(events) - 1; i >= 0; i-- { // oldest first
		e := &events[i]
		switch {
		case offline == nil && e.Kind == eventlog.NodeState && e.Node == "node1" && strings.HasPrefix(e.Detail, "OFFLINE"):
			offline = e
		case change == nil && e.Kind == eventlog.WriterChange && strings.HasPrefix(e.Detail, "from node1 to node2"):
			change = e
		}
	}
	if offline == nil || change == nil {
		t.Fatalf("events lack node1 OFFLINE (%v) or the writer change node1 -> node2 (%v): %+v", offline, change, events)
	}
	if change.At.Before(offline.At) || !strings.Contains(change.Detail, "writer connections on node1 closed") {
		t.Errorf("writer change %+v should follow node1 going offline %+v and say how node1 was fenced", change, offline)
	}
	t.Logf("events: %+v / %+v", *offline, *change)
	seen := 0
	for msg, n := range l.errorsSeen() {
		if strings.Contains(msg, "Error 9002") || strings.Contains(msg, "Error 9003") {
			seen += n
		}
	}
	aborted := 0
	for _, m := range proxyadmin.Metrics(r.p) {
		if m.Name == "galeon_aborted_total" {
			aborted += int(m.Value)
		}
	}
	if aborted < seen {
		t.Errorf("galeon_aborted_total = %d, but clients saw %d aborts (9002/9003)", aborted, seen)
	}
	checks := r.p.GaleraChecks()
	if len(checks) != 3 {
		t.Fatalf("monitor checks for %d nodes, want 3: %+v", len(checks), checks)
	}
	for _, c := range checks {
		if time.Since(c.At) > 5*time.Second || c.Latency <= 0 || c.Vars["wsrep_cluster_status"] == "" {
			t.Errorf("stale or empty check of %s: at %s, latency %s, vars %v", c.Node, c.At, c.Latency, c.Vars)
		}
	}
}

// TestHungWriter: SIGSTOP of the writer is detected by check timeouts;
// writes fail over, and nothing lands on it after SIGCONT.
func TestHungWriter(t *testing.T) {
	r := newRig(t, nil)
	l := startLoad(t, r.db, 4, 4, true)
	time.Sleep(time.Second)
	if err := r.sb.Pause("node1"); err != nil {
		t.Fatal(err)
	}
	paused := time.Now()
	took := r.waitWriter(t, "node2", 30*time.Second)
	t.Logf("FIGURE SIGSTOP writer: writer switch after %s", took.Round(time.Millisecond))
	firstWrite := firstAckAfter(l, paused, 30*time.Second)
	t.Logf("FIGURE SIGSTOP writer: first acknowledged write %s after the pause", firstWrite.Round(time.Millisecond))
	resumedAt := time.Now()
	if err := r.sb.Resume("node1"); err != nil {
		t.Fatal(err)
	}
	// Give the resumed node 3 s of exposure to the load: nothing may land
	// on it. Galera itself may then pass through non-Primary views while
	// the resumed node's stale membership is merged, so wait until the
	// cluster is whole again before reading the ledger.
	time.Sleep(3 * time.Second)
	acks := l.finish()
	sandboxtest.Eventually(t, 90*time.Second, "node1 back: Primary, Synced, size 3 on every node", func() error { return r.synced(t) })
	// No write may land on the resumed node while another is the writer.
	// The cluster may pass through non-Primary views while it merges the
	// resumed node, leave no node fit to write for a moment, and then
	// the policy may legitimately name node1 again (CI saw it once:
	// epoch 4, "policy chooses node1", and the writes that waited for a
	// writer went there): writes on node1 after the last write elsewhere
	// are that, not a stale writer.
	for _, e := range r.p.Events() {
		if e.Kind == eventlog.WriterChange && e.At.After(resumedAt) {
			t.Logf("after the resume: %s %s", e.At.Format("15:04:05.000"), e.Detail)
		}
	}
	var late int
	if err := r.nodes["node2"].QueryRow("SELECT COUNT(*) FROM app.ledger WHERE node='node1' AND at > ? AND at < (SELECT MAX(at) FROM app.ledger WHERE node <> 'node1')",
		resumedAt.Format("2006-01-02 15:04:05.000000")).Scan(&late); err != nil {
		t.Fatal(err)
	}
	if late > 0 {
		t.Errorf("%d writes landed on node1 after it was resumed, while another node was still the writer", late)
	}
	checkOneWriter(t, r.nodes["node2"], r.p.View().Load().Epoch-1)
	t.Logf("reads failed %d of %d; writes failed %d; acknowledged %d; errors %v", l.readErr.Load(), l.readOK.Load(), l.wErr.Load(), len(acks), l.errorsSeen())
}

// TestDonorIsDrained: a node rejoining by full SST puts another node in
// the donor role for seconds. With allow_donor = false (the default) and a
// blocking SST method (rsync), the donor is drained: its reads and, if it
// is the writer, its writes move elsewhere, with no client error.
func TestDonorIsDrained(t *testing.T) {
	r := newRig(t, nil)
	var mu sync.Mutex
	seen := map[string]bool{} // "node state reason" observed
	stop := make(chan struct{})
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		for {
			select {
			case <-stop:
				return
			default:
			}
			for _, s := range r.p.View().Load().Servers {
				if strings.HasPrefix(s.Reason, "donor") {
					mu.Lock()
					seen[s.Name+" "+s.State()+" "+s.Reason] = true
					mu.Unlock()
				}
			}
			time.Sleep(5 * time.Millisecond)
		}
	}()
	l := startLoad(t, r.db, 2, 6, true)
	if err := r.sb.StopNode(context.Background(), "node3"); err != nil {
		t.Fatal(err)
	}
	if err := r.sb.ForgetState("node3"); err != nil {
		t.Fatal(err)
	}
	_, off := r.sb.ErrorLogSince("node3", 0)
	if err := r.sb.StartNode(context.Background(), "node3"); err != nil {
		t.Fatal(err)
	}
	lines, _ := r.sb.ErrorLogSince("node3", off)
	sst := false
	for _, line := range lines {
		if strings.Contains(line, "SST received") || strings.Contains(line, "State transfer required") {
			sst = true
		}
	}
	if !sst {
		t.Fatalf("node3 did not rejoin by SST; the test needs a donor")
	}
	r.waitState(t, "node3", "ONLINE", 30*time.Second)
	time.Sleep(time.Second)
	acks := l.finish()
	close(stop)
	<-watched
	mu.Lock()
	defer mu.Unlock()
	if len(seen) == 0 {
		t.Fatalf("no node was ever seen in the donor role during node3's SST")
	}
	for k := range seen {
		if !strings.Contains(k, " DRAINING donor") {
			t.Errorf("donor seen as %q, want DRAINING (allow_donor = false, rsync blocks)", k)
		}
	}
	if n := l.readErr.Load() + l.wErr.Load(); n != 0 {
		t.Errorf("%d client errors while a donor was drained: %v", n, l.errorsSeen())
		for _, e := range r.p.Events() {
			t.Logf("event %s %s %s: %s", e.At.Format("15:04:05.000"), e.Kind, e.Node, e.Detail)
		}
	}
	t.Logf("donor states seen: %v; reads %d, writes acknowledged %d", seen, l.readOK.Load(), len(acks))
	checkOneWriter(t, r.nodes["node2"], r.p.View().Load().Epoch-1)
}

// waitPrimaryWithout waits until survivor reports a Primary component of
// size want-1 and returns the time since killed.
func waitPrimaryWithout(t *testing.T, r *rig, survivor string, want int, killed time.Time) time.Duration {
	t.Helper()
	for time.Since(killed) < 30*time.Second {
		var k, size, status string
		_ = r.nodes[survivor].QueryRow("SHOW GLOBAL STATUS LIKE 'wsrep_cluster_size'").Scan(&k, &size)
		_ = r.nodes[survivor].QueryRow("SHOW GLOBAL STATUS LIKE 'wsrep_cluster_status'").Scan(&k, &status)
		if size == fmt.Sprint(want-1) && status == "Primary" {
			return time.Since(killed)
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("%s never saw a Primary component of %d", survivor, want-1)
	return 0
}

// firstAckAfter waits for the first acknowledged write that was issued
// after t0 and returns when it was acknowledged, relative to t0.
func firstAckAfter(l *load, t0 time.Time, d time.Duration) time.Duration {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		l.mu.Lock()
		best := time.Duration(-1)
		for i := len(l.acks) - 1; i >= 0 && l.acks[i].at.After(t0); i-- {
			if a := l.acks[i]; a.start.After(t0) && (best < 0 || a.at.Sub(t0) < best) {
				best = a.at.Sub(t0)
			}
		}
		l.mu.Unlock()
		if best >= 0 {
			return best
		}
		time.Sleep(5 * time.Millisecond)
	}
	return -1
}
