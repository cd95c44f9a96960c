package proxy_test

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/galeon-db/galeon/internal/config"
	"github.com/galeon-db/galeon/internal/sandbox"
	"github.com/galeon-db/galeon/internal/sandbox/sandboxtest"
)

// TestProxy runs every data-plane scenario against one sandbox.
func TestProxy(t *testing.T) {
	sb := sandboxtest.New(t, sandbox.Options{Nodes: 3})
	pt := startProxy(t, sb, nil)
	db := pt.db(t, nil)
	mustExec(t, db, "CREATE TABLE IF NOT EXISTS app.w (id INT AUTO_INCREMENT PRIMARY KEY, node VARCHAR(32), v INT)")

	t.Run("writes and transactions go to the writer", func(t *testing.T) {
		for i := 0; i < 30; i++ {
			mustExec(t, db, "INSERT INTO app.w (node, v) VALUES (@@wsrep_node_name, ?)", i)
		}
		if got := str(t, db, "SELECT GROUP_CONCAT(DISTINCT node) FROM app.w /* galeon:writer */"); got != "node1" {
			t.Errorf("inserts landed on %q, want only node1", got)
		}
		tx, err := db.Begin()
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 5; i++ {
			if got := str(t, tx, "SELECT @@wsrep_node_name"); got != "node1" {
				t.Errorf("read %d inside a transaction ran on %s, want the writer node1", i, got)
			}
		}
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
		for _, q := range []string{"SELECT @@wsrep_node_name FROM app.w LIMIT 1 FOR UPDATE", "SELECT @@wsrep_node_name FROM app.w LIMIT 1 LOCK IN SHARE MODE"} {
			if got := str(t, db, q); got != "node1" {
				t.Errorf("%s ran on %s, want node1", q, got)
			}
		}
	})

	t.Run("autocommit=0 keeps every statement on the writer until commit", func(t *testing.T) {
		conn := pinConn(t, pt.db(t, nil))
		mustExec(t, conn, "SET autocommit=0")
		for i := 0; i < 5; i++ {
			if got := str(t, conn, "SELECT @@wsrep_node_name"); got != "node1" {
				t.Errorf("autocommit=0 read ran on %s", got)
			}
		}
		mustExec(t, conn, "COMMIT")
		mustExec(t, conn, "SET autocommit=1")
		seen := nodesSeen(t, conn, "SELECT @@wsrep_node_name", 30)
		if seen["node1"] > 0 || len(seen) != 2 {
			t.Errorf("after autocommit=1 reads went to %v, want node2 and node3 only", seen)
		}
	})

	t.Run("read-only transactions go to a reader", func(t *testing.T) {
		tx, err := db.BeginTx(context.Background(), &sql.TxOptions{ReadOnly: true})
		if err != nil {
			t.Fatal(err)
		}
		first := str(t, tx, "SELECT @@wsrep_node_name")
		if first == "node1" {
			t.Errorf("START TRANSACTION READ ONLY ran on the writer")
		}
		for i := 0; i < 5; i++ {
			if got := str(t, tx, "SELECT @@wsrep_node_name"); got != first {
				t.Errorf("read-only transaction moved from %s to %s", first, got)
			}
		}
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("reads follow reader weights, changed live through the admin interface", func(t *testing.T) {
		adm := pt.adminDB(t)
		mustExec(t, adm, "DELETE FROM stats_query_digest")
		// One read in flight at a time: each read is drawn on its own.
		counts := countReads(t, db, 10000, 1)
		checkShares(t, counts, map[string]float64{"node2": 0.5, "node3": 0.5}, 10000)
		res := mustExec(t, adm, "UPDATE servers SET reader_weight = 300 WHERE name = 'node3'")
		if n, _ := res.RowsAffected(); n != 1 {
			t.Errorf("UPDATE servers changed %d rows, want 1", n)
		}
		if got := str(t, adm, "SELECT reader_weight FROM servers WHERE name = 'node3'"); got != "300" {
			t.Errorf("servers shows reader_weight %s after the update", got)
		}
		counts = countReads(t, db, 10000, 1)
		checkShares(t, counts, map[string]float64{"node2": 0.25, "node3": 0.75}, 10000)
		// Many sessions at once: the readers are busy, a session's reads
		// stay on one reader for runs (pool.affinity), and the runs are
		// steered by the reads each reader served, so the shares still
		// follow the weights (docs/proxy.md#routing). The 16 sessions
		// stay open (database/sql keeps 2 idle by default, and would
		// open new ones all along). Runs drawn by load instead gave
		// node2 0.202, 0.248 and 0.218 of the reads (two of three runs
		// out of bounds); steered, 0.249 and 0.250.
		db.SetMaxIdleConns(16)
		counts = countReads(t, db, 24000, 16)
		db.SetMaxIdleConns(2)
		checkShares(t, counts, map[string]float64{"node2": 0.25, "node3": 0.75}, 24000)
		// The weights are the operator's: nothing rewrote them.
		rows, err := adm.Query("SELECT name, reader_weight FROM servers ORDER BY name")
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]int{}
		for rows.Next() {
			var n string
			var w int
			_ = rows.Scan(&n, &w)
			got[n] = w
		}
		rows.Close()
		if got["node1"] != 0 || got["node2"] != 100 || got["node3"] != 300 {
			t.Errorf("reader weights after traffic: %v, want node1=0 node2=100 node3=300", got)
		}
		if _, err := adm.Exec("UPDATE servers SET reader_weight = 'lots' WHERE name = 'node2'"); mysqlErr(err) != 1366 {
			t.Errorf("non-numeric weight: %v, want error 1366", err)
		}
		if _, err := adm.Exec("UPDATE servers SET address = 'x' WHERE name = 'node2'"); err == nil || !strings.Contains(err.Error(), "only writer_weight, reader_weight and admin_state") {
			t.Errorf("changing the address: %v, want an error naming what can change", err)
		}
		mustExec(t, adm, "UPDATE servers SET reader_weight = 100 WHERE name = 'node3'")
		testAdminSQLEngine(t, adm)
		// Stats tables show the traffic.
		if q := str(t, adm, "SELECT Queries FROM stats_connection_pool WHERE srv_name = 'node3'"); q == "0" {
			t.Errorf("stats_connection_pool shows no queries on node3")
		}
		// The routing event log starts with the writer chosen at start, and
		// nothing has changed it since.
		var kind, node, detail string
		if err := adm.QueryRow("SELECT kind, node, detail FROM events ORDER BY id LIMIT 1").Scan(&kind, &node, &detail); err != nil ||
			kind != "writer_change" || node != "node1" || detail != "node1 is the writer at start, epoch 1" {
			t.Errorf("first event %s %s %q (%v), want the writer chosen at start", kind, node, detail, err)
		}
		if got := str(t, adm, "SELECT variable_value FROM stats_galeon WHERE variable_name = 'writer_changes'"); got != "0" {
			t.Errorf("stats_galeon writer_changes = %s, want 0", got)
		}
		// A statement is counted just after its response is flushed, so the
		// last few may still be on their way: wait, then insist on the exact
		// count.
		c := ""
		deadline := time.Now().Add(5 * time.Second)
		for ; c != "44000" && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
			c = str(t, adm, "SELECT count_star FROM stats_query_digest WHERE digest_text LIKE 'SELECT @@wsrep_node_name' AND hostgroup = 'reader'")
		}
		if c != "44000" {
			t.Errorf("stats_query_digest counts %s reads of SELECT @@wsrep_node_name, want 44000 (10,000 + 10,000 + 24,000)", c)
		}
	})

	t.Run("session variables and schema follow the session across connections", func(t *testing.T) {
		conn := pinConn(t, pt.db(t, nil))
		mustExec(t, conn, "SET SESSION sql_mode = 'ANSI_QUOTES'")
		mustExec(t, conn, "SET NAMES latin1")
		mustExec(t, conn, "USE sbtest")
		nodes := map[string]bool{}
		for i := 0; i < 40; i++ {
			var node, mode, cs, schema string
			if err := conn.QueryRowContext(context.Background(), "SELECT @@wsrep_node_name, @@sql_mode, @@character_set_client, DATABASE()").Scan(&node, &mode, &cs, &schema); err != nil {
				t.Fatal(err)
			}
			nodes[node] = true
			if mode != "ANSI_QUOTES" || cs != "latin1" || schema != "sbtest" {
				t.Fatalf("on %s: sql_mode=%q charset=%q schema=%q, want ANSI_QUOTES latin1 sbtest", node, mode, cs, schema)
			}
		}
		if len(nodes) < 2 {
			t.Errorf("reads stayed on %v: the session never changed backend connection, so replay was not exercised", nodes)
		}
		// A fresh session must not inherit the state of the first.
		other := pinConn(t, pt.db(t, nil))
		if got := str(t, other, "SELECT @@sql_mode"); got == "ANSI_QUOTES" {
			t.Errorf("another session sees sql_mode=%q left behind by a multiplexed connection", got)
		}
	})

	t.Run("multiplexing: many sessions share few backend connections", func(t *testing.T) {
		small := startProxy(t, sb, func(c *config.Config) { c.Pool.MaxConnections = 3 })
		sdb := small.db(t, nil)
		sdb.SetMaxOpenConns(60)
		sdb.SetMaxIdleConns(60)
		conns := make([]*sql.Conn, 60)
		for i := range conns {
			conns[i] = pinConn(t, sdb)
		}
		var wg sync.WaitGroup
		errs := make(chan error, len(conns))
		for _, c := range conns {
			wg.Add(1)
			go func(c *sql.Conn) {
				defer wg.Done()
				for j := 0; j < 20; j++ {
					var one int
					if err := c.QueryRowContext(context.Background(), "SELECT 1").Scan(&one); err != nil {
						errs <- err
						return
					}
				}
			}(c)
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Errorf("read failed while 60 sessions shared at most 3 connections per node: %v", err)
		}
		for _, row := range small.p.PoolStats() {
			if row.MaxConnUsed > 3 {
				t.Errorf("%s used %d backend connections, limit 3", row.Server, row.MaxConnUsed)
			}
		}
	})

	t.Run("affinity: while connections suffice, each session keeps its reader connection", func(t *testing.T) {
		// pool.affinity: the connection a session's read used on its
		// reader is kept for it. Eight sessions take turns reading on one
		// reader (node3 out of the readers for the test), with room in the
		// pool: each runs every read on a connection of its own. Without
		// affinity the pool hands each read the connection that came back
		// last, the previous session's. @@pseudo_thread_id is the node's
		// thread id of the connection (galeon answers CONNECTION_ID() with
		// its own id).
		adm := pt.adminDB(t)
		mustExec(t, adm, "UPDATE servers SET reader_weight = 0 WHERE name = 'node3'")
		defer mustExec(t, adm, "UPDATE servers SET reader_weight = 100 WHERE name = 'node3'")
		adb := pt.db(t, nil)
		const sessions, rounds = 8, 25
		conns := make([]*sql.Conn, sessions)
		for i := range conns {
			conns[i] = pinConn(t, adb)
		}
		ids := make([]map[int64]int, sessions)
		for r := 0; r < rounds; r++ {
			for i, c := range conns {
				var id int64
				var node string
				if err := c.QueryRowContext(context.Background(), "SELECT @@pseudo_thread_id, @@wsrep_node_name").Scan(&id, &node); err != nil {
					t.Fatalf("read: %v", err)
				}
				if node != "node2" {
					t.Fatalf("a read went to %s with node2 the only reader", node)
				}
				if ids[i] == nil {
					ids[i] = map[int64]int{}
				}
				ids[i][id]++
			}
		}
		owner := map[int64]int{}
		for i, m := range ids {
			if len(m) != 1 {
				t.Errorf("session %d ran its %d reads on %d node connections (%v), want 1", i, rounds, len(m), m)
			}
			for id := range m {
				if j, taken := owner[id]; taken {
					t.Errorf("sessions %d and %d both read on node connection %d, want one each", j, i, id)
				}
				owner[id] = i
			}
		}
	})

	t.Run("temporary tables, locks and user variables pin the session, on the writer", func(t *testing.T) {
		conn := pinConn(t, pt.db(t, nil))
		mustExec(t, conn, "CREATE TEMPORARY TABLE tmp_pin (id INT)")
		mustExec(t, conn, "INSERT INTO tmp_pin VALUES (1)")
		for i := 0; i < 20; i++ {
			if got := str(t, conn, "SELECT COUNT(*) FROM tmp_pin"); got != "1" {
				t.Fatalf("temporary table lost on read %d: count %s", i, got)
			}
		}
		lockConn := pinConn(t, pt.db(t, nil))
		if got := str(t, lockConn, "SELECT GET_LOCK('galeon_test', 5)"); got != "1" {
			t.Fatalf("GET_LOCK = %s", got)
		}
		// IS_USED_LOCK names the node's thread that holds the lock (not
		// galeon's session id, which CONNECTION_ID() gives): it must stay
		// the same while the session is pinned.
		owner := str(t, lockConn, "SELECT IS_USED_LOCK('galeon_test')")
		for i := 0; i < 10; i++ {
			if got := str(t, lockConn, "SELECT IS_USED_LOCK('galeon_test')"); got != owner {
				t.Fatalf("lock owner %s seen as %s: the session moved to another connection", owner, got)
			}
		}
		if got := str(t, lockConn, "SELECT RELEASE_LOCK('galeon_test')"); got != "1" {
			t.Errorf("RELEASE_LOCK = %s, want 1 (same connection as GET_LOCK)", got)
		}
		uv := pinConn(t, pt.db(t, nil))
		mustExec(t, uv, "SET @galeon_uv = 42")
		for i := 0; i < 10; i++ {
			if got := str(t, uv, "SELECT @galeon_uv"); got != "42" {
				t.Fatalf("user variable lost: %q", got)
			}
		}
		// Everything a pinned session sends goes to its connection,
		// writes included: that connection must be the writer's.
		for _, c := range []*sql.Conn{conn, lockConn, uv} {
			if got := str(t, c, "SELECT @@wsrep_node_name"); got != "node1" {
				t.Errorf("a pinned session runs on %s, want the writer node1 (its writes would run there)", got)
			}
		}
		reader := pinConn(t, pt.db(t, nil))
		if got := str(t, reader, "SELECT @galeon_read_uv"); got != "" {
			t.Fatalf("SELECT @galeon_read_uv = %q on a new session", got)
		}
		if got := str(t, reader, "SELECT @@wsrep_node_name"); got != "node1" {
			t.Errorf("a read of a user variable pinned the session to %s, want the writer node1", got)
		}
	})

	t.Run("prepared statements survive a change of backend connection", func(t *testing.T) {
		conn := pinConn(t, pt.db(t, nil))
		stmt, err := conn.PrepareContext(context.Background(), "SELECT @@wsrep_node_name, ? + 1")
		if err != nil {
			t.Fatal(err)
		}
		defer stmt.Close()
		nodes := map[string]int{}
		for i := 0; i < 40; i++ {
			var node string
			var v int
			if err := stmt.QueryRowContext(context.Background(), i).Scan(&node, &v); err != nil {
				t.Fatalf("execution %d: %v", i, err)
			}
			if v != i+1 {
				t.Fatalf("execution %d returned %d", i, v)
			}
			nodes[node]++
		}
		if len(nodes) < 2 {
			t.Errorf("prepared reads ran only on %v: no change of backend connection happened", nodes)
		}
		ins, err := conn.PrepareContext(context.Background(), "INSERT INTO app.w (node, v) VALUES (@@wsrep_node_name, ?)")
		if err != nil {
			t.Fatal(err)
		}
		defer ins.Close()
		for i := 0; i < 10; i++ {
			if _, err := ins.ExecContext(context.Background(), 1000+i); err != nil {
				t.Fatal(err)
			}
		}
		if got := str(t, db, "SELECT COUNT(*) FROM app.w WHERE v >= 1000 AND node = 'node1' /* galeon:writer */"); got != "10" {
			t.Errorf("prepared inserts on the writer: %s of 10", got)
		}
	})

	t.Run("SET sent as a prepared statement is tracked", func(t *testing.T) {
		conn := pinConn(t, pt.db(t, nil))
		set, err := conn.PrepareContext(context.Background(), "SET SESSION sql_mode = 'ANSI_QUOTES'")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := set.ExecContext(context.Background()); err != nil {
			t.Fatal(err)
		}
		set.Close()
		nodes := map[string]bool{}
		for i := 0; i < 30; i++ {
			var node, mode string
			if err := conn.QueryRowContext(context.Background(), "SELECT @@wsrep_node_name, @@sql_mode").Scan(&node, &mode); err != nil {
				t.Fatal(err)
			}
			nodes[node] = true
			if mode != "ANSI_QUOTES" {
				t.Fatalf("read %d on %s: sql_mode %q after a prepared SET, want ANSI_QUOTES", i, node, mode)
			}
		}
		if len(nodes) < 2 {
			t.Errorf("reads stayed on %v: replay of the prepared SET was not exercised", nodes)
		}
		// With a parameter the value is only in the binary packet: galeon
		// reads it back from the connection, and the setting holds.
		conn2 := pinConn(t, pt.db(t, nil))
		if _, err := conn2.ExecContext(context.Background(), "SET SESSION sql_mode = ?", "NO_ZERO_DATE"); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 10; i++ {
			if got := str(t, conn2, "SELECT @@sql_mode"); got != "NO_ZERO_DATE" {
				t.Fatalf("read %d: sql_mode %q after a prepared SET with a parameter", i, got)
			}
		}
	})

	t.Run("multi-statements and multiple result sets", func(t *testing.T) {
		mdb := pt.db(t, func(c *mysql.Config) { c.MultiStatements = true })
		mustExec(t, mdb, "INSERT INTO app.w (node, v) VALUES ('m', 1); INSERT INTO app.w (node, v) VALUES ('m', 2)")
		rows, err := mdb.Query("SELECT 1; SELECT 2, 3")
		if err != nil {
			t.Fatal(err)
		}
		sets := 0
		for {
			for rows.Next() {
			}
			sets++
			if !rows.NextResultSet() {
				break
			}
		}
		rows.Close()
		if sets != 2 {
			t.Errorf("got %d result sets, want 2", sets)
		}
		if got := str(t, db, "SELECT COUNT(*) FROM app.w WHERE node='m' /* galeon:writer */"); got != "2" {
			t.Errorf("multi-statement inserted %s rows, want 2", got)
		}
	})

	t.Run("transactions commit and roll back", func(t *testing.T) {
		tx, _ := db.Begin()
		mustExec(t, tx, "INSERT INTO app.w (node, v) VALUES ('rollback', 1)")
		if err := tx.Rollback(); err != nil {
			t.Fatal(err)
		}
		tx, _ = db.Begin()
		mustExec(t, tx, "INSERT INTO app.w (node, v) VALUES ('commit', 1)")
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
		if got := str(t, db, "SELECT CONCAT(SUM(node='rollback'), '/', SUM(node='commit')) FROM app.w /* galeon:writer */"); got != "0/1" {
			t.Errorf("rollback/commit rows = %s, want 0/1", got)
		}
	})

	t.Run("mariadb CLI", func(t *testing.T) {
		host, port := splitAddr(pt.addr)
		out, err := exec.Command("mariadb", "-h"+host, "-P"+port, "-u"+sb.Credentials.AppUser, "-p"+sb.Credentials.AppPassword,
			"-N", "-B", "app", "-e", "SELECT 'cli-ok'; SHOW TABLES LIKE 'w'; SELECT COUNT(*) > 0 FROM app.w").CombinedOutput()
		if err != nil || string(out) != "cli-ok\nw\n1\n" {
			t.Errorf("mariadb CLI through galeon: err %v, output %q", err, out)
		}
		out, err = exec.Command("mariadb", "-h"+host, "-P"+port, "-u"+sb.Credentials.AppUser, "-pwrong", "-e", "SELECT 1").CombinedOutput()
		if err == nil || !strings.Contains(string(out), "1045") || !strings.Contains(string(out), "Access denied") {
			t.Errorf("wrong password: err %v, output %q; want ERROR 1045 Access denied", err, out)
		}
	})

	t.Run("PyMySQL", func(t *testing.T) {
		host, port := splitAddr(pt.addr)
		script := fmt.Sprintf(`
import pymysql
c = pymysql.connect(host=%q, port=%s, user=%q, password=%q, database="app", autocommit=True)
cur = c.cursor()
cur.execute("SELECT @@wsrep_node_name")
reader = cur.fetchone()[0]
c.begin()
cur.execute("INSERT INTO w (node, v) VALUES (%%s, %%s)", ("pymysql", 7))
cur.execute("SELECT @@wsrep_node_name")
in_tx = cur.fetchone()[0]
c.commit()
cur.execute("SELECT COUNT(*) FROM w WHERE node='pymysql' /* galeon:writer */")
print(reader != "node1", in_tx, cur.fetchone()[0])
c.close()
`, host, port, sb.Credentials.AppUser, sb.Credentials.AppPassword)
		out, err := exec.Command("/usr/bin/python3", "-c", script).CombinedOutput() // Debian python3-pymysql
		if err != nil || strings.TrimSpace(string(out)) != "True node1 1" {
			t.Errorf("PyMySQL through galeon: err %v, output %q, want 'True node1 1'", err, out)
		}
	})

	t.Run("sysbench oltp_read_write, text and prepared", func(t *testing.T) {
		host, port := splitAddr(pt.addr)
		base := []string{"--db-driver=mysql", "--mysql-host=" + host, "--mysql-port=" + port,
			"--mysql-user=" + sb.Credentials.AppUser, "--mysql-password=" + sb.Credentials.AppPassword,
			"--mysql-db=sbtest", "--tables=2", "--table-size=1000"}
		if out, err := exec.Command("sysbench", append(base, "oltp_read_write", "prepare")...).CombinedOutput(); err != nil {
			t.Fatalf("sysbench prepare: %v\n%s", err, out)
		}
		for _, mode := range []string{"disable", "auto"} {
			args := append(append([]string{}, base...), "--threads=4", "--time=5", "--db-ps-mode="+mode, "oltp_read_write", "run")
			out, err := exec.Command("sysbench", args...).CombinedOutput()
			if err != nil || !strings.Contains(string(out), "transactions:") || strings.Contains(string(out), "FATAL") {
				t.Errorf("sysbench --db-ps-mode=%s: %v\n%s", mode, err, out)
				continue
			}
			t.Logf("sysbench ps-mode=%s: %s", mode, grepLine(string(out), "transactions:"))
		}
	})

	t.Run("COM_CHANGE_USER and COM_RESET_CONNECTION", func(t *testing.T) { testChangeUserAndResetConnection(t, pt) })

	t.Run("TLS and caching_sha2_password", func(t *testing.T) { testTLS(t, pt) })

	t.Run("driver compatibility", func(t *testing.T) { testDriverCompat(t, pt) })

	t.Run("errors", func(t *testing.T) { testErrors(t, pt, db) })

	t.Run("autocommit writes wrapped with a commit marker answer as bare ones", func(t *testing.T) { testWrappedWrites(t, pt) })

	t.Run("a marker that rolls the transaction back is the answer", func(t *testing.T) { testMarkerRollsBack(t, pt) })

	// A Galera-aware proxy on the same cluster: its monitor's series and
	// the writer role (switchover) are what the metrics, the dashboard and
	// the alert rules are about.
	gp := startProxy(t, sb, func(cfg *config.Config) {
		c := sb.Credentials
		cfg.Galera.MonitorUser, cfg.Galera.MonitorPassword = c.MonitorUser, c.MonitorPassword
		for i := range cfg.Servers {
			cfg.Servers[i].WriterWeight, cfg.Servers[i].ReaderWeight = 100-40*i, 100
		}
	})
	t.Run("session fidelity", func(t *testing.T) { testSessionFidelity(t, pt, gp, sb) })

	t.Run("metrics, dashboard and alert rules", func(t *testing.T) { testMetrics(t, gp) })

	t.Run("web dashboard and its actions", func(t *testing.T) { testDashboard(t, gp, sb) })
}

