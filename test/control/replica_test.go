package control_test

import (
	"context"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/galeon-db/galeon/internal/agent"
	"github.com/galeon-db/galeon/internal/discovery"
	"github.com/galeon-db/galeon/internal/discovery/discoverytest"
	"github.com/galeon-db/galeon/internal/eventlog"
	"github.com/galeon-db/galeon/internal/replica"
	"github.com/galeon-db/galeon/internal/sandbox"
)

// TestReplicaFollowsTheWriter runs an asynchronous replica of a 3-node
// cluster (binary logs with the cluster's GTIDs) under write load through
// three proxies, while the writer moves: planned switchovers and kill -9
// of the writer, alternately (GALEON_REPLICA_MOVES, default 6). The replica's agent moves it to every new
// writer once that writer has logged everything the replica applied; at
// the end the replica holds exactly the cluster's rows (same count, same
// checksum at the same GTID), every acknowledged write included, and no
// replication error was ever seen.
func TestReplicaFollowsTheWriter(t *testing.T) {
	sb, store, ms := newRigOf(t, 3, false, sandbox.Options{Nodes: 3, Replicas: 1})
	r := sb.Replicas[0]
	facts := startReplicaAgent(t, sb, store, "")
	var errorsSeen []string
	following := func(writer string) func() bool {
		return func() bool {
			f := facts()
			if f.SQLError != "" && !slices.Contains(errorsSeen, f.SQLError) {
				errorsSeen = append(errorsSeen, f.SQLError)
			}
			return f.SourceNode == writer && f.IORunning && f.SQLRunning
		}
	}
	w0, _, _ := agreement(ms)
	waitFor(t, 30*time.Second, "the replica replicating from the writer "+w0, following(w0))
	// Every node is a safe source.
	for _, n := range mustNodes(t, store) {
		if len(n.SourceProblems) > 0 || n.GTIDDomain == nil || *n.GTIDDomain != sandbox.ClusterGTIDDomain {
			t.Errorf("%s as a replication source: domain %v, problems %v", n.Name, n.GTIDDomain, n.SourceProblems)
		}
	}
	db, _ := sb.DB(w0)
	createLedger(t, db)
	l := startLedger(ms, 1, 1)
	waitFor(t, 10*time.Second, "writes acknowledged", func() bool { return ackCount(l) > 30 })

	// GALEON_REPLICA_MOVES: more writer changes for the figure (the
	// issue asks for 20; CI runs 6).
	moves := 6
	if v, err := strconv.Atoi(os.Getenv("GALEON_REPLICA_MOVES")); err == nil && v > 0 {
		moves = v
	}
	var took []time.Duration
	sctx, scancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer scancel()
	for i := 0; i < moves; i++ {
		// Every node back and routed by every proxy (a node killed in
		// the round before is restarted, and must be a fit target).
		waitFor(t, 60*time.Second, "every proxy routes to the three nodes", func() bool {
			for _, m := range ms {
				if _, _, _, online := m.p.RoutingState(); len(online) != 3 {
					return false
				}
			}
			return true
		})
		w, _, _ := agreement(ms)
		before := facts().Repoints
		at := time.Now()
		how := "switchover"
		if i%2 == 0 {
			target := "node1"
			for _, n := range []string{"node1", "node2", "node3"} {
				if n != w {
					target = n
					break
				}
			}
			if err := ms[0].p.Switchover(target); err != nil {
				t.Fatalf("switchover to %s: %v", target, err)
			}
		} else {
			how = "kill -9"
			if err := sb.Kill(w); err != nil {
				t.Fatal(err)
			}
		}
		var nw string
		waitFor(t, 60*time.Second, "a new writer after "+how+" of "+w, func() bool {
			x, _, ok := agreement(ms)
			nw = x
			return ok && x != "" && x != w
		})
		onWriter := func() bool { return following(nw)() && facts().Repoints > before }
		for deadline := time.Now().Add(30 * time.Second); !onWriter(); time.Sleep(100 * time.Millisecond) {
			if time.Now().After(deadline) {
				for _, n := range []string{"node1", "node2", "node3", r.Name} {
					ndb, _ := sb.DB(n)
					var pos, state string
					err := ndb.QueryRow("SELECT @@gtid_binlog_pos, @@gtid_binlog_state").Scan(&pos, &state)
					t.Logf("%s: gtid_binlog_pos %s, gtid_binlog_state %s %v", n, pos, state, err)
				}
				t.Fatalf("the replica is not on the new writer %s after 30 s: %+v", nw, facts())
			}
		}
		f := facts()
		took = append(took, f.RepointTook)
		t.Logf("%s of %s: writer %s; the replica moved %s after the decision (%s after the fault); position %s", how, w, nw,
			f.RepointTook.Round(time.Millisecond), time.Since(at).Round(time.Millisecond), f.SlavePos)
		if how == "kill -9" {
			if err := sb.StartNode(sctx, w); err != nil {
				t.Fatal(err)
			}
		}
	}
	acks := l.finish()
	checkAcked(t, sb, []string{"node1", "node2", "node3"}, acks)

	// Caught up: the replica has applied all the writer logged.
	w, _, _ := agreement(ms)
	wdb, _ := sb.DB(w)
	var binlogPos string
	if err := wdb.QueryRow("SELECT @@gtid_binlog_pos").Scan(&binlogPos); err != nil {
		t.Fatal(err)
	}
	want, err := replica.ParsePosition(binlogPos)
	if err != nil {
		t.Fatal(err)
	}
	rdb, _ := sb.DB(r.Name)
	waitFor(t, 60*time.Second, "the replica caught up with "+binlogPos, func() bool {
		var pos string
		if rdb.QueryRow("SELECT @@gtid_slave_pos").Scan(&pos) != nil {
			return false
		}
		p, err := replica.ParsePosition(pos)
		return err == nil && p.Covers(want, sandbox.ClusterGTIDDomain)
	})
	var wn, rn int
	if err := wdb.QueryRow("SELECT COUNT(*) FROM app.ledger").Scan(&wn); err != nil {
		t.Fatal(err)
	}
	if err := rdb.QueryRow("SELECT COUNT(*) FROM app.ledger").Scan(&rn); err != nil {
		t.Fatal(err)
	}
	if a, b := checksum(t, wdb, "app.ledger"), checksum(t, rdb, "app.ledger"); a != b || wn != rn {
		t.Errorf("the replica differs from the cluster at %s: %d rows (checksum %d), the writer %d (checksum %d)", binlogPos, rn, b, wn, a)
	}
	missing := 0
	got := ledgerRows(t, rdb)
	for _, id := range acks {
		if _, ok := got[id]; !ok {
			missing++
		}
	}
	if missing > 0 {
		t.Errorf("%d of %d acknowledged writes are not on the replica", missing, len(acks))
	}
	if f := facts(); f.SQLError != "" || f.IOError != "" || len(errorsSeen) > 0 {
		t.Errorf("replication errors: now %q %q, seen %q", f.SQLError, f.IOError, errorsSeen)
	}
	// Every proxy shows it (admin table replicas, /metrics, events).
	waitFor(t, 10*time.Second, "every proxy shows the replica on the writer "+w, func() bool {
		for _, m := range ms {
			rs := m.p.Replicas()
			if len(rs) != 1 || rs[0].SourceNode != w || !rs[0].Replicating() {
				return false
			}
		}
		return true
	})
	for _, m := range ms {
		moved := 0
		for _, e := range m.p.Events() {
			if e.Kind == eventlog.Replica && strings.Contains(e.Detail, "moved from") {
				moved++
			}
		}
		if moved < moves {
			t.Errorf("%s recorded %d moves of the replica, want %d", m.name, moved, moves)
		}
	}
	slices.Sort(took)
	t.Logf("FIGURE replica re-pointed after %d writer changes (switchovers and kill -9, alternately) under load through 3 proxies: median %s, max %s after the decision; %d acknowledged writes, %d rows on the replica, equal checksum",
		len(took), took[len(took)/2].Round(time.Millisecond), took[len(took)-1].Round(time.Millisecond), len(acks), rn)

	// A full outage: every node killed. The replica keeps what it had
	// and waits; once the cluster is back (bootstrapped from its most
	// advanced node), the replica follows the new writer and catches up
	// without a rebuild.
	var slavePos string
	if err := rdb.QueryRow("SELECT @@gtid_slave_pos").Scan(&slavePos); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"node1", "node2", "node3"} {
		if err := sb.Kill(n); err != nil {
			t.Fatal(err)
		}
	}
	outage := time.Now()
	waitFor(t, 30*time.Second, "the replica's agent seeing its source gone", func() bool {
		f := facts()
		return !f.IORunning || f.SourceNode == ""
	})
	var kept int
	if err := rdb.QueryRow("SELECT COUNT(*) FROM app.ledger").Scan(&kept); err != nil || kept != rn {
		t.Errorf("the replica during the outage: %d rows (%v), want the %d it had", kept, err, rn)
	}
	if f := facts(); f.SQLError != "" {
		t.Errorf("the replica during the outage: SQL error %q", f.SQLError)
	}
	if err := sb.Start(sctx); err != nil {
		t.Fatal(err)
	}
	var nw string
	waitFor(t, 60*time.Second, "a writer after the outage", func() bool {
		x, _, ok := agreement(ms)
		nw = x
		return ok && x != ""
	})
	ndb, _ := sb.DB(nw)
	for i := range 20 {
		if _, err := ms[i%len(ms)].db.Exec("INSERT INTO app.ledger (node, proxy, at) VALUES (@@wsrep_node_name, 'after-outage', NOW(6))"); err != nil {
			t.Fatalf("a write after the outage: %v", err)
		}
	}
	if err := ndb.QueryRow("SELECT @@gtid_binlog_pos").Scan(&binlogPos); err != nil {
		t.Fatal(err)
	}
	if want, err = replica.ParsePosition(binlogPos); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 60*time.Second, "the replica on "+nw+" and caught up with "+binlogPos, func() bool {
		var pos string
		if rdb.QueryRow("SELECT @@gtid_slave_pos").Scan(&pos) != nil {
			return false
		}
		p, err := replica.ParsePosition(pos)
		return err == nil && p.Covers(want, sandbox.ClusterGTIDDomain) && following(nw)()
	})
	if err := ndb.QueryRow("SELECT COUNT(*) FROM app.ledger").Scan(&wn); err != nil {
		t.Fatal(err)
	}
	if err := rdb.QueryRow("SELECT COUNT(*) FROM app.ledger").Scan(&rn); err != nil {
		t.Fatal(err)
	}
	if a, b := checksum(t, ndb, "app.ledger"), checksum(t, rdb, "app.ledger"); a != b || wn != rn || wn != kept+20 {
		t.Errorf("after the outage the replica differs from the cluster at %s: %d rows (checksum %d), the writer %d (checksum %d), %d before the outage + 20", binlogPos, rn, b, wn, a, kept)
	}
	if f := facts(); f.SQLError != "" || f.IOError != "" {
		t.Errorf("replication errors after the outage: %q %q", f.SQLError, f.IOError)
	}
	t.Logf("FIGURE full outage: the replica kept its %d rows at %s; cluster back and the replica on the new writer %s, caught up, %s after the kill", kept, slavePos, nw, time.Since(outage).Round(time.Millisecond))
}

func mustNodes(t *testing.T, store *discovery.Store) []discovery.NodeFacts {
	t.Helper()
	ns, err := store.Nodes(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return ns
}

// startReplicaAgent runs the agent of the sandbox's first replica (with
// a binary log archive in archiveDir, if given) until the test ends, and
// returns how to read what it publishes.
func startReplicaAgent(t *testing.T, sb *sandbox.Sandbox, store *discovery.Store, archiveDir string) func() discovery.ReplicaFacts {
	t.Helper()
	r, c := sb.Replicas[0], sb.Credentials
	ra, err := agent.NewReplica(agent.ReplicaConfig{Name: r.Name, Address: r.Addr(), User: c.AdminUser, Password: c.AdminPassword,
		SourceUser: c.ReplUser, SourcePassword: c.ReplPassword, Interval: 200 * time.Millisecond, ArchiveDir: archiveDir}, store, discoverytest.Quiet())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = ra.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return func() discovery.ReplicaFacts {
		rs, err := store.Replicas(context.Background())
		if err != nil || len(rs) != 1 {
			return discovery.ReplicaFacts{}
		}
		return rs[0]
	}
}
