package admin

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
)

// End-to-end tests through go-sql-driver/mysql, the driver galeon's own
// tooling and most Go operators' scripts use.

func openDB(t *testing.T, s *Server, user, password, params string) *sql.DB {
	t.Helper()
	dsn := fmt.Sprintf("%s:%s@tcp(%s)/main?timeout=5s&%s", user, password, s.SQLAddr(), params)
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func mysqlErr(t *testing.T, err error) *mysql.MySQLError {
	t.Helper()
	var me *mysql.MySQLError
	if !errors.As(err, &me) {
		t.Fatalf("got %v (%T), want a MySQL error", err, err)
	}
	return me
}

func TestDriverSelect(t *testing.T) {
	fs := newFakeServers()
	s := startServer(t, Config{}, []Table{fs.table(), statsTable()}, nil)
	db := openDB(t, s, testUser, testPassword, "interpolateParams=true")
	ctx := context.Background()

	rows, err := db.QueryContext(ctx, "SELECT * FROM servers WHERE hostgroup = ? ORDER BY hostname", 10)
	if err != nil {
		t.Fatal(err)
	}
	cols, _ := rows.Columns()
	if got := strings.Join(cols, ","); got != "hostgroup,hostname,port,weight,status,comment,max_lag" {
		t.Errorf("columns %s", got)
	}
	types, _ := rows.ColumnTypes()
	var typeNames []string
	for _, ct := range types {
		typeNames = append(typeNames, ct.DatabaseTypeName())
	}
	if got := strings.Join(typeNames, ","); got != "BIGINT,VARCHAR,BIGINT,BIGINT,VARCHAR,VARCHAR,DOUBLE" {
		t.Errorf("column types %s", got)
	}
	var got []string
	for rows.Next() {
		var (
			hg, port, weight int64
			host, status     string
			comment          sql.NullString
			lag              sql.NullFloat64
		)
		if err := rows.Scan(&hg, &host, &port, &weight, &status, &comment, &lag); err != nil {
			t.Fatal(err)
		}
		got = append(got, fmt.Sprintf("%d %s %d %d %s %v/%q %v/%g", hg, host, port, weight, status, comment.Valid, comment.String, lag.Valid, lag.Float64))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	rows.Close()
	want := []string{
		`10 db1 3306 100 ONLINE true/"primary" true/1.5`,
		`10 db2 3306 50 ONLINE false/"" false/0`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("rows:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	// Interpolated strings with quotes, backslashes and control bytes
	// must round-trip through the driver's escaping and our lexer.
	var host string
	err = db.QueryRowContext(ctx, "SELECT hostname FROM servers WHERE comment = ?", "it's \"quoted\"\tand tabbed").Scan(&host)
	if err != nil || host != "db3" {
		t.Errorf("escaped string lookup: %q, %v", host, err)
	}

	var n int
	if err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM servers WHERE status IN (?, ?) AND weight > ?", "ONLINE", "OFFLINE_SOFT", 1.5).Scan(&n); err != nil || n != 2 {
		t.Errorf("count = %d, %v", n, err)
	}
	var comment, version string
	if err := db.QueryRowContext(ctx, "SELECT @@version_comment, @@version").Scan(&comment, &version); err != nil || comment != versionComment || version != serverVersion {
		t.Errorf("variables: %q %q %v", comment, version, err)
	}
	var dbName string
	if err := db.QueryRowContext(ctx, "SELECT DATABASE()").Scan(&dbName); err != nil || dbName != "main" {
		t.Errorf("DATABASE() = %q, %v", dbName, err)
	}
	if err := db.PingContext(ctx); err != nil {
		t.Errorf("ping: %v", err)
	}
	var value sql.NullInt64
	var ratio sql.NullFloat64
	if err := db.QueryRowContext(ctx, "SELECT value, ratio FROM stats WHERE name = 'up'").Scan(&value, &ratio); err != nil || value.Int64 != 1 || ratio.Valid {
		t.Errorf("stats: %v %v %v", value, ratio, err)
	}
}

func TestDriverUpdateAndErrors(t *testing.T) {
	fs := newFakeServers()
	s := startServer(t, Config{}, []Table{fs.table(), statsTable()}, nil)
	db := openDB(t, s, testUser, testPassword, "interpolateParams=true")
	ctx := context.Background()
	// One connection throughout: errors must leave it usable.
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()

	res, err := conn.ExecContext(ctx, "UPDATE servers SET weight = ?, status = ? WHERE hostgroup = ?", 5, "OFFLINE_SOFT", 10)
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := res.RowsAffected(); n != 2 {
		t.Errorf("rows affected %d, want 2", n)
	}
	if got := fs.snapshot(); got[0][3] != int64(5) || got[1][4] != "OFFLINE_SOFT" || got[2][3] != int64(1) {
		t.Errorf("table after update: %v", got)
	}

	errs := []struct {
		sql    string
		args   []any
		number uint16
		msg    string
	}{
		{"SELECT * FROM nope", nil, 1146, "tables: servers, stats"},
		{"SELECT nope FROM servers", nil, 1054, "Unknown column 'nope'; columns of servers: hostgroup"},
		{"SELECT * FRM servers", nil, 1064, `near "FRM": syntax error`},
		{"UPDATE servers SET weight = ?", []any{"abc"}, 1366, "Incorrect integer value: 'abc' for column 'weight'"},
		{"UPDATE servers SET status = ? WHERE hostname = ?", []any{"BROKEN", "db1"}, 1105, "status must be ONLINE"},
		{"UPDATE stats SET value = 1", nil, 1036, "read only"},
		{"BEGIN", nil, 1235, "transactions are not supported"},
	}
	for _, e := range errs {
		_, err := conn.ExecContext(ctx, e.sql, e.args...)
		me := mysqlErr(t, err)
		if me.Number != e.number || !strings.Contains(me.Message, e.msg) {
			t.Errorf("%s: got %d %s, want %d ...%s...", e.sql, me.Number, me.Message, e.number, e.msg)
		}
		var n int
		if err := conn.QueryRowContext(ctx, "SELECT COUNT(*) FROM servers").Scan(&n); err != nil || n != 3 {
			t.Fatalf("connection unusable after %q: %d, %v", e.sql, n, err)
		}
	}
	if got := fs.snapshot(); got[0][4] != "OFFLINE_SOFT" {
		t.Errorf("failed update changed the table: %v", got)
	}

	if _, err := conn.ExecContext(ctx, "INSERT INTO servers (hostname, port) VALUES (?, ?)", "db9", 3309); err != nil {
		t.Fatal(err)
	}
	res, err = conn.ExecContext(ctx, "DELETE FROM servers WHERE hostname LIKE ?", "db9%")
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		t.Errorf("deleted %d", n)
	}
}

func TestDriverPreparedStatementsRefused(t *testing.T) {
	fs := newFakeServers()
	s := startServer(t, Config{}, []Table{fs.table()}, nil)
	db := openDB(t, s, testUser, testPassword, "interpolateParams=false")
	_, err := db.Query("SELECT * FROM servers WHERE port = ?", 3306)
	me := mysqlErr(t, err)
	if me.Number != uint16(erUnsupportedPS) || !strings.Contains(me.Message, prepareRefused) {
		t.Errorf("got %d %s", me.Number, me.Message)
	}
	// Without arguments the driver uses the text protocol.
	var n int
	if err := db.QueryRow("SELECT COUNT(*) FROM servers").Scan(&n); err != nil || n != 3 {
		t.Errorf("plain query after refused prepare: %d %v", n, err)
	}
}

func TestDriverMultiStatements(t *testing.T) {
	fs := newFakeServers()
	s := startServer(t, Config{}, []Table{fs.table()}, nil)
	single := openDB(t, s, testUser, testPassword, "interpolateParams=true")
	_, err := single.Exec("UPDATE servers SET weight = 1; UPDATE servers SET weight = 2")
	if me := mysqlErr(t, err); me.Number != 1064 || !strings.Contains(me.Message, "multiStatements=true") {
		t.Errorf("got %d %s", me.Number, me.Message)
	}
	multi := openDB(t, s, testUser, testPassword, "interpolateParams=true&multiStatements=true")
	if _, err := multi.Exec("UPDATE servers SET weight = 3 WHERE hostname = 'db1'; UPDATE servers SET weight = 4 WHERE hostname = 'db2'"); err != nil {
		t.Fatal(err)
	}
	if got := fs.snapshot(); got[0][3] != int64(3) || got[1][3] != int64(4) {
		t.Errorf("after multi-statement: %v", got)
	}
	rows, err := multi.Query("SELECT hostname FROM servers LIMIT 1; SELECT COUNT(*) FROM servers")
	if err != nil {
		t.Fatal(err)
	}
	var sets []string
	for {
		for rows.Next() {
			var v string
			if err := rows.Scan(&v); err != nil {
				t.Fatal(err)
			}
			sets = append(sets, v)
		}
		if !rows.NextResultSet() {
			break
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	rows.Close()
	if strings.Join(sets, ",") != "db1,3" {
		t.Errorf("result sets: %v", sets)
	}
	// An error stops the batch; the connection stays usable.
	_, err = multi.Exec("UPDATE servers SET weight = 9 WHERE hostname = 'db1'; SELECT * FROM nope; UPDATE servers SET weight = 9")
	if me := mysqlErr(t, err); me.Number != 1146 {
		t.Errorf("got %v", me)
	}
	if got := fs.snapshot(); got[0][3] != int64(9) || got[1][3] != int64(4) {
		t.Errorf("after failed batch: %v", got)
	}
}

func TestDriverAuth(t *testing.T) {
	fs := newFakeServers()
	s := startServer(t, Config{}, []Table{fs.table()}, nil)
	for _, c := range []struct{ user, pw string }{
		{testUser, "wrong"},
		{"root", testPassword},
		{testUser, ""},
	} {
		db := openDB(t, s, c.user, c.pw, "")
		err := db.Ping()
		if me := mysqlErr(t, err); me.Number != 1045 || !strings.Contains(me.Message, "Access denied for user '"+c.user+"'") {
			t.Errorf("%s/%s: got %v", c.user, c.pw, me)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := openDB(t, s, testUser, testPassword, "").PingContext(ctx); err != nil {
		t.Errorf("right password: %v", err)
	}
}

func TestDriverEmptyPassword(t *testing.T) {
	fs := newFakeServers()
	s := startServer(t, Config{User: "ops"}, []Table{fs.table()}, nil)
	if err := openDB(t, s, "ops", "", "").Ping(); err != nil {
		t.Errorf("no password configured, none given: %v", err)
	}
	if me := mysqlErr(t, openDB(t, s, "ops", "x", "").Ping()); me.Number != 1045 {
		t.Errorf("password given where none is configured: %v", me)
	}
}