// pinConn returns one client connection (one proxy session).
func pinConn(t *testing.T, db *sql.DB) *sql.Conn {
	t.Helper()
	c, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func nodesSeen(t *testing.T, q queryer, query string, n int) map[string]int {
	t.Helper()
	seen := map[string]int{}
	for i := 0; i < n; i++ {
		seen[str(t, q, query)]++
	}
	return seen
}

// countReads runs n autocommit reads over workers sessions and counts the
// node that answered each.
func countReads(t *testing.T, db *sql.DB, n, workers int) map[string]int {
	t.Helper()
	var mu sync.Mutex
	counts := map[string]int{}
	var wg sync.WaitGroup
	per := n / workers
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			local := map[string]int{}
			for i := 0; i < per; i++ {
				var node string
				if err := db.QueryRow("SELECT @@wsrep_node_name").Scan(&node); err != nil {
					t.Errorf("read: %v", err)
					return
				}
				local[node]++
			}
			mu.Lock()
			for k, v := range local {
				counts[k] += v
			}
			mu.Unlock()
		}()
	}
	wg.Wait()
	return counts
}

// checkShares asserts each node's share is within ±10% of its weight share.
func checkShares(t *testing.T, counts map[string]int, want map[string]float64, n int) {
	t.Helper()
	total := 0
	for _, c := range counts {
		total += c
	}
	if total != n {
		t.Errorf("%d of %d reads succeeded", total, n)
	}
	for node, share := range want {
		got := float64(counts[node]) / float64(total)
		if math.Abs(got-share) > 0.10*share {
			t.Errorf("%s got %.3f of reads, want %.3f ±10%% (counts %v)", node, got, share, counts)
		}
	}
	for node := range counts {
		if _, ok := want[node]; !ok {
			t.Errorf("%s served %d reads but has no reader weight", node, counts[node])
		}
	}
	t.Logf("read shares over %d reads: %v", total, counts)
}

