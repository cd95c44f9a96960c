package control_test

import (
	"context"
	"database/sql"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/galeon-db/galeon/internal/agent"
	"github.com/galeon-db/galeon/internal/discovery"
	"github.com/galeon-db/galeon/internal/discovery/discoverytest"
	"github.com/galeon-db/galeon/internal/lifecycle"
	"github.com/galeon-db/galeon/internal/replica"
	"github.com/galeon-db/galeon/internal/sandbox"
	"github.com/galeon-db/galeon/internal/sandbox/sandboxtest"
	"github.com/galeon-db/galeon/internal/schemachange"
)

// TestDRCluster: a whole Galera cluster as the cluster's DR replica
// (sandbox up --dr-of). It starts from a backup taken under load,
// replicates through one of its nodes from the primary's writer across
// writer changes, moves that role to another of its nodes when that one
// is killed, applies nothing twice, is read-only for clients until it is
// promoted, and its promotion under load loses no acknowledged write.
func TestDRCluster(t *testing.T) {
	sb, store, ms := newRigOf(t, 2, true, sandbox.Options{Nodes: 3, ReplicationSource: true})
	w0, _, _ := agreement(ms)
	wdb, _ := sb.DB(w0)
	createLedger(t, wdb)
	l := startLedger(ms, 1, 0)
	waitFor(t, 10*time.Second, "writes acknowledged", func() bool { return ackCount(l) > 30 })

	// The DR cluster starts from a backup taken under load.
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	nodeDB, closeAll := lifecycle.CachedNodeDB(lifecycle.DirectNodeDB(store, sb.Credentials.AdminUser, sb.Credentials.AdminPassword))
	defer closeAll()
	path, info, err := lifecycle.Backup{Store: store, By: "test", DrainTimeout: 5 * time.Second,
		DB: nodeDB, Copier: lifecycle.AgentCopier{Store: store, By: "test"}}.Run(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	dr := sandboxtest.New(t, sandbox.Options{Name: "dr-" + sb.Name, Nodes: 3, DROf: sb.Name, FromBackup: path, DRSlavePos: info.GTID})
	c := dr.Credentials
	// The DR agent; stopAgent ends it (it can be started again).
	startAgent := func() (stopAgent func()) {
		a, err := agent.NewReplica(agent.ReplicaConfig{Name: dr.Name, Members: dr.Addrs(), User: c.AdminUser, Password: c.AdminPassword,
			SourceUser: c.ReplUser, SourcePassword: c.ReplPassword, Interval: 200 * time.Millisecond, OnPromoted: dr.MarkDRPromoted},
			store, testLog("dr-agent"))
		if err != nil {
			t.Fatal(err)
		}
		actx, acancel := context.WithCancel(context.Background())
		adone := make(chan struct{})
		go func() { _ = a.Run(actx); close(adone) }()
		var once sync.Once
		stopAgent = func() { once.Do(func() { acancel(); <-adone }) }
		t.Cleanup(stopAgent)
		return stopAgent
	}
	stopAgent := startAgent()
	facts := func() discovery.ReplicaFacts {
		rs, err := store.Replicas(context.Background())
		if err != nil || len(rs) != 1 {
			return discovery.ReplicaFacts{}
		}
		return rs[0]
	}
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
	// The DR site's own proxy, over the DR cluster's agents: it serves
	// reads, and names no writer while the DR cluster is read-only.
	drStore := discoverytest.Open(t)
	for _, n := range dr.Nodes {
		runAgentWith(t, dr, drStore, n, dr)
	}
	drp := startProxy(t, dr, drStore, "drproxy1", true)
	waitFor(t, 30*time.Second, "the DR cluster replicating from the writer "+w0, following(w0))
	t.Logf("the DR cluster replicates through %s from %s, after the backup's %s", facts().Address, w0, info.GTID)

	// Read-only for clients while it replicates.
	for _, n := range dr.Nodes {
		_, err := sandboxtest.AppDB(t, dr, n.Name).Exec("INSERT INTO app.ledger (node, proxy, at) VALUES ('x', 'dr-direct', NOW(6))")
		var me *mysql.MySQLError
		if !errors.As(err, &me) || me.Number != 1290 {
			t.Errorf("a write straight to the DR cluster's %s before its promotion: %v, want 1290 (read-only)", n.Name, err)
		}
	}

	waitFor(t, 30*time.Second, "the DR proxy routing reads to the DR cluster", func() bool {
		var n int
		return drp.db.QueryRow("SELECT COUNT(*) FROM app.ledger").Scan(&n) == nil && n > 0
	})
	if _, err := drp.db.Exec("INSERT INTO app.ledger (node, proxy, at) VALUES ('x', 'dr-proxy', NOW(6))"); err == nil ||
		!strings.Contains(err.Error(), "9001") || !strings.Contains(err.Error(), "read_only = ON") {
		t.Errorf("a write through the DR cluster's proxy before its promotion: %v, want 9001 naming read_only", err)
	}

	// The primary's writer changes: killed, then switched over.
	for i, how := range []string{"kill -9", "switchover"} {
		before := facts().Repoints
		w, nw := moveWriter(t, sb, ms, how)
		waitFor(t, 30*time.Second, "the DR cluster on the new writer "+nw, func() bool { return following(nw)() && facts().Repoints > before })
		t.Logf("change %d, %s of %s: the DR cluster moved to %s %s after the decision", i+1, how, w, nw, facts().RepointTook.Round(time.Millisecond))
		if how == "kill -9" {
			if err := sb.StartNode(ctx, w); err != nil {
				t.Fatal(err)
			}
		}
	}

	// The DR node that replicates is killed: another takes the role
	// from where Galera brought it, and it comes back without
	// replicating on its own.
	through := facts().Address
	var killed string
	for _, n := range dr.Nodes {
		if n.Addr() == through {
			killed = n.Name
		}
	}
	if killed == "" {
		t.Fatalf("the DR agent replicates through %q, not a DR node", through)
	}
	if err := dr.Kill(killed); err != nil {
		t.Fatal(err)
	}
	w, _, _ := agreement(ms)
	waitFor(t, 60*time.Second, "replication moved off the killed DR node "+killed, func() bool {
		f := facts()
		return f.Address != "" && f.Address != through && following(w)()
	})
	moved := facts().Address
	t.Logf("DR node %s (%s) killed: replication moved to %s", killed, through, moved)
	// The killed node comes back with its replication still set up,
	// while the agent is down: it does not replicate by itself
	// (skip_slave_start), and the agent, started again, keeps the node
	// that replicates and forgets the stale one.
	stopAgent()
	if err := dr.StartNode(ctx, killed); err != nil {
		t.Fatal(err)
	}
	kdb, _ := dr.DB(killed)
	if st := slaveStatus(t, kdb); st["Master_Host"] == "" || st["Slave_IO_Running"] != "No" || st["Slave_SQL_Running"] != "No" {
		t.Errorf("the killed DR node %s after its restart, the agent down: %v; want replication set up and stopped", killed,
			map[string]string{"Master_Host": st["Master_Host"], "Slave_IO_Running": st["Slave_IO_Running"], "Slave_SQL_Running": st["Slave_SQL_Running"]})
	}
	startAgent() // stopped at the test's end
	waitFor(t, 10*time.Second, "the restarted agent forgetting replication on "+killed, func() bool {
		return slaveStatus(t, kdb)["Master_Host"] == ""
	})
	waitFor(t, 10*time.Second, "the restarted agent keeping replication on "+moved, func() bool {
		return facts().Address == moved && following(w)()
	})

	// Everything acknowledged is on every DR node, and each DR node
	// equals the primary at the same position.
	acks := l.finish()
	w, _, _ = agreement(ms)
	wdb, _ = sb.DB(w)
	var binlogPos string
	if err := wdb.QueryRow("SELECT @@gtid_binlog_pos").Scan(&binlogPos); err != nil {
		t.Fatal(err)
	}
	want, err := replica.ParsePosition(binlogPos)
	if err != nil {
		t.Fatal(err)
	}
	primarySum := checksum(t, wdb, "app.ledger")
	for _, n := range dr.Nodes {
		ndb, _ := dr.DB(n.Name)
		waitFor(t, 60*time.Second, "DR node "+n.Name+" holding the primary's "+binlogPos, func() bool {
			var pos string
			if ndb.QueryRow("SELECT @@gtid_binlog_pos").Scan(&pos) != nil {
				return false
			}
			p, err := replica.ParsePosition(pos)
			return err == nil && p.Covers(want, sandbox.ClusterGTIDDomain)
		})
		if sum := checksum(t, ndb, "app.ledger"); sum != primarySum {
			t.Errorf("DR node %s differs from the primary at %s: checksum %d, the primary's %d", n.Name, binlogPos, sum, primarySum)
		}
		got := ledgerRows(t, ndb)
		missing := 0
		for _, id := range acks {
			if _, ok := got[id]; !ok {
				missing++
			}
		}
		if missing > 0 {
			t.Errorf("%d of %d acknowledged writes are not on DR node %s", missing, len(acks), n.Name)
		}
	}
	if f := facts(); f.SQLError != "" || f.IOError != "" || len(errorsSeen) > 0 {
		t.Errorf("replication errors: now %q %q, seen %q", f.SQLError, f.IOError, errorsSeen)
	}

	// A change rolled node by node (RSU) is in no binary log
	// (sql_log_bin = 0), so the DR cluster does not get it through
	// replication: the roll runs it on the DR cluster too, where every
	// node gets it.
	sc := lifecycle.SchemaChange{Store: store, By: "test", DrainTimeout: 5 * time.Second, DB: nodeDB,
		ReplicaDB: lifecycle.AddrDB(c.AdminUser, c.AdminPassword),
		Progress:  func(node, msg string) { t.Logf("schema change: %s: %s", node, msg) }}
	p, err := sc.Prepare(ctx, "ALTER TABLE app.ledger ADD INDEX by_proxy (proxy)", "", schemachange.RSU)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sc.Run(ctx, p); err != nil {
		t.Fatal(err)
	}
	// TOI on the DR cluster: the node it ran on has it when the roll
	// ends, the others once they applied it.
	for _, n := range dr.Nodes {
		ndb, _ := dr.DB(n.Name)
		waitFor(t, 30*time.Second, "DR node "+n.Name+" with the index of the RSU change", func() bool {
			var def, name string
			return ndb.QueryRow("SHOW CREATE TABLE app.ledger").Scan(&name, &def) == nil && strings.Contains(def, "by_proxy")
		})
	}

	// A planned promotion under load: nothing acknowledged is lost, the
	// old cluster is fenced, and every DR node takes writes.
	l2 := startLedger(ms, 1, 0)
	waitFor(t, 10*time.Second, "writes acknowledged", func() bool { return ackCount(l2) > 20 })
	promoted := time.Now()
	res, err := lifecycle.Promote{Store: store, Replica: dr.Name, By: "test", Force: true, CatchUp: 20 * time.Second,
		Progress: func(node, msg string) { t.Logf("[%5.1fs] %s: %s", time.Since(promoted).Seconds(), node, msg) }}.Run(ctx)
	if err != nil {
		t.Logf("the DR agent's facts: %+v", facts())
		for _, n := range dr.Nodes {
			ndb, _ := dr.DB(n.Name)
			st := slaveStatus(t, ndb)
			t.Logf("%s: Master_Host %q IO %s SQL %s state %q error %q", n.Name, st["Master_Host"], st["Slave_IO_Running"], st["Slave_SQL_Running"], st["Slave_SQL_Running_State"], st["Last_SQL_Error"])
			if rows, err := ndb.Query("SELECT ID, USER, COMMAND, TIME, STATE, LEFT(INFO, 80) FROM information_schema.PROCESSLIST WHERE COMMAND <> 'Sleep'"); err == nil {
				for rows.Next() {
					var id, tm int64
					var user, cmd string
					var state, info sql.NullString
					if rows.Scan(&id, &user, &cmd, &tm, &state, &info) == nil {
						t.Logf("  %s process %d %s %s %ds %q %q", n.Name, id, user, cmd, tm, state.String, info.String)
					}
				}
				rows.Close()
			}
		}
		t.Fatal(err)
	}
	acks2 := l2.finish()
	t.Logf("FIGURE planned promotion of the DR cluster %s under load: writable %s after the command, fenced in every proxy %v, lost %d",
		dr.Name, res.Took.Round(time.Millisecond), res.Fenced, res.Lost)
	if !res.Fenced || res.Lost != 0 {
		t.Errorf("planned promotion: fenced %v, lost %d; want fenced and nothing lost", res.Fenced, res.Lost)
	}
	if f := facts(); !f.Promoted || !f.Up || f.Address == "" {
		t.Errorf("the DR agent's facts after the promotion: %+v", f)
	}
	waitFor(t, 30*time.Second, "every DR node writable", func() bool {
		for _, n := range dr.Nodes {
			ndb, _ := dr.DB(n.Name)
			var ro bool
			if ndb.QueryRow("SELECT @@read_only").Scan(&ro) != nil || ro {
				return false
			}
		}
		return true
	})
	for _, n := range dr.Nodes {
		if _, err := sandboxtest.AppDB(t, dr, n.Name).Exec("INSERT INTO app.ledger (node, proxy, at) VALUES (@@wsrep_node_name, 'dr-promoted', NOW(6))"); err != nil {
			t.Errorf("a write to the promoted DR cluster's %s: %v", n.Name, err)
		}
	}
	ddb, _ := dr.DB(dr.Nodes[0].Name)
	got := ledgerRows(t, ddb)
	lost := 0
	for _, id := range append(acks, acks2...) {
		if _, ok := got[id]; !ok {
			lost++
		}
	}
	if lost > 0 {
		t.Errorf("%d acknowledged writes are not on the promoted DR cluster", lost)
	}
	for _, m := range ms {
		_, err := m.db.Exec("INSERT INTO app.ledger (node, proxy, at) VALUES (@@wsrep_node_name, 'fenced', NOW(6))")
		if err == nil || !strings.Contains(err.Error(), dr.Name) {
			t.Errorf("a write through %s after the promotion: %v, want it refused naming the DR cluster %s", m.name, err, dr.Name)
		}
	}
	// The DR site's proxy names a writer and takes writes.
	waitFor(t, 30*time.Second, "the DR proxy naming a writer", func() bool {
		w, _, ok := agreement([]*member{drp})
		return ok && w != ""
	})
	if _, err := drp.db.Exec("INSERT INTO app.ledger (node, proxy, at) VALUES (@@wsrep_node_name, 'dr-proxy', NOW(6))"); err != nil {
		t.Errorf("a write through the DR cluster's proxy after its promotion: %v", err)
	}
	// The promotion is recorded: restarted DR nodes stay writable.
	if st, err := sandbox.Open(dr.Dir, sandbox.Control{}); err != nil || !st.DRPromoted {
		t.Errorf("the DR sandbox after the promotion: promoted %v (%v)", st != nil && st.DRPromoted, err)
	}
}

// slaveStatus is SHOW SLAVE STATUS as column → value (empty when no
// replication is set up).
func slaveStatus(t *testing.T, db *sql.DB) map[string]string {
	t.Helper()
	rows, err := db.Query("SHOW SLAVE STATUS")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	if !rows.Next() {
		return out
	}
	vals := make([]sql.NullString, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	if err := rows.Scan(ptrs...); err != nil {
		t.Fatal(err)
	}
	for i, c := range cols {
		out[c] = vals[i].String
	}
	return out
}

// moveWriter changes the writer once every proxy routes to the three
// nodes: kill -9 of it ("kill -9") or a switchover to another node
// ("switchover"). It returns the old writer and the new one every proxy
// agrees on; a killed node is left down (the caller restarts it).
func moveWriter(t *testing.T, sb *sandbox.Sandbox, ms []*member, how string) (old, nw string) {
	t.Helper()
	waitFor(t, 60*time.Second, "every proxy routes to the three nodes", func() bool {
		for _, m := range ms {
			if _, _, _, online := m.p.RoutingState(); len(online) != 3 {
				return false
			}
		}
		return true
	})
	old, _, _ = agreement(ms)
	switch how {
	case "kill -9":
		if err := sb.Kill(old); err != nil {
			t.Fatal(err)
		}
	case "switchover":
		target := "node1"
		if old == target {
			target = "node2"
		}
		if err := ms[0].p.Switchover(target); err != nil {
			t.Fatalf("switchover to %s: %v", target, err)
		}
	default:
		t.Fatalf("moveWriter: %q", how)
	}
	waitFor(t, 60*time.Second, "a new writer after "+how+" of "+old, func() bool {
		x, _, ok := agreement(ms)
		nw = x
		return ok && x != "" && x != old
	})
	return old, nw
}
