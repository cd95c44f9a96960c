package proxy_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/galeon-db/galeon/internal/config"
	"github.com/galeon-db/galeon/internal/sandbox"
	"github.com/galeon-db/galeon/internal/testkit"
)

// testSessionFidelity checks that a session through galeon is the session
// the client set up (issue 18), each time against a direct connection to
// a node of the same cluster. pt routes reads over node2 and node3, so a
// session changes backend connection (and node) from statement to
// statement and its state is replayed every time; gp runs the Galera
// monitor, which notices changes of the nodes' globals.
func testSessionFidelity(t *testing.T, pt, gp *proxyUnderTest, sb *sandbox.Sandbox) {
	direct := func(t *testing.T, node string, mod func(*mysql.Config)) *sql.Conn {
		dsn, err := sb.AppDSN(node)
		if err != nil {
			t.Fatal(err)
		}
		cfg, _ := mysql.ParseDSN(dsn)
		cfg.DBName = "app"
		if mod != nil {
			mod(cfg)
		}
		db, err := sql.Open("mysql", cfg.FormatDSN())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return pinConn(t, db)
	}
	// sameEverywhere runs q n times on c and fails unless every answer is
	// want and the answers came from at least two nodes (so the session's
	// state was replayed on other connections).
	sameEverywhere := func(t *testing.T, c *sql.Conn, q, want string, n int) {
		t.Helper()
		nodes := map[string]bool{}
		for i := 0; i < n; i++ {
			var node, got string
			if err := c.QueryRowContext(context.Background(), "SELECT @@wsrep_node_name, "+q).Scan(&node, &got); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
			nodes[node] = true
			if got != want {
				t.Fatalf("read %d on %s: %s = %q, want %q (as on a direct connection)", i, node, q, got, want)
			}
		}
		if len(nodes) < 2 {
			t.Errorf("reads stayed on %v: the session never moved, so replay was not exercised", nodes)
		}
	}
	// busy keeps other sessions using the pooled connections with other
	// values of sql_mode and time_zone until the test ends, so that a
	// connection a session moves to carries somebody else's state.
	busy := func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		t.Cleanup(func() { cancel(); wg.Wait() })
		for w := 0; w < 3; w++ {
			c := pinConn(t, pt.db(t, nil))
			mustExec(t, c, "SET time_zone = '-07:00', sql_mode = 'PIPES_AS_CONCAT'")
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; i < 5000 && ctx.Err() == nil; i++ {
					var s string
					_ = c.QueryRowContext(ctx, "SELECT CONCAT(NOW(), @@sql_mode)").Scan(&s)
				}
			}()
		}
	}

	t.Run("variables set from expressions are replayed by their value", func(t *testing.T) {
		busy(t)
		for _, tc := range []struct {
			name string
			sets []string
			q    string
		}{
			{"sql_mode from CONCAT(@@sql_mode)", []string{"SET sql_mode='NO_ENGINE_SUBSTITUTION'", "SET sql_mode=CONCAT(@@sql_mode, ',ANSI_QUOTES')"}, "@@sql_mode"},
			{"sql_mode from REPLACE(@@sql_mode)", []string{"SET sql_mode=REPLACE(@@sql_mode, 'STRICT_TRANS_TABLES', '')"}, "@@sql_mode"},
			{"timestamp after time_zone", []string{"SET time_zone='+05:00'", "SET timestamp=UNIX_TIMESTAMP('2011-01-01 01:01:01')"}, "CAST(NOW() AS CHAR)"},
			{"isolation level", []string{"SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED"}, "@@tx_isolation"},
			{"read-only transactions", []string{"SET SESSION TRANSACTION READ ONLY"}, "CAST(@@tx_read_only AS CHAR)"},
			{"a variable from its own value", []string{"SET SESSION sort_buffer_size = 1048576", "SET SESSION sort_buffer_size = @@session.sort_buffer_size * 2"}, "CAST(@@sort_buffer_size AS CHAR)"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				want := direct(t, "node1", nil)
				got := pinConn(t, pt.db(t, nil))
				for _, set := range tc.sets {
					mustExec(t, want, set)
					mustExec(t, got, set)
				}
				expect := str(t, want, "SELECT "+tc.q)
				sameEverywhere(t, got, tc.q, expect, 30)
				// Pinning the session (user variable) lands it on a
				// connection that must carry the same value.
				mustExec(t, got, "SET @pin = 1")
				if v := str(t, got, "SELECT "+tc.q); v != expect {
					t.Errorf("after the session was pinned: %s = %q, want %q", tc.q, v, expect)
				}
			})
		}
	})

	t.Run("a prepared SET with a parameter is replayed by value", func(t *testing.T) {
		c := pinConn(t, pt.db(t, nil))
		if _, err := c.ExecContext(context.Background(), "SET SESSION sql_mode = ?", "NO_ZERO_DATE,ANSI_QUOTES"); err != nil {
			t.Fatal(err)
		}
		sameEverywhere(t, c, "@@sql_mode", "ANSI_QUOTES,NO_ZERO_DATE", 20)
	})

	t.Run("the character set is replayed before the schema", func(t *testing.T) {
		const schema = "fidélité_ñ"
		admin, err := sb.DB("node1")
		if err != nil {
			t.Fatal(err)
		}
		mustExec(t, admin, "CREATE DATABASE IF NOT EXISTS `"+schema+"` CHARACTER SET utf8mb4")
		for _, host := range []string{"%", "localhost", "127.0.0.1"} {
			mustExec(t, admin, fmt.Sprintf("GRANT ALL ON `%s`.* TO '%s'@'%s'", schema, sb.Credentials.AppUser, host))
		}
		t.Cleanup(func() { _, _ = admin.Exec("DROP DATABASE IF EXISTS `" + schema + "`") })
		// The handshake asks for latin1: a connection replayed in the
		// wrong order reads the schema name in latin1 and fails (1049).
		latin1 := func(cfg *mysql.Config) { cfg.Collation = "latin1_swedish_ci" }
		for s := 0; s < 5; s++ {
			c := pinConn(t, pt.db(t, latin1))
			mustExec(t, c, "SET NAMES utf8mb4")
			mustExec(t, c, "USE `"+schema+"`")
			sameEverywhere(t, c, "DATABASE()", schema, 20)
		}
	})

	t.Run("new sessions start from the nodes' current globals", func(t *testing.T) {
		var dbs []*sql.DB
		for _, n := range sb.Nodes {
			db, err := sb.DB(n.Name)
			if err != nil {
				t.Fatal(err)
			}
			dbs = append(dbs, db)
		}
		orig := str(t, dbs[0], "SELECT @@global.sql_mode")
		setAll := func(v string) {
			for _, db := range dbs {
				mustExec(t, db, "SET GLOBAL sql_mode = ?", v)
			}
		}
		t.Cleanup(func() { setAll(orig) })
		// Warm the pools with sessions on the old globals, and learn
		// which nodes serve new sessions' reads.
		serving := map[string]bool{}
		for i := 0; i < 30; i++ {
			c := pinConn(t, gp.db(t, nil))
			var node, got string
			if err := c.QueryRowContext(context.Background(), "SELECT @@wsrep_node_name, @@sql_mode").Scan(&node, &got); err != nil {
				t.Fatal(err)
			}
			c.Close()
			serving[node] = true
			if got != orig {
				t.Fatalf("before the change: sql_mode %q on %s, want %q", got, node, orig)
			}
		}
		for _, v := range []string{"ANSI_QUOTES", orig} {
			setAll(v)
			want := str(t, direct(t, "node2", nil), "SELECT @@sql_mode")
			// The monitor notices within a few health checks of each
			// node (each on its own schedule); until then a new session
			// may still get a connection opened before.
			start := time.Now()
			deadline := start.Add(15 * time.Second)
			fresh := map[string]bool{}
			for len(fresh) < len(serving) {
				c := pinConn(t, gp.db(t, nil))
				var node, got string
				if err := c.QueryRowContext(context.Background(), "SELECT @@wsrep_node_name, @@sql_mode").Scan(&node, &got); err != nil {
					t.Fatal(err)
				}
				c.Close()
				fresh[node] = fresh[node] || got == want
				if !fresh[node] {
					delete(fresh, node)
				}
				if time.Now().After(deadline) {
					t.Fatalf("new sessions on %s still get sql_mode %q %s after SET GLOBAL sql_mode=%q", node, got, time.Since(start), v)
				}
				time.Sleep(20 * time.Millisecond)
			}
			t.Logf("SET GLOBAL sql_mode=%q reached new sessions after %s", v, time.Since(start).Round(time.Millisecond))
			for i := 0; i < 30; i++ {
				c := pinConn(t, gp.db(t, nil))
				if got := str(t, c, "SELECT @@sql_mode"); got != want {
					t.Fatalf("new session %d: sql_mode %q, want %q", i, got, want)
				}
				c.Close()
			}
		}
	})

	t.Run("CONNECTION_ID() is the session's id, and KILL QUERY with it interrupts the statement", func(t *testing.T) {
		c := pinConn(t, pt.db(t, nil))
		rows, err := c.QueryContext(context.Background(), "SELECT CONNECTION_ID()")
		if err != nil {
			t.Fatal(err)
		}
		cols, _ := rows.Columns()
		var id uint64
		for rows.Next() {
			if err := rows.Scan(&id); err != nil {
				t.Fatal(err)
			}
		}
		rows.Close()
		if len(cols) != 1 || cols[0] != "CONNECTION_ID()" {
			t.Errorf("column names %q, want [CONNECTION_ID()] as on a direct connection", cols)
		}
		if id < 1<<30 {
			t.Fatalf("CONNECTION_ID() = %d: a node's thread id, not galeon's session id", id)
		}
		for i := 0; i < 20; i++ {
			if got := str(t, c, "SELECT CONNECTION_ID() FROM DUAL WHERE CONNECTION_ID() > 0"); got != fmt.Sprint(id) {
				t.Fatalf("statement %d: CONNECTION_ID() = %s, want the session's %d", i, got, id)
			}
		}
		stmt, err := c.PrepareContext(context.Background(), "SELECT CONNECTION_ID()")
		if err != nil {
			t.Fatal(err)
		}
		var pid uint64
		if err := stmt.QueryRowContext(context.Background()).Scan(&pid); err != nil || pid != id {
			t.Errorf("prepared CONNECTION_ID() = %d, %v; want %d", pid, err, id)
		}
		stmt.Close()

		// The session runs a long statement; another session of the same
		// user sees it in SHOW PROCESSLIST and interrupts it.
		done := make(chan error, 1)
		started := time.Now()
		go func() {
			var v sql.NullInt64
			done <- c.QueryRowContext(context.Background(), "SELECT SLEEP(30)").Scan(&v)
		}()
		other := pinConn(t, pt.db(t, nil))
		var info, node, command string
		testkit.WaitFor(t, 10*time.Second, "the statement in the processlist", func() bool {
			info, node, command = processEntry(t, other, id)
			return strings.Contains(info, "SLEEP(30)")
		})
		if command != "Query" || node == "" {
			t.Errorf("SHOW PROCESSLIST row of the sleeping session: command %q, node %q; want Query on a node", command, node)
		}
		if _, err := other.ExecContext(context.Background(), fmt.Sprintf("KILL QUERY %d", id)); err != nil {
			t.Fatalf("KILL QUERY %d: %v", id, err)
		}
		select {
		case err := <-done:
			if err != nil && mysqlErr(err) != 1317 {
				t.Errorf("interrupted statement: %v, want its result or error 1317", err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("SELECT SLEEP(30) still runs 10 s after KILL QUERY of its session")
		}
		if d := time.Since(started); d > 20*time.Second {
			t.Errorf("the statement ran %s: KILL QUERY did not interrupt it", d)
		}
		if got := str(t, c, "SELECT CONNECTION_ID()"); got != fmt.Sprint(id) {
			t.Errorf("after KILL QUERY the session's id is %s, want %d", got, id)
		}
	})

	t.Run("KILL of a node's thread id is refused", func(t *testing.T) {
		c := pinConn(t, pt.db(t, nil))
		victim := direct(t, "node2", nil)
		tid := str(t, victim, "SELECT CONNECTION_ID()")
		_, err := c.ExecContext(context.Background(), "KILL "+tid)
		if mysqlErr(err) != 1094 || !strings.Contains(err.Error(), "galeon") {
			t.Fatalf("KILL %s (a node's thread) through galeon: %v, want error 1094 explaining galeon's ids", tid, err)
		}
		if got := str(t, victim, "SELECT 1"); got != "1" {
			t.Errorf("the node's connection was hurt: %q", got)
		}
		if _, err := c.ExecContext(context.Background(), "KILL USER "+sb.Credentials.AppUser); mysqlErr(err) != 1235 {
			t.Errorf("KILL USER through galeon: %v, want error 1235", err)
		}
	})

	t.Run("a session reads its own writes on the readers", func(t *testing.T) {
		mustExec(t, pt.db(t, nil), "CREATE TABLE IF NOT EXISTS app.ryw (id INT AUTO_INCREMENT PRIMARY KEY, v INT, node VARCHAR(16))")
		c := pinConn(t, pt.db(t, nil))
		misses, nodes := writeThenRead(t, c, 200)
		if misses > 0 || nodes["node1"] > 0 {
			t.Errorf("prepared: %d of 200 reads right after the session's own write missed it; reads ran on %v (want node2 and node3 only)", misses, nodes)
		}
		// The text protocol (the read is sent as SET STATEMENT ... FOR),
		// and a multi-statement read (a causal SELECT 1 before it).
		text := pinConn(t, pt.db(t, func(cfg *mysql.Config) { cfg.InterpolateParams, cfg.MultiStatements = true, true }))
		if m, n := writeThenRead(t, text, 100); m > 0 || n["node1"] > 0 {
			t.Errorf("text: %d of 100 reads right after the session's own write missed it; reads ran on %v", m, n)
		}
		for i := 0; i < 50; i++ {
			res := mustExec(t, text, "INSERT INTO app.ryw (v) VALUES (?)", i)
			id, _ := res.LastInsertId()
			rows, err := text.QueryContext(context.Background(), "SELECT COUNT(*) FROM app.ryw WHERE id = ?; SELECT 2", id)
			if err != nil {
				t.Fatal(err)
			}
			var found int
			for rows.Next() {
				if err := rows.Scan(&found); err != nil {
					t.Fatal(err)
				}
			}
			if !rows.NextResultSet() {
				t.Fatal("no second result set")
			}
			for rows.Next() {
			}
			rows.Close()
			if found != 1 {
				t.Fatalf("multi-statement read %d after a write: found %d rows, want 1", i, found)
			}
			// A statement that reads wsrep_sync_wait is not made causal:
			// it sees the session's own value.
			if got := str(t, text, "SELECT @@wsrep_sync_wait"); got != "0" {
				t.Fatalf("the session reads wsrep_sync_wait = %s after a causal read, want its own 0", got)
			}
		}
		// Nothing is left on the pooled connections the causal reads used.
		other := pinConn(t, pt.db(t, nil))
		for i := 0; i < 40; i++ {
			if got := str(t, other, "SELECT @@wsrep_sync_wait"); got != "0" {
				t.Fatalf("another session reads wsrep_sync_wait = %s on a pooled connection", got)
			}
		}
		var causal int64
		if err := pt.adminDB(t).QueryRow("SELECT variable_value FROM stats_galeon WHERE variable_name = 'causal_reads'").Scan(&causal); err != nil {
			t.Fatal(err)
		}
		if causal < 200 {
			t.Errorf("%d causal reads for 200 reads after a write", causal)
		}
		t.Logf("read_your_writes=on: %d of 200 reads missed the write; reads on %v, %d causal", misses, nodes, causal)
		off := startProxy(t, sb, func(cfg *config.Config) { cfg.Galera.ReadYourWrites = "off" })
		misses, nodes = writeThenRead(t, pinConn(t, off.db(t, nil)), 200)
		t.Logf("read_your_writes=off: %d of 200 reads missed the write; reads on %v", misses, nodes)
	})

	t.Run("reads of tables Galera does not replicate go to the writer", func(t *testing.T) {
		db := pt.db(t, nil)
		node2 := direct(t, "node2", nil)
		for _, engine := range []string{"Aria", "MyISAM"} {
			table := "app.local_" + strings.ToLower(engine)
			mustExec(t, db, "DROP TABLE IF EXISTS "+table)
			mustExec(t, db, "CREATE TABLE "+table+" (id INT PRIMARY KEY, v INT) ENGINE="+engine)
			t.Cleanup(func() { _, _ = db.Exec("DROP TABLE IF EXISTS " + table) })
			mustExec(t, db, "INSERT INTO "+table+" VALUES (1, 1), (2, 2), (3, 3)")
			if got := str(t, node2, "SELECT COUNT(*) FROM "+table); got != "0" {
				t.Fatalf("%s holds %s rows on node2: it replicates, the test proves nothing", table, got)
			}
			c := pinConn(t, pt.db(t, nil))
			for i := 0; i < 20; i++ {
				if got := str(t, c, "SELECT COUNT(*) FROM "+table); got != "3" {
					t.Fatalf("%s read %d through galeon: %s rows, want the writer's 3", engine, i, got)
				}
			}
			seen := nodesSeen(t, c, "SELECT @@wsrep_node_name FROM app.ryw LIMIT 1", 20)
			if seen["node1"] > 0 {
				t.Errorf("reads of an InnoDB table went to the writer too: %v", seen)
			}
		}
		// A table made on the writer directly (not through galeon) is
		// found by the periodic refresh.
		admin, err := sb.DB("node1")
		if err != nil {
			t.Fatal(err)
		}
		mustExec(t, admin, "CREATE TABLE IF NOT EXISTS app.local_direct (id INT PRIMARY KEY) ENGINE=MyISAM")
		t.Cleanup(func() { _, _ = admin.Exec("DROP TABLE IF EXISTS app.local_direct") })
		mustExec(t, admin, "INSERT INTO app.local_direct VALUES (1)")
		c := pinConn(t, pt.db(t, nil))
		start := time.Now()
		testkit.WaitFor(t, 15*time.Second, "the local table on the writer", func() bool { return str(t, c, "SELECT COUNT(*) FROM app.local_direct") == "1" })
		t.Logf("a MyISAM table made directly on the writer was routed there after %s", time.Since(start).Round(time.Millisecond))
		for i := 0; i < 10; i++ {
			if got := str(t, c, "SELECT COUNT(*) FROM app.local_direct"); got != "1" {
				t.Fatalf("read %d: %s rows, want 1", i, got)
			}
		}
	})

	t.Run("SHOW PROCESSLIST lists galeon's sessions", func(t *testing.T) {
		a, b := pinConn(t, pt.db(t, nil)), pinConn(t, pt.db(t, nil))
		mustExec(t, b, "USE sbtest")
		idA, idB := str(t, a, "SELECT CONNECTION_ID()"), str(t, b, "SELECT CONNECTION_ID()")
		list := func() map[string][]string {
			rows, err := a.QueryContext(context.Background(), "SHOW FULL PROCESSLIST")
			if err != nil {
				t.Fatal(err)
			}
			defer rows.Close()
			cols, _ := rows.Columns()
			if strings.Join(cols, ",") != "Id,User,Host,db,Command,Time,State,Info,Progress,Node" {
				t.Errorf("columns %v", cols)
			}
			seen := map[string][]string{}
			for rows.Next() {
				vals := make([]sql.NullString, len(cols))
				ptrs := make([]any, len(cols))
				for i := range vals {
					ptrs[i] = &vals[i]
				}
				if err := rows.Scan(ptrs...); err != nil {
					t.Fatal(err)
				}
				row := make([]string, len(vals))
				for i, v := range vals {
					row[i] = v.String
				}
				seen[row[0]] = row
			}
			return seen
		}
		// b's answer reaches the client a moment before its session
		// records that it is idle again.
		var seen map[string][]string
		testkit.WaitFor(t, 5*time.Second, "the session idle in the processlist", func() bool {
			seen = list()
			return seen[idB] != nil && seen[idB][4] == "Sleep"
		})
		if r := seen[idA]; r == nil || r[4] != "Query" || r[7] != "SHOW FULL PROCESSLIST" {
			t.Errorf("own row %v", r)
		}
		if r := seen[idB]; r == nil || r[4] != "Sleep" || r[3] != "sbtest" || r[1] != sb.Credentials.AppUser {
			t.Errorf("other session's row %v, want Sleep in sbtest", r)
		}
	})
}

// processEntry returns the Info, Node and Command columns of session id in
// SHOW FULL PROCESSLIST through c.
func processEntry(t *testing.T, c *sql.Conn, id uint64) (info, node, command string) {
	t.Helper()
	rows, err := c.QueryContext(context.Background(), "SHOW FULL PROCESSLIST")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var rid uint64
		var user, host, cmd, state, prog string
		var db, inf, nd sql.NullString
		var secs int64
		if err := rows.Scan(&rid, &user, &host, &db, &cmd, &secs, &state, &inf, &prog, &nd); err != nil {
			t.Fatal(err)
		}
		if rid == id {
			return inf.String, nd.String, cmd
		}
	}
	if err := rows.Err(); err != nil && !errors.Is(err, sql.ErrNoRows) {
		t.Fatal(err)
	}
	return "", "", ""
}