func splitAddr(a string) (string, string) {
	i := strings.LastIndexByte(a, ':')
	return a[:i], a[i+1:]
}

func grepLine(out, s string) string {
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, s) {
			return strings.TrimSpace(l)
		}
	}
	return ""
}

// testAdminSQLEngine checks the admin interface's SQL against the live
// proxy: a join and aggregate over two live tables, a multi-row UPDATE
// computed from the rows, and all-or-nothing writes.
func testAdminSQLEngine(t *testing.T, adm *sql.DB) {
	t.Helper()
	rows, err := adm.Query("SELECT s.name, SUM(p.Queries) > 0 FROM servers s JOIN stats_connection_pool p ON p.srv_name = s.name " +
		"WHERE s.reader_weight > 0 GROUP BY s.name ORDER BY s.name")
	if err != nil {
		t.Fatalf("join over servers and stats_connection_pool: %v", err)
	}
	var got []string
	for rows.Next() {
		var name string
		var busy int
		if err := rows.Scan(&name, &busy); err != nil {
			t.Fatal(err)
		}
		got = append(got, fmt.Sprintf("%s:%d", name, busy))
	}
	rows.Close()
	if strings.Join(got, " ") != "node2:1 node3:1" {
		t.Errorf("readers with traffic: %v, want node2:1 node3:1", got)
	}

	res := mustExec(t, adm, "UPDATE servers SET reader_weight = reader_weight * 2 WHERE reader_weight > 0")
	if n, _ := res.RowsAffected(); n != 2 {
		t.Errorf("UPDATE ... reader_weight * 2 matched %d rows, want 2", n)
	}
	weights := func() string {
		return str(t, adm, "SELECT GROUP_CONCAT(name || '=' || reader_weight, ' ') FROM (SELECT * FROM servers ORDER BY name)")
	}
	if w := weights(); w != "node1=0 node2=200 node3=200" {
		t.Errorf("after doubling: %s", w)
	}
	// One bad row refuses the whole statement: node2 keeps 200.
	_, err = adm.Exec("UPDATE servers SET reader_weight = CASE name WHEN 'node2' THEN 50 ELSE -1 END WHERE reader_weight > 0")
	if err == nil || !strings.Contains(err.Error(), "use 0 (not in that hostgroup) to 1000000") {
		t.Errorf("a negative weight on one row: %v, want the table's refusal", err)
	}
	if w := weights(); w != "node1=0 node2=200 node3=200" {
		t.Errorf("after a refused statement: %s", w)
	}
	mustExec(t, adm, "UPDATE servers SET reader_weight = 100 WHERE reader_weight > 0")

	// Query rules: two rows at once, all or nothing.
	count := func() string { return str(t, adm, "SELECT COUNT(*) FROM query_rules") }
	before := count()
	if _, err := adm.Exec("INSERT INTO query_rules (match, destination) VALUES ('^SELECT 1 FROM dual', 'reader'), ('(unclosed', 'reader')"); err == nil {
		t.Error("a rule with a bad regular expression was accepted")
	}
	if c := count(); c != before {
		t.Errorf("a refused two-row INSERT left %s rules, want %s", c, before)
	}
	mustExec(t, adm, "INSERT INTO query_rules (match, destination) VALUES ('^SELECT 1 FROM dual', 'reader'), ('^SELECT 2 FROM dual', 'writer')")
	mustExec(t, adm, "UPDATE query_rules SET destination = 'reader' WHERE match LIKE '%2 FROM dual'")
	if d := str(t, adm, "SELECT GROUP_CONCAT(destination) FROM query_rules WHERE match LIKE '^SELECT _ FROM dual'"); d != "reader,reader" {
		t.Errorf("rules after UPDATE: %s", d)
	}
	res = mustExec(t, adm, "DELETE FROM query_rules WHERE rule_id IN (SELECT rule_id FROM query_rules WHERE match LIKE '%FROM dual')")
	if n, _ := res.RowsAffected(); n != 2 {
		t.Errorf("DELETE removed %d rules, want 2", n)
	}
	if c := count(); c != before {
		t.Errorf("rules left: %s, want %s", c, before)
	}
}
