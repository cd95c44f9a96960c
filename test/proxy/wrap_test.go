package proxy_test

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/galeon-db/galeon/internal/backend"
	"github.com/galeon-db/galeon/internal/mysqlproto"
)

// testWrappedWrites checks that an autocommit write galeon wraps with a
// commit marker (BEGIN; statement; marker; COMMIT, issue 21) answers
// exactly as the bare statement on a direct connection to the writer
// does — affected rows, insert id, warnings count, info, transaction
// status — and leaves the same ROW_COUNT(), LAST_INSERT_ID(), warnings
// and errors for the statements that read them. Both sides run the same
// script, each on a table of its own, so that ids match.
func testWrappedWrites(t *testing.T, pt *proxyUnderTest) {
	ctx := context.Background()
	c := pt.sb.Credentials
	prof := backend.Profile{User: c.AppUser, Password: c.AppPassword}
	dial := func(addr string) *backend.Conn {
		conn, err := backend.Dial(ctx, addr, prof, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
		conn.SetDeadline(time.Now().Add(2 * time.Minute))
		return conn
	}
	direct := dial(pt.sb.Nodes[0].Addr()) // node1, the writer

	through := dial(pt.addr)
	markersBefore := markedRows(t, direct)
	script := []string{
		"USE app",
		"CREATE OR REPLACE TABLE %s (id INT AUTO_INCREMENT PRIMARY KEY, v TINYINT)",
		"INSERT INTO %s (v) VALUES (1), (2)",
		"SELECT ROW_COUNT(), LAST_INSERT_ID(), @@warning_count, @@error_count",
		"INSERT IGNORE INTO %s (id, v) VALUES (1, 5), (10, 6)",
		"SHOW WARNINGS",
		"SHOW COUNT(*) WARNINGS",
		"SHOW WARNINGS",
		"SELECT ROW_COUNT() AS rc",
		"UPDATE %s SET v = v + 1 WHERE id > 0",
		"SELECT ROW_COUNT()",
		"INSERT INTO %s (id, v) VALUES (1, 5)",
		"SHOW WARNINGS",
		"SHOW ERRORS",
		"SELECT @@error_count, @@warning_count, ROW_COUNT()",
		"REPLACE INTO %s (id, v) VALUES (1, 9)",
		"INSERT INTO %s (id, v) VALUES (1, 1) ON DUPLICATE KEY UPDATE v = 10",
		"SELECT ROW_COUNT()",
		"DELETE FROM %s WHERE id = 1",
		"SELECT ROW_COUNT(), LAST_INSERT_ID()",
		"SET sql_mode = ''",
		"INSERT INTO %s (v) VALUES (1000), (-1000)",
		"SHOW WARNINGS LIMIT 1",
		"SHOW WARNINGS LIMIT 1, 5",
		"UPDATE %s SET v = 300",
		"SELECT 1",
		"SHOW WARNINGS",
		"SELECT LAST_INSERT_ID(), ROW_COUNT()",
		"DELETE FROM %s WHERE id < 0",
		"SELECT ROW_COUNT()",
		// A session whose COMMIT would chain a new transaction, and one
		// where BEGIN opens a block (sql_mode=ORACLE): a wrapped write
		// still leaves no transaction open.
		"SET SESSION completion_type = 'CHAIN'",
		"INSERT INTO %s (v) VALUES (7)",
		"SELECT @@in_transaction, ROW_COUNT()",
		"SET SESSION completion_type = DEFAULT",
		"SET SESSION sql_mode = 'ORACLE'",
		"INSERT INTO %s (v) VALUES (8)",
		"SELECT @@in_transaction, ROW_COUNT()",
		"SET SESSION sql_mode = DEFAULT",
		"SELECT id, v FROM %s ORDER BY id",
	}
	for _, q := range script {
		want := rawAnswer(t, direct, strings.ReplaceAll(q, "%s", "wrap_direct"))
		got := rawAnswer(t, through, strings.ReplaceAll(q, "%s", "wrap_galeon"))
		if got != want {
			t.Errorf("%s\n  through galeon: %s\n  direct:         %s", q, got, want)
		}
	}
	// The same writes as prepared statements (COM_STMT_EXECUTE), as
	// go-sql-driver sends a statement with arguments.
	dsn, err := pt.sb.AppDSN("node1")
	if err != nil {
		t.Fatal(err)
	}
	dd, err := sql.Open("mysql", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer dd.Close()
	gd := pt.db(t, nil)
	for _, q := range []string{
		"INSERT INTO app.%s (v) VALUES (?), (?)",
		"INSERT INTO app.%s (id, v) VALUES (20, ?) ON DUPLICATE KEY UPDATE v = v + ?",
		"INSERT INTO app.%s (id, v) VALUES (20, ?) ON DUPLICATE KEY UPDATE v = v + ?",
		"UPDATE app.%s SET v = ? WHERE id > ?",
		"DELETE FROM app.%s WHERE id = 20 AND v > ?",
	} {
		outcome := func(db *sql.DB, table string) string {
			res, err := db.Exec(strings.ReplaceAll(q, "%s", table), 3, 4)
			if err != nil {
				return "error " + err.Error()
			}
			id, _ := res.LastInsertId()
			n, _ := res.RowsAffected()
			return fmt.Sprintf("id=%d affected=%d", id, n)
		}
		if want, got := outcome(dd, "wrap_direct"), outcome(gd, "wrap_galeon"); got != want {
			t.Errorf("prepared %s: through galeon %s, direct %s", q, got, want)
		}
	}
	if after := markedRows(t, direct); after <= markersBefore {
		t.Errorf("no wrapped write left its marker (latest marker with counts: %q before, %q after)", markersBefore, after)
	}
}

// markedRows is the time of the latest marker a wrapped write wrote (its
// row holds counts): slots are reused across sessions, so a new wrapped
// write may rewrite a row that already held counts.
func markedRows(t *testing.T, c *backend.Conn) string {
	t.Helper()
	row, err := c.QueryRow("SELECT COALESCE(MAX(at), '') FROM galeon.commit_marker WHERE rc IS NOT NULL")
	if err != nil || len(row) != 1 {
		t.Fatalf("commit_marker: %v", err)
	}
	return row[0].Text
}

// rawAnswer runs q and renders its whole answer: an OK's counts, info and
// transaction status, an error's code and message, a result's column
// names, rows and warnings count.
func rawAnswer(t *testing.T, c *backend.Conn, q string) string {
	t.Helper()
	c.ResetSeq()
	if err := c.WritePacket(mysqlproto.AppendComQuery(nil, q, c.Caps)); err != nil {
		t.Fatal(err)
	}
	if err := c.Flush(); err != nil {
		t.Fatal(err)
	}
	c.SetSeq(1)
	read := func() []byte {
		p, err := c.ReadPacket()
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		return append([]byte(nil), p...)
	}
	status := func(s mysqlproto.StatusFlag) string {
		return fmt.Sprintf("intx=%v autocommit=%v", s.Has(mysqlproto.ServerStatusInTrans), s.Has(mysqlproto.ServerStatusAutocommit))
	}
	p := read()
	switch {
	case mysqlproto.IsErr(p):
		se, _ := mysqlproto.ParseErr(p)
		return fmt.Sprintf("ERR %d %s", se.Code, se.Message)
	case mysqlproto.IsOK(p):
		ok, err := mysqlproto.ParseOK(p, c.Caps)
		if err != nil {
			t.Fatal(err)
		}
		return fmt.Sprintf("OK affected=%d id=%d warnings=%d info=%q %s", ok.AffectedRows, ok.LastInsertID, ok.Warnings, ok.Info, status(ok.Status))
	}
	cols, _, _, _ := mysqlproto.ReadLenEncInt(p)
	var b strings.Builder
	b.WriteString("cols")
	for range cols {
		b.WriteString(" " + lenEncStrings(read(), 5)[4])
	}
	deprecate := c.Caps.Has(mysqlproto.ClientDeprecateEOF)
	if !deprecate {
		read()
	}
	for {
		p := read()
		if mysqlproto.IsEOF(p, deprecate) {
			w, s, _ := mysqlproto.ParseTerminator(p, c.Caps)
			fmt.Fprintf(&b, " | warnings=%d %s", w, status(s))
			return b.String()
		}
		fmt.Fprintf(&b, " | %q", lenEncStrings(p, int(cols)))
	}
}

// lenEncStrings reads n length-encoded strings (NULL as "NULL").
func lenEncStrings(p []byte, n int) []string {
	var out []string
	for range n {
		if len(p) > 0 && p[0] == 0xfb {
			out, p = append(out, "NULL"), p[1:]
			continue
		}
		l, _, k, err := mysqlproto.ReadLenEncInt(p)
		if err != nil || k+int(l) > len(p) {
			return append(out, "?")
		}
		out, p = append(out, string(p[k:k+int(l)])), p[k+int(l):]
	}
	return out
}

// testMarkerRollsBack: with wsrep_max_ws_rows on the writer, a write of
// exactly that many rows passes alone, but the commit marker's row
// exceeds the limit and MariaDB rolls the whole transaction back (1180).
// The client's answer must agree with the data: an OK only if the rows
// changed. Both for a wrapped autocommit UPDATE and for a transaction's
// COMMIT (whose marker runs just before it).
func testMarkerRollsBack(t *testing.T, pt *proxyUnderTest) {
	ctx := context.Background()
	admin, err := pt.sb.DB("node1") // the writer
	if err != nil {
		t.Fatal(err)
	}
	db := pt.db(t, nil)
	db.SetMaxOpenConns(1)
	if _, err := db.ExecContext(ctx, "CREATE OR REPLACE TABLE app.maxrows (id INT PRIMARY KEY, v INT)"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, "INSERT INTO app.maxrows VALUES (1, 0), (2, 0), (3, 0)"); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.ExecContext(ctx, "SET GLOBAL wsrep_max_ws_rows = 3"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = admin.ExecContext(context.Background(), "SET GLOBAL wsrep_max_ws_rows = 0") })
	sum := func() int {
		var n int
		if err := admin.QueryRowContext(ctx, "SELECT SUM(v) FROM app.maxrows").Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	check := func(what string, before int, err error) {
		after := sum()
		t.Logf("%s: %v; sum %d -> %d", what, err, before, after)
		switch {
		case err == nil && after == before:
			t.Errorf("%s answered OK but changed nothing", what)
		case err != nil && after != before:
			t.Errorf("%s answered %v but changed the rows", what, err)
		}
	}
	before := sum()
	_, err = db.ExecContext(ctx, "UPDATE app.maxrows SET v = v + 1")
	check("autocommit UPDATE of 3 rows", before, err)

	before = sum()
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "BEGIN"); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.ExecContext(ctx, "UPDATE app.maxrows SET v = v + 1"); err != nil {
		t.Fatal(err)
	}
	_, err = conn.ExecContext(ctx, "COMMIT")
	check("COMMIT of a transaction that updated 3 rows", before, err)
}
