package mtr_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/galeon-db/galeon/internal/sandbox"
)

// rootHosts are the hosts of the root account the tests log in as (empty
// password, as in mtr's own servers).
var rootHosts = []string{"%", "localhost", "127.0.0.1"}

// prepare gives the cluster what mtr's own servers have and the tests
// expect: root with an empty password, the test schema, and
// mtr.add_suppression (mtr installs it at bootstrap; with --extern it
// checks no warnings, so the procedure only has to exist). root@localhost
// exists already (unix_socket, no password): it gets the empty password
// for the run and its old authentication back at cleanup; the other
// accounts and the schemas are dropped at cleanup.
func prepare(t *testing.T, sb *sandbox.Sandbox) {
	t.Helper()
	db := adminDB(t, sb, "node1")
	var oldLocal string
	err := db.QueryRow("SHOW CREATE USER 'root'@'localhost'").Scan(&oldLocal)
	if err != nil && mysqlErrno(err) != 1396 { // 1396: no such account
		t.Fatal(err)
	}
	for _, h := range rootHosts {
		if h == "localhost" && oldLocal != "" {
			mustExec(t, db, "ALTER USER 'root'@'localhost' IDENTIFIED BY ''")
		} else {
			mustExec(t, db, "CREATE USER 'root'@"+quote(h)+" IDENTIFIED BY ''")
		}
		mustExec(t, db, "GRANT ALL PRIVILEGES ON *.* TO 'root'@"+quote(h)+" WITH GRANT OPTION")
	}
	// Galera steps auto-increment values by the cluster size from an
	// offset that follows the node's index in the view (node1's is 1, 2
	// or 3 from one sandbox to the next); the tests' results are
	// recorded with 1 and 1. With one writer there is nothing to
	// interleave.
	for _, n := range sb.Nodes {
		ndb := adminDB(t, sb, n.Name)
		mustExec(t, ndb, "SET GLOBAL wsrep_auto_increment_control = OFF, auto_increment_increment = 1, auto_increment_offset = 1")
		t.Cleanup(func() {
			if _, err := ndb.Exec("SET GLOBAL wsrep_auto_increment_control = ON"); err != nil {
				t.Errorf("cleanup: %s: wsrep_auto_increment_control: %v", n.Name, err)
			}
		})
	}
	mustExec(t, db, "CREATE DATABASE test")
	mustExec(t, db, "CREATE DATABASE mtr")
	mustExec(t, db, "CREATE TABLE mtr.test_suppressions (pattern VARCHAR(255)) ENGINE=InnoDB")
	mustExec(t, db, "CREATE PROCEDURE mtr.add_suppression(pattern VARCHAR(255)) INSERT INTO mtr.test_suppressions VALUES (pattern)")
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		stmts := []string{"DROP DATABASE IF EXISTS test", "DROP DATABASE IF EXISTS mtr", "DROP USER IF EXISTS 'root'@'%', 'root'@'127.0.0.1'"}
		if oldLocal != "" {
			stmts = append(stmts, "ALTER"+strings.TrimPrefix(oldLocal, "CREATE"))
		} else {
			stmts = append(stmts, "DROP USER IF EXISTS 'root'@'localhost'")
		}
		// Best effort: the sandbox is the test's own and is destroyed
		// right after; a file a test left in a schema directory (an
		// ARCHIVE table's .ARZ) makes DROP DATABASE fail with 1010, which
		// says nothing about galeon.
		for _, s := range stmts {
			var me *mysql.MySQLError
			if _, err := db.ExecContext(ctx, s); err != nil && !(errors.As(err, &me) && me.Number == 1010) {
				t.Logf("cleanup: %s: %v", s, err)
			}
		}
	})
}

// sysVar is a global system variable's value and type.
type sysVar struct {
	value sql.NullString
	typ   string
}

// baseline is the state the cluster is put back into before every run:
// a test that sets a global (max_allowed_packet, tx_isolation, ...) or
// leaves a schema or an account behind changes the tests that follow.
type baseline struct {
	globals map[string]map[string]sysVar // node -> variable -> value
	schemas map[string]bool
	users   map[string]bool // 'user'@'host'
}

// driftingVars change without a SET GLOBAL; they are not restored.
var driftingVars = map[string]bool{"GTID_SLAVE_POS": true, "WSREP_START_POSITION": true}

func takeBaseline(t *testing.T, sb *sandbox.Sandbox) baseline {
	t.Helper()
	b := baseline{globals: map[string]map[string]sysVar{}}
	for _, n := range sb.Nodes {
		b.globals[n.Name] = globals(t, adminDB(t, sb, n.Name))
	}
	db := adminDB(t, sb, "node1")
	b.schemas = set(t, db, "SELECT SCHEMA_NAME FROM information_schema.SCHEMATA")
	b.users = set(t, db, "SELECT CONCAT(QUOTE(User), '@', QUOTE(Host)) FROM mysql.user")
	return b
}