// writeThenRead inserts a row n times (every other time in a
// transaction) and reads it right after through c; it returns how many
// reads missed the row and which nodes served them.
func writeThenRead(t *testing.T, c *sql.Conn, n int) (misses int, nodes map[string]int) {
	t.Helper()
	nodes = map[string]int{}
	for i := 0; i < n; i++ {
		var res sql.Result
		var err error
		if i%2 == 0 {
			res, err = c.ExecContext(context.Background(), "INSERT INTO app.ryw (v) VALUES (?)", i)
		} else {
			tx, terr := c.BeginTx(context.Background(), nil)
			if terr != nil {
				t.Fatal(terr)
			}
			res, err = tx.ExecContext(context.Background(), "INSERT INTO app.ryw (v) VALUES (?)", i)
			if err == nil {
				err = tx.Commit()
			}
		}
		if err != nil {
			t.Fatal(err)
		}
		id, _ := res.LastInsertId()
		var node string
		var found int
		if err := c.QueryRowContext(context.Background(), "SELECT @@wsrep_node_name, COUNT(*) FROM app.ryw WHERE id = ?", id).Scan(&node, &found); err != nil {
			t.Fatal(err)
		}
		nodes[node]++
		if found != 1 {
			misses++
		}
	}
	return misses, nodes
}
