package control_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/galeon-db/galeon/internal/archive"
	"github.com/galeon-db/galeon/internal/lifecycle"
	"github.com/galeon-db/galeon/internal/replica"
	"github.com/galeon-db/galeon/internal/sandbox"
	"github.com/galeon-db/galeon/internal/sandbox/sandboxtest"
)

// TestDisasterRecovery keeps a binary log archive from a replica that
// follows the writer, under write load through three proxies, while the
// writer moves (a switchover and a kill -9). A backup is taken under that
// load; later an operator's bad DELETE removes half of a table. Two new
// clusters are made from the backup and the archive: one up to the
// transaction before the DELETE (--until-gtid), one up to a second
// chosen before it (--until). Each holds exactly the rows of that moment:
// the test kept every acknowledged write and its time. Last, the replica
// is promoted in the cluster's place under write load (a planned move):
// every proxy refuses writes to the fenced cluster, naming the replica,
// which has every acknowledged write and takes writes; the nodes' agents
// (managing their nodes, as the sandbox's do) make the old cluster's
// nodes read-only until the fence is lifted.
func TestDisasterRecovery(t *testing.T) {
	sb, store, ms := newRigOf(t, 3, true, sandbox.Options{Nodes: 3, Replicas: 1})
	r := sb.Replicas[0]
	dir := filepath.Join(t.TempDir(), "archive")
	facts := startReplicaAgent(t, sb, store, dir)
	w0, _, _ := agreement(ms)
	waitFor(t, 30*time.Second, "the replica on the writer and its archive streaming", func() bool {
		f := facts()
		return f.SourceNode == w0 && f.SQLRunning && f.Archive != nil && f.Archive.Streaming && f.Archive.Files > 0
	})

	wdb, _ := sb.DB(w0)
	createLedger(t, wdb)
	if _, err := wdb.Exec("CREATE TABLE app.accounts (id INT PRIMARY KEY, balance INT NOT NULL, at DATETIME(6) NOT NULL)"); err != nil {
		t.Fatal(err)
	}
	l := startLedger(ms, 1, 1)
	// One client writes accounts through a proxy, one at a time, so that
	// what it was told committed is what the table holds, in order.
	type account struct {
		id int
		at float64 // the row's NOW(6), seconds since the epoch
	}
	var (
		amu      sync.Mutex
		accounts []int
		aerrs    int
	)
	astop, aended := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(aended)
		for id := 1; id <= 100000; id++ {
			select {
			case <-astop:
				return
			default:
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			_, err := ms[id%len(ms)].db.ExecContext(ctx, "INSERT INTO app.accounts VALUES (?, ?, NOW(6))", id, 100*id)
			cancel()
			amu.Lock()
			if err == nil {
				accounts = append(accounts, id)
			} else {
				aerrs++
			}
			amu.Unlock()
			time.Sleep(5 * time.Millisecond)
		}
	}()
	waitFor(t, 10*time.Second, "writes acknowledged", func() bool { return ackCount(l) > 30 })

	// RPO: at a few instants, how long until the archive holds what the
	// writer had logged at that instant.
	rdb, _ := sb.DB(r.Name)
	var rpo []time.Duration
	for range 5 {
		at := time.Now()
		w, _, _ := agreement(ms)
		ndb, _ := sb.DB(w)
		var pos string
		if err := ndb.QueryRow("SELECT @@gtid_binlog_pos").Scan(&pos); err != nil {
			t.Fatal(err)
		}
		want, _ := replica.ParsePosition(pos)
		var file string
		var offset int64
		waitFor(t, 30*time.Second, "the replica has "+pos, func() bool {
			var p string
			if rdb.QueryRow("SELECT @@gtid_slave_pos").Scan(&p) != nil {
				return false
			}
			got, err := replica.ParsePosition(p)
			if err != nil || !got.Covers(want, sandbox.ClusterGTIDDomain) {
				return false
			}
			var dbName, ignore sql.NullString
			return rdb.QueryRow("SHOW MASTER STATUS").Scan(&file, &offset, &dbName, &ignore) == nil
		})
		waitFor(t, 30*time.Second, fmt.Sprintf("the archive reaching %s:%d", file, offset), func() bool {
			fs, err := archive.Files(dir)
			return err == nil && len(fs) > 0 && !(archive.Position{File: fs[len(fs)-1].Name, Offset: fs[len(fs)-1].Size}).Before(archive.Position{File: file, Offset: offset})
		})
		rpo = append(rpo, time.Since(at))
		time.Sleep(150 * time.Millisecond)
	}

	// A backup under load.
	started := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	nodeDB, closeAll := lifecycle.CachedNodeDB(sb.LongAdminDB)
	defer closeAll()
	b := lifecycle.Backup{Store: store, By: "test", DrainTimeout: 5 * time.Second, DB: nodeDB,
		Copier: lifecycle.LocalCopier{Source: func(node string) (lifecycle.BackupSource, error) {
			args, data, err := sb.BackupArgs(node)
			return lifecycle.BackupSource{Args: args, DataDir: data}, err
		}},
		Progress: func(node, msg string) { t.Logf("[%5.1fs] %s: %s", time.Since(started).Seconds(), node, msg) }}
	path, info, err := b.Run(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("backup of %s at GTID %s (%s)", info.Node, info.GTID, humanMiB(info.Bytes))

	// The writer moves twice after the backup: the archive goes on as one
	// stream through the replica's moves.
	for i, how := range []string{"switchover", "kill -9"} {
		// Every node back and routed by every proxy (the backup's node
		// is undrained; the killed one restarted).
		before := facts().Repoints
		w, nw := moveWriter(t, sb, ms, how)
		waitFor(t, 30*time.Second, "the replica on "+nw, func() bool {
			f := facts()
			return f.SourceNode == nw && f.SQLRunning && f.IORunning && f.Repoints > before
		})
		t.Logf("move %d (%s of %s): writer %s, the replica followed", i+1, how, w, nw)
		if how == "kill -9" {
			if err := sb.StartNode(ctx, w); err != nil {
				t.Fatal(err)
			}
		}
	}

	// The point to go back to: a whole second, written through, then
	// more writes after it.
	until := time.Now().UTC().Truncate(time.Second).Add(2 * time.Second)
	waitFor(t, 10*time.Second, "writes after "+until.Format(time.TimeOnly), func() bool { return time.Now().After(until.Add(1500 * time.Millisecond)) })

	// The accounts client stops; an operator's bad DELETE.
	close(astop)
	<-aended
	w, _, _ := agreement(ms)
	wdb, _ = sb.DB(w)
	want := map[int]float64{} // every account before the DELETE, and its time
	rows, err := wdb.Query("SELECT id, UNIX_TIMESTAMP(at) FROM app.accounts")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var a account
		if err := rows.Scan(&a.id, &a.at); err != nil {
			t.Fatal(err)
		}
		want[a.id] = a.at
	}
	rows.Close()
	amu.Lock()
	for _, id := range accounts {
		if _, ok := want[id]; !ok {
			t.Errorf("acknowledged account %d is not on the writer", id)
		}
	}
	t.Logf("%d accounts acknowledged, %d errors", len(accounts), aerrs)
	amu.Unlock()
	// Through a proxy, as an operator at the mariadb prompt would: the
	// session's @@last_gtid names the DELETE's transaction.
	conn, err := ms[0].db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var deleted, bad string
	if res, err := conn.ExecContext(ctx, "DELETE FROM app.accounts WHERE id % 2 = 0"); err != nil {
		t.Fatal(err)
	} else if n, _ := res.RowsAffected(); n == 0 {
		t.Fatal("the bad DELETE deleted nothing")
	}
	if err := conn.QueryRowContext(ctx, "SELECT @@last_gtid").Scan(&bad); err != nil {
		t.Fatal(err)
	}
	conn.Close()
	parts := strings.Split(bad, "-")
	if len(parts) != 3 {
		t.Fatalf("@@last_gtid after the DELETE, in the same session through a proxy: %q, want its GTID", bad)
	}
	seq, _ := strconv.ParseUint(parts[2], 10, 64)
	deleted = fmt.Sprintf("%s-%s-%d", parts[0], parts[1], seq-1)
	t.Logf("the bad DELETE is %s; restoring up to %s, and to before %s", bad, deleted, until.Format(time.DateTime))

	// More writes after it, then the archive catches up.
	time.Sleep(500 * time.Millisecond)
	acks := l.finish()
	var pos string
	if err := wdb.QueryRow("SELECT @@gtid_binlog_pos").Scan(&pos); err != nil {
		t.Fatal(err)
	}
	end, _ := replica.ParsePosition(pos)
	waitFor(t, 60*time.Second, "the archive holding "+pos, func() bool {
		var p string
		if rdb.QueryRow("SELECT @@gtid_slave_pos").Scan(&p) != nil {
			return false
		}
		got, err := replica.ParsePosition(p)
		f := facts()
		return err == nil && got.Covers(end, sandbox.ClusterGTIDDomain) && f.Archive != nil && f.Archive.BehindBytes == 0 && f.Archive.Streaming
	})
	if f := facts(); f.SQLError != "" || f.Archive.Error != "" {
		t.Errorf("replication or archive errors: %q %q", f.SQLError, f.Archive.Error)
	}
	// The source's ledger, for the time check: each row's NOW(6), the time
	// its transaction began (its binary log time).
	srcLedger := map[int64]float64{}
	lrows, err := wdb.Query("SELECT id, UNIX_TIMESTAMP(at) FROM app.ledger")
	if err != nil {
		t.Fatal(err)
	}
	for lrows.Next() {
		var id int64
		var at float64
		if err := lrows.Scan(&id, &at); err != nil {
			t.Fatal(err)
		}
		srcLedger[id] = at
	}
	lrows.Close()

	restore := func(name string, u archive.Until) (*sql.DB, archive.Replayed) {
		t.Helper()
		began := time.Now()
		rs := sandboxtest.New(t, sandbox.Options{Name: name + strconv.Itoa(os.Getpid()%100000), Nodes: 1, FromBackup: path})
		restored := time.Since(began)
		rc := rs.Credentials
		replayStart := time.Now()
		domain, err := archive.ClusterDomain(info.GTID, u.GTID, info.Domain)
		if err != nil || info.Domain == nil || domain != sandbox.ClusterGTIDDomain {
			t.Fatalf("the cluster's GTID domain from the backup %+v: %d %v", info, domain, err)
		}
		done, err := archive.Replay(ctx, dir, info.GTID, domain, u, archive.Target{Address: rs.Nodes[0].Addr(), User: rc.AdminUser, Password: rc.AdminPassword})
		if err != nil {
			t.Fatalf("replay up to %+v: %v", u, err)
		}
		t.Logf("FIGURE point-in-time restore (%s): backup %s restored in %s, %d archived transactions (%s .. %s) replayed in %s",
			name, humanMiB(info.Bytes), restored.Round(time.Millisecond), done.Transactions, done.First, done.Last, time.Since(replayStart).Round(time.Millisecond))
		db, _ := rs.DB(rs.Nodes[0].Name)
		return db, done
	}
	accountIDs := func(db *sql.DB) []int {
		var ids []int
		rows, err := db.Query("SELECT id FROM app.accounts ORDER BY id")
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		for rows.Next() {
			var id int
			if err := rows.Scan(&id); err != nil {
				t.Fatal(err)
			}
			ids = append(ids, id)
		}
		return ids
	}
	expect := func(keep func(at float64) bool) []int {
		var ids []int
		for id, at := range want {
			if keep(at) {
				ids = append(ids, id)
			}
		}
		sort.Ints(ids)
		return ids
	}

	// Up to the transaction before the DELETE: every account.
	gdb, done := restore("pitrgtid", archive.Until{GTID: deleted})
	if done.Last != deleted {
		t.Errorf("the replay ended at %s, want %s", done.Last, deleted)
	}
	if got, exp := accountIDs(gdb), expect(func(float64) bool { return true }); !slices.Equal(got, exp) {
		t.Errorf("restored up to %s: %d accounts, want the %d before the DELETE", deleted, len(got), len(exp))
	}
	// Up to the second chosen. Concurrent writers commit in another order
	// than they began: the replay stops at the first transaction in commit
	// order that began at or after until, so a transaction that began just
	// before until but committed after that one is left out (the restore
	// is a state the cluster was in: a prefix of its commit order). Every
	// row is from before until; every row that began a second before it
	// is there.
	tdb, _ := restore("pitrtime", archive.Until{Time: until})
	before := func(what string, restored map[int64]bool, began map[int64]float64) {
		t.Helper()
		var after, missing, boundary int
		for id := range restored {
			if at, ok := began[id]; !ok || at >= float64(until.Unix()) {
				after++
			}
		}
		for id, at := range began {
			if !restored[id] && at < float64(until.Unix()) {
				if at < float64(until.Unix())-1 {
					missing++
				} else {
					boundary++
				}
			}
		}
		if after > 0 || missing > 0 || len(restored) == 0 {
			t.Errorf("restored %s to before %s: %d rows, %d of them not from before then; %d rows from over a second before then missing", what, until.Format(time.DateTime), len(restored), after, missing)
		}
		t.Logf("restored %s to before %s: %d rows; %d rows begun in the last second before it committed after the first one begun after it (left out)", what, until.Format(time.DateTime), len(restored), boundary)
	}
	firstAccounts := accountIDs(tdb)
	restoredAccounts, accountsBegan := map[int64]bool{}, map[int64]float64{}
	for _, id := range firstAccounts {
		restoredAccounts[int64(id)] = true
	}
	for id, at := range want {
		accountsBegan[int64(id)] = at
	}
	before("accounts", restoredAccounts, accountsBegan)
	// One client wrote the accounts one after another: what is restored
	// is the first of them, none skipped.
	if all := expect(func(float64) bool { return true }); len(firstAccounts) > len(all) || !slices.Equal(firstAccounts, all[:len(firstAccounts)]) {
		t.Errorf("restored accounts to before %s are not the first %d written, in order", until.Format(time.DateTime), len(firstAccounts))
	}
	restoredLedger := map[int64]bool{}
	for id := range ledgerRows(t, tdb) {
		restoredLedger[id] = true
	}
	before("ledger", restoredLedger, srcLedger)
	slices.Sort(rpo)
	t.Logf("FIGURE archive RPO (the writer's position at a random instant reaching the archive, through the replica): median %s, max %s (%v)",
		rpo[len(rpo)/2].Round(time.Millisecond), rpo[len(rpo)-1].Round(time.Millisecond), rpo)
	t.Logf("FIGURE %d ledger writes acknowledged, errors %v; archive %d files, %s", len(acks), l.errs, facts().Archive.Files, humanMiB(facts().Archive.Bytes))
	if len(l.errs) > 0 {
		t.Logf("client errors during the writer moves (a kill -9 costs the writes in flight): %v", l.errs)
	}

	// A planned move to the disaster-recovery replica under write load:
	// the cluster is fenced in every proxy, the replica takes writes once
	// it has everything, and no acknowledged write is lost.
	// An operator made one reader read-only before: the fence keeps
	// that setting and does not lift it with the fence.
	cur, _, _ := agreement(ms)
	operatorRO := "node1"
	if cur == operatorRO {
		operatorRO = "node2"
	}
	setReadOnly := func(node string, on bool) {
		t.Helper()
		db, err := sb.DB(node)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.Exec(fmt.Sprintf("SET GLOBAL read_only = %v", on)); err != nil {
			t.Fatal(err)
		}
	}
	setReadOnly(operatorRO, true)
	l2 := startLedger(ms, 1, 0)
	waitFor(t, 10*time.Second, "writes acknowledged", func() bool { return ackCount(l2) > 20 })
	if _, err := (lifecycle.Promote{Store: store, Replica: r.Name, By: "test"}).Run(ctx); err == nil || !strings.Contains(err.Error(), "--force") {
		t.Fatalf("promotion while the cluster runs, without --force: %v, want it refused", err)
	}
	promoted := time.Now()
	res, err := lifecycle.Promote{Store: store, Replica: r.Name, By: "test", Force: true, CatchUp: 20 * time.Second,
		Progress: func(node, msg string) { t.Logf("[%5.1fs] %s: %s", time.Since(promoted).Seconds(), node, msg) }}.Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	acks2 := l2.finish()
	// Writes after the fence are refused (9001, naming the replica);
	// none that the proxies let finish on the old writer fails on the
	// nodes' read_only, which comes after every proxy applied the fence.
	for msg, n := range l2.errs {
		if strings.Contains(msg, "1290") || strings.Contains(msg, "read-only") {
			t.Errorf("a write during the planned promotion failed on read_only (%d×): %s", n, msg)
		}
	}
	t.Logf("FIGURE planned promotion of %s under load: writable %s after the command, fenced in every proxy %v, lost %d (cluster at %s, replica at %s)",
		r.Name, res.Took.Round(time.Millisecond), res.Fenced, res.Lost, res.ClusterPos, res.SlavePos)
	if !res.Fenced || res.Lost != 0 {
		t.Errorf("planned promotion: fenced %v, lost %d; want fenced and nothing lost", res.Fenced, res.Lost)
	}
	got := ledgerRows(t, rdb)
	lostAcks := 0
	for _, id := range append(acks, acks2...) {
		if _, ok := got[id]; !ok {
			lostAcks++
		}
	}
	if lostAcks > 0 {
		t.Errorf("%d acknowledged writes are not on the promoted replica", lostAcks)
	}
	if _, err := rdb.Exec("INSERT INTO app.accounts VALUES (999999, 1, NOW(6))"); err != nil {
		t.Errorf("a write on the promoted replica: %v", err)
	}
	// Writes through the proxies are refused, saying where to go.
	for _, m := range ms {
		_, err := m.db.Exec("INSERT INTO app.ledger (node, proxy, at) VALUES (@@wsrep_node_name, 'fenced', NOW(6))")
		if err == nil || !strings.Contains(err.Error(), "promoted") || !strings.Contains(err.Error(), r.Name) {
			t.Errorf("a write through %s after the promotion: %v, want it refused naming the promoted %s", m.name, err, r.Name)
		}
	}
	if f := facts(); !f.Promoted || f.State != "promoted" {
		t.Errorf("the replica's facts after the promotion: %+v", f)
	}
	// The old cluster's nodes are read-only too: a client connected
	// straight to one cannot write there.
	var nodes []string
	for _, n := range sb.Nodes {
		nodes = append(nodes, n.Name)
	}
	var wantRO []string
	for _, n := range nodes {
		if n == operatorRO {
			n += " (the operator's read_only)"
		}
		wantRO = append(wantRO, n)
	}
	sort.Strings(res.ReadOnly)
	if !slices.Equal(res.ReadOnly, wantRO) {
		t.Errorf("read-only after the promotion: %v, want %v (not: %v)", res.ReadOnly, wantRO, res.NotReadOnly)
	}
	direct := func(node, tag string) error {
		_, err := sandboxtest.AppDB(t, sb, node).Exec("INSERT INTO app.ledger (node, proxy, at) VALUES (@@wsrep_node_name, ?, NOW(6))", tag)
		return err
	}
	for _, n := range nodes {
		var me *mysql.MySQLError
		if err := direct(n, "fenced-direct"); !errors.As(err, &me) || me.Number != 1290 {
			t.Errorf("a write straight to %s after the promotion: %v, want 1290 (read-only)", n, err)
		}
	}
	// Lifting the fence gives the cluster a writer again, and its nodes
	// are writable before any proxy writes there.
	if _, still, err := lifecycle.Unfence(ctx, store); err != nil || len(still) > 0 {
		t.Fatalf("unfence: %v; still read-only: %v", err, still)
	}
	for _, n := range nodes {
		err := direct(n, "unfenced-direct")
		var me *mysql.MySQLError
		switch {
		case n == operatorRO && (!errors.As(err, &me) || me.Number != 1290):
			t.Errorf("a write straight to %s, read-only by the operator before the fence, after unfence: %v, want 1290 still", n, err)
		case n != operatorRO && err != nil:
			t.Errorf("a write straight to %s after unfence: %v", n, err)
		}
	}
	setReadOnly(operatorRO, false)
	waitFor(t, 30*time.Second, "a writer in every proxy after the fence is lifted", func() bool {
		w, _, ok := agreement(ms)
		return ok && w != ""
	})
	if _, err := ms[0].db.Exec("INSERT INTO app.ledger (node, proxy, at) VALUES (@@wsrep_node_name, 'unfenced', NOW(6))"); err != nil {
		t.Errorf("a write after the fence was lifted: %v", err)
	}
	// The promoted replica stays a primary of its own: its agent, back
	// to following the writer, leaves it alone and says why.
	waitFor(t, 10*time.Second, "the promoted replica's agent leaving it alone after the fence is lifted", func() bool {
		f := facts()
		return f.Promoted && f.State == "promoted" && strings.Contains(f.Why, "no source")
	})
	var ro bool
	if err := rdb.QueryRow("SELECT @@read_only").Scan(&ro); err != nil || ro {
		t.Errorf("the promoted replica after unfence: read_only %v (%v)", ro, err)
	}
	if rows, err := rdb.Query("SHOW SLAVE STATUS"); err != nil || rows.Next() {
		t.Errorf("the promoted replica after unfence replicates again (%v)", err)
	} else {
		rows.Close()
	}
}