func globals(t *testing.T, db *sql.DB) map[string]sysVar {
	t.Helper()
	rows, err := db.Query("SELECT VARIABLE_NAME, GLOBAL_VALUE, VARIABLE_TYPE FROM information_schema.SYSTEM_VARIABLES" +
		" WHERE READ_ONLY = 'NO' AND VARIABLE_SCOPE <> 'SESSION ONLY'")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]sysVar{}
	for rows.Next() {
		var name string
		var v sysVar
		if err := rows.Scan(&name, &v.value, &v.typ); err != nil {
			t.Fatal(err)
		}
		if !driftingVars[name] {
			out[name] = v
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// reset puts the cluster back to b: it ends the tests' connections that
// are left, drops the accounts and schemas they left, empties the test
// schema, and sets every global a test changed back on every node. It
// fails the test if the cluster still differs from b afterwards.
func reset(t *testing.T, sb *sandbox.Sandbox, b baseline) {
	t.Helper()
	c := sb.Credentials
	for _, n := range sb.Nodes {
		db := adminDB(t, sb, n.Name)
		ids := list(t, db, "SELECT ID FROM information_schema.PROCESSLIST WHERE ID <> CONNECTION_ID()"+
			" AND COMMAND <> 'Daemon' AND USER NOT IN ('system user', 'event_scheduler', "+quote(c.AdminUser)+", "+quote(c.MonitorUser)+")")
		for _, id := range ids {
			if _, err := db.Exec("KILL " + id); err != nil && mysqlErrno(err) != 1094 { // 1094: already gone
				t.Fatalf("%s: KILL %s: %v", n.Name, id, err)
			}
		}
	}
	db := adminDB(t, sb, "node1")
	for u := range set(t, db, "SELECT CONCAT(QUOTE(User), '@', QUOTE(Host)) FROM mysql.user WHERE is_role = 'N'") {
		if !b.users[u] {
			mustExec(t, db, "DROP USER IF EXISTS "+u)
		}
	}
	for r := range set(t, db, "SELECT QUOTE(User) FROM mysql.user WHERE is_role = 'Y'") {
		if !b.users[r+"@''"] {
			mustExec(t, db, "DROP ROLE IF EXISTS "+r)
		}
	}
	for s := range set(t, db, "SELECT SCHEMA_NAME FROM information_schema.SCHEMATA") {
		if !b.schemas[s] || s == "test" {
			dropSchema(t, sb, s)
		}
	}
	mustExec(t, db, "CREATE DATABASE test")
	for _, n := range sb.Nodes {
		ndb := adminDB(t, sb, n.Name)
		for name, now := range globals(t, ndb) {
			was, ok := b.globals[n.Name][name]
			if !ok || now.value == was.value {
				continue
			}
			if _, err := ndb.Exec("SET GLOBAL " + name + " = " + literal(was)); err != nil {
				t.Fatalf("%s: restoring global %s to %q: %v", n.Name, name, was.value.String, err)
			}
		}
	}
	// The same views again: what reset could not undo would change
	// the next run's results.
	var left []string
	for _, n := range sb.Nodes {
		for name, now := range globals(t, adminDB(t, sb, n.Name)) {
			if was, ok := b.globals[n.Name][name]; ok && now.value != was.value {
				left = append(left, fmt.Sprintf("%s: @@global.%s = %q, was %q", n.Name, name, now.value.String, was.value.String))
			}
		}
	}
	if now := set(t, db, "SELECT SCHEMA_NAME FROM information_schema.SCHEMATA"); len(now) != len(b.schemas) {
		left = append(left, fmt.Sprintf("schemas %v, were %v", keys(now), keys(b.schemas)))
	}
	if len(left) > 0 {
		t.Fatalf("reset left the cluster changed:\n%s", strings.Join(left, "\n"))
	}
}

// dropSchema drops a schema a test left. A test that wrote files into its
// schema's directory (SELECT ... INTO OUTFILE with a relative path) makes
// DROP DATABASE fail on that node with 1010 while the other nodes drop
// it: the files are removed and the DROP repeated.
func dropSchema(t *testing.T, sb *sandbox.Sandbox, schema string) {
	t.Helper()
	db := adminDB(t, sb, "node1")
	stmt := "DROP DATABASE IF EXISTS " + ident(schema)
	_, err := db.Exec(stmt)
	if mysqlErrno(err) != 1010 {
		if err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
		return
	}
	for _, n := range sb.Nodes {
		var datadir string
		if err := adminDB(t, sb, n.Name).QueryRow("SELECT @@datadir").Scan(&datadir); err != nil {
			t.Fatal(err)
		}
		dir := filepath.Join(datadir, schema)
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			t.Logf("%s: removing %s, left by a test, to drop schema %s", n.Name, filepath.Join(dir, e.Name()), schema)
			if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
				t.Fatal(err)
			}
		}
	}
	mustExec(t, db, stmt)
}

// literal is a SQL literal that sets a global to v.
func literal(v sysVar) string {
	switch {
	case !v.value.Valid:
		return "NULL"
	case strings.HasPrefix(v.typ, "INT") || strings.HasPrefix(v.typ, "BIGINT") || v.typ == "DOUBLE":
		return v.value.String
	default:
		return quote(v.value.String)
	}
}

// quote is a SQL string literal.
func quote(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `''`).Replace(s) + "'"
}

// ident is a quoted SQL identifier.
func ident(s string) string { return "`" + strings.ReplaceAll(s, "`", "``") + "`" }

func adminDB(t *testing.T, sb *sandbox.Sandbox, node string) *sql.DB {
	t.Helper()
	db, err := sb.DB(node)
	if err != nil {
		t.Fatal(err)
	}
	return db
}

func mustExec(t *testing.T, db *sql.DB, stmt string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := db.ExecContext(ctx, stmt); err != nil {
		t.Fatalf("%s: %v", stmt, err)
	}
}

// list returns the first column of a query's rows.
func list(t *testing.T, db *sql.DB, query string) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	rows, err := db.QueryContext(ctx, query)
	if err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func set(t *testing.T, db *sql.DB, query string) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	for _, s := range list(t, db, query) {
		out[s] = true
	}
	return out
}

func keys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// mysqlErrno is the MySQL error number of err, or 0.
func mysqlErrno(err error) uint16 {
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		return me.Number
	}
	return 0
}
