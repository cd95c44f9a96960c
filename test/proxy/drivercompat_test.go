package proxy_test

import (
	"bufio"
	"context"
	"database/sql"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/galeon-db/galeon/internal/config"
	"github.com/galeon-db/galeon/internal/mysqlproto"
)

// testDriverCompat checks what drivers rely on beyond plain statements:
// the greeting, compression, LOAD DATA LOCAL, errors a node sends in the
// middle of a command, and per-statement state (warnings, FOUND_ROWS(),
// LAST_INSERT_ID()). The full driver matrix is in test/drivers.
func testDriverCompat(t *testing.T, pt *proxyUnderTest) {
	t.Run("greeting: the node's version, collation and MariaDB capabilities", func(t *testing.T) {
		node := readGreeting(t, pt.sb.Nodes[0].Addr())
		front := readGreeting(t, pt.addr)
		if front.ServerVersion != node.ServerVersion || !strings.HasPrefix(front.ServerVersion, "5.5.5-10.") {
			t.Errorf("galeon greets with %q, the node with %q: want the node's, with MariaDB's 5.5.5- prefix", front.ServerVersion, node.ServerVersion)
		}
		if front.Charset != node.Charset {
			t.Errorf("collation id %d, node's %d", front.Charset, node.Charset)
		}
		for _, c := range []mysqlproto.Capability{mysqlproto.MariaDBClientStmtBulkOperations, mysqlproto.ClientLocalFiles,
			mysqlproto.ClientCompress, mysqlproto.ClientDeprecateEOF, mysqlproto.ClientSessionTrack} {
			if !front.Capabilities.Has(c) {
				t.Errorf("capability %#x not offered (node offers: %v)", uint64(c), node.Capabilities.Has(c))
			}
		}
		if front.Capabilities.Has(mysqlproto.ClientMySQL) {
			t.Errorf("CLIENT_MYSQL set: MariaDB extended capabilities would not reach clients")
		}
	})

	t.Run("compressed protocol: client side, and to the nodes with pool.compress", func(t *testing.T) {
		big := strings.Repeat("galeon compresses ", 60000) // ~1 MiB
		for _, tc := range []struct {
			name string
			p    *proxyUnderTest
		}{
			{"client side", pt},
			{"both sides", startProxy(t, pt.sb, func(c *config.Config) { c.Pool.Compress = true })},
		} {
			db := tc.p.db(t, func(c *mysql.Config) { _ = c.Apply(mysql.EnableCompression(true)) })
			c := pinConn(t, db)
			if got := str(t, c, "SELECT LENGTH(?)", big); got != strconv.Itoa(len(big)) {
				t.Errorf("%s: server saw %s bytes, sent %d", tc.name, got, len(big))
			}
			if got := str(t, c, "SELECT MD5(REPEAT('galeon compresses ', 60000)) = MD5(?)", big); got != "1" {
				t.Errorf("%s: a 1 MiB result came back different", tc.name)
			}
			var n int
			rows, err := c.QueryContext(context.Background(), "SELECT seq FROM seq_1_to_20000")
			if err != nil {
				t.Fatalf("%s: %v", tc.name, err)
			}
			for rows.Next() {
				n++
			}
			if rows.Close(); n != 20000 {
				t.Errorf("%s: %d rows, want 20000", tc.name, n)
			}
		}
	})

	t.Run("compression refused with a clear error when turned off", func(t *testing.T) {
		off := startProxy(t, pt.sb, func(c *config.Config) { c.Proxy.Compression = false })
		if g := readGreeting(t, off.addr); g.Capabilities.Has(mysqlproto.ClientCompress) {
			t.Fatalf("compression offered with proxy.compression = false")
		}
		e := handshakeInsisting(t, off.addr, mysqlproto.ClientCompress)
		if e == nil || e.Code != mysqlproto.ErHandshakeError || !strings.Contains(e.Message, "proxy.compression") {
			t.Errorf("got %v, want 1043 naming proxy.compression", e)
		}
	})

	mustExec(t, pt.db(t, nil), "CREATE TABLE IF NOT EXISTS app.inf (a INT PRIMARY KEY, b INT)")
	csv := filepath.Join(t.TempDir(), "rows.csv")
	var sb strings.Builder
	for i := 1; i <= 10000; i++ {
		fmt.Fprintf(&sb, "%d,%d\n", i, 2*i)
	}
	if err := os.WriteFile(csv, []byte(sb.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	mysql.RegisterLocalFile(csv)
	load := fmt.Sprintf("LOAD DATA LOCAL INFILE '%s' INTO TABLE app.inf FIELDS TERMINATED BY ','", csv)
	countInf := "SELECT CONCAT(COUNT(*), '/', COALESCE(SUM(b), 0)) FROM app.inf /* galeon:writer */"

	t.Run("LOAD DATA LOCAL INFILE streams the client's file to the writer", func(t *testing.T) {
		c := pinConn(t, pt.db(t, nil))
		mustExec(t, c, "DELETE FROM app.inf")
		res := mustExec(t, c, load)
		if n, _ := res.RowsAffected(); n != 10000 {
			t.Errorf("%d rows affected, want 10000", n)
		}
		if got := str(t, c, countInf); got != "10000/100010000" {
			t.Errorf("table holds %s, want 10000/100010000", got)
		}
	})

	t.Run("LOAD DATA LOCAL INFILE of a small file: the statistics name the statement, not the file", func(t *testing.T) {
		// The file's packets are read into the client read buffer that
		// holds the statement; a file smaller than the statement lands
		// on its text, and the digest is taken after the load.
		small := filepath.Join(t.TempDir(), "few.csv")
		if err := os.WriteFile(small, []byte("20001,1\n20002,2\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		mysql.RegisterLocalFile(small)
		c := pinConn(t, pt.db(t, nil))
		adm := pt.adminDB(t)
		mustExec(t, adm, "DELETE FROM stats_query_digest")
		mustExec(t, c, fmt.Sprintf("LOAD DATA LOCAL INFILE '%s' INTO TABLE app.inf FIELDS TERMINATED BY ','", small))
		want := "LOAD DATA LOCAL INFILE ? INTO TABLE app.inf FIELDS TERMINATED BY ?"
		if n := str(t, adm, "SELECT COALESCE(SUM(count_star), 0) FROM stats_query_digest WHERE digest_text = '"+want+"'"); n != "1" {
			t.Errorf("stats_query_digest counts %s statements %q, want 1; it holds: %s", n, want,
				str(t, adm, "SELECT GROUP_CONCAT(digest_text, ' | ') FROM stats_query_digest"))
		}
	})

	t.Run("LOAD DATA LOCAL INFILE over max_local_infile_size: aborted, nothing committed, session usable", func(t *testing.T) {
		small := startProxy(t, pt.sb, func(c *config.Config) { c.Proxy.MaxLocalInfileSize = 32 << 10 })
		c := pinConn(t, small.db(t, nil))
		mustExec(t, c, "DELETE FROM app.inf")
		_, err := c.ExecContext(context.Background(), load)
		if code := mysqlErr(err); code != 1153 || !strings.Contains(err.Error(), "max_local_infile_size") {
			t.Errorf("got %v, want 1153 naming proxy.max_local_infile_size", err)
		}
		if got := str(t, c, countInf); got != "0/0" {
			t.Errorf("table holds %s after an aborted load, want nothing", got)
		}
	})

	t.Run("LOAD DATA LOCAL INFILE turned off for a user: 1148 saying so", func(t *testing.T) {
		no := false
		off := startProxy(t, pt.sb, func(c *config.Config) { c.Users[0].LocalInfile = &no })
		c := pinConn(t, off.db(t, nil))
		_, err := c.ExecContext(context.Background(), load)
		if code := mysqlErr(err); code != 1148 || !strings.Contains(err.Error(), "local_infile = false") {
			t.Errorf("got %v, want 1148 naming users.local_infile", err)
		}
		if got := str(t, c, "SELECT 'still here'"); got != "still here" {
			t.Errorf("session unusable after the refusal")
		}
	})

	t.Run("a statement over the node's max_allowed_packet: the node's 1153, well numbered, session usable", func(t *testing.T) {
		c := pinConn(t, pt.db(t, nil))
		maxPkt, _ := strconv.Atoi(str(t, c, "SELECT @@max_allowed_packet"))
		// Over the node's limit, under galeon's own (64 MiB): the node
		// refuses it and drops its connection in the middle of the
		// command; the client must get that error, not a broken stream.
		q := "SELECT LENGTH('" + strings.Repeat("x", maxPkt+(1<<20)) + "')"
		_, err := c.ExecContext(context.Background(), q)
		if code := mysqlErr(err); code != 1153 {
			t.Errorf("got %v, want the node's 1153", err)
		}
		if got := str(t, c, "SELECT 'still here'"); got != "still here" {
			t.Errorf("session unusable after the node's error")
		}
		// PyMySQL checks sequence ids strictly: it reported "Packet
		// sequence number wrong" when the error kept the node's numbering.
		script := fmt.Sprintf(`
import pymysql
c = pymysql.connect(host="127.0.0.1", port=%s, user=%q, password=%q, database="app")
cur = c.cursor()
try:
    cur.execute("SELECT LENGTH(%%s)", ("x" * %d,))
    print("no error")
except pymysql.err.MySQLError as e:
    print("error", e.args[0])
cur.execute("SELECT 'after'")
print(cur.fetchone()[0])
`, portOf(pt.addr), pt.sb.Credentials.AppUser, pt.sb.Credentials.AppPassword, maxPkt+(1<<20))
		out, err := exec.Command("/usr/bin/python3", "-c", script).CombinedOutput()
		if err != nil || strings.TrimSpace(string(out)) != "error 1153\nafter" {
			t.Errorf("PyMySQL: %v\n%s", err, out)
		}
	})

	t.Run("KILL QUERY with the id from the greeting interrupts that session's statement, nothing else", func(t *testing.T) {
		// What drivers do on a query timeout and the mariadb CLI on
		// Ctrl-C: a second connection sends KILL QUERY <greeting id>.
		script := fmt.Sprintf(`
import pymysql, threading, time
kw = dict(host="127.0.0.1", port=%s, user=%q, password=%q, database="app", autocommit=True)
a, b = pymysql.connect(**kw), pymysql.connect(**kw)
out = {}
def run():
    t0 = time.monotonic()
    cur = a.cursor()
    try:
        cur.execute("SELECT SLEEP(30) /* galeon:writer */")
        out["result"] = cur.fetchone()[0]
    except pymysql.err.MySQLError as e:
        out["result"] = e.args[0]  # MariaDB: 1317 query execution was interrupted
    out["took"] = time.monotonic() - t0
th = threading.Thread(target=run); th.start()
cur = b.cursor()
deadline = time.monotonic() + 20
while time.monotonic() < deadline:
    cur.execute("SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE INFO LIKE 'SELECT SLEEP(30)%%' /* galeon:writer */")
    if cur.fetchone()[0] > 0: break
cur.execute("KILL QUERY %%d" %% a.thread_id())
th.join(25)
print("interrupted", out.get("result"), out.get("took", 99) < 10)
cur.execute("SELECT 'b still here'"); print(cur.fetchone()[0])
c2 = a.cursor(); c2.execute("SELECT 'a still here'"); print(c2.fetchone()[0])
try:
    cur.execute("KILL QUERY %%d" %% (a.thread_id() + 1000000))
except pymysql.err.MySQLError as e:
    print("unknown", e.args[0])
cur.execute("KILL %%d" %% a.thread_id())
try:
    c2.execute("SELECT 1"); print("a survived")
except pymysql.err.MySQLError as e:
    print("a gone")
`, portOf(pt.addr), pt.sb.Credentials.AppUser, pt.sb.Credentials.AppPassword)
		out, err := exec.Command("/usr/bin/python3", "-c", script).CombinedOutput()
		want := "interrupted 1317 True\nb still here\na still here\nunknown 1094\na gone"
		if err != nil || strings.TrimSpace(string(out)) != want {
			t.Errorf("got %v\n%s\nwant\n%s", err, out, want)
		}
	})

	t.Run("warnings, FOUND_ROWS() and LAST_INSERT_ID() see the statement before them", func(t *testing.T) {
		c := pinConn(t, pt.db(t, nil))
		if got := str(t, c, "SELECT CAST('abc' AS SIGNED)"); got != "0" {
			t.Fatalf("CAST gave %s", got)
		}
		if got := str(t, c, "SELECT @@warning_count"); got != "1" {
			t.Errorf("@@warning_count after a read with a warning = %s, want 1", got)
		}
		if got := showWarningCodes(t, c); got != "1292" {
			t.Errorf("SHOW WARNINGS after a read with a warning: %q, want 1292", got)
		}
		res := mustExec(t, c, "INSERT INTO app.w (node, v) VALUES ('parent', 0)")
		id, _ := res.LastInsertId()
		str(t, c, "SELECT COUNT(*) FROM app.w") // a read in between, on a reader
		// Directly: the parent's id, and ROW_COUNT() -1 after the read.
		if got := str(t, c, "SELECT CONCAT(LAST_INSERT_ID(), '/', ROW_COUNT())"); got != strconv.FormatInt(id, 10)+"/-1" {
			t.Errorf("LAST_INSERT_ID()/ROW_COUNT() after an intervening read = %s, want %d/-1", got, id)
		}
		str(t, c, "SELECT COUNT(*) FROM app.w")
		mustExec(t, c, "INSERT INTO app.w (node, v) VALUES ('child', LAST_INSERT_ID())")
		if got := str(t, c, "SELECT v FROM app.w WHERE node = 'child' ORDER BY id DESC LIMIT 1 /* galeon:writer */"); got != strconv.FormatInt(id, 10) {
			t.Errorf("child row got parent id %s, want %d", got, id)
		}
		total := str(t, c, "SELECT COUNT(*) FROM app.w /* galeon:writer */")
		str(t, c, "SELECT SQL_CALC_FOUND_ROWS id FROM app.w /* galeon:writer */ LIMIT 1")
		if got := str(t, c, "SELECT FOUND_ROWS()"); got != total {
			t.Errorf("FOUND_ROWS() after SQL_CALC_FOUND_ROWS = %s, want %s", got, total)
		}
		rows, err := c.QueryContext(context.Background(), "SELECT seq FROM seq_1_to_5 LIMIT 3")
		if err != nil {
			t.Fatal(err)
		}
		rows.Close()
		if got := str(t, c, "SELECT FOUND_ROWS()"); got != "3" {
			t.Errorf("FOUND_ROWS() after a 3-row read = %s, want 3", got)
		}
		_, err = c.ExecContext(context.Background(), "SELECT * FROM app.no_such_table")
		if mysqlErr(err) != 1146 {
			t.Fatalf("want 1146, got %v", err)
		}
		if got := showWarningCodes(t, c); got != "1146" {
			t.Errorf("SHOW WARNINGS after an error: %q, want 1146", got)
		}
	})

	t.Run("causal reads (wsrep_sync_wait) hold on connections other sessions used", func(t *testing.T) {
		// MariaDB Galera stops honouring wsrep_sync_wait on a connection
		// after COM_RESET_CONNECTION or COM_CHANGE_USER, whatever the
		// variable says. galeon must never hand such a connection out:
		// connections with state it cannot undo are closed, not reset.
		one := oneConnProxy(t, pt)
		// Session A leaves state on the only reader connection and goes.
		adb, err := sql.Open("mysql", one.dsn(nil))
		if err != nil {
			t.Fatal(err)
		}
		mustExec(t, adb, "SET @galeon_dirty = 1")
		adb.Close() // the session ends; galeon takes its connection back
		b := pinConn(t, one.db(t, nil))
		mustExec(t, b, "SET SESSION wsrep_sync_wait = 1")
		mustExec(t, b, "CREATE TABLE IF NOT EXISTS app.causal (id INT PRIMARY KEY)")
		stale := 0
		for i := 0; i < 10; i++ {
			mustExec(t, b, "DELETE FROM app.causal")
			mustExec(t, b, "INSERT INTO app.causal SELECT seq FROM seq_1_to_5000")
			if got := str(t, b, "SELECT COUNT(*) FROM app.causal"); got != "5000" {
				stale++
			}
		}
		if stale > 0 {
			t.Errorf("%d of 10 reads after a write missed it with wsrep_sync_wait=1", stale)
		}
	})

	t.Run("SHOW WARNINGS never shows another session's warnings", func(t *testing.T) {
		// One backend connection per node and one reader: every read of
		// both sessions shares it.
		one := oneConnProxy(t, pt)
		a, b := pinConn(t, one.db(t, nil)), pinConn(t, one.db(t, nil))
		str(t, a, "SELECT CAST('abc' AS SIGNED)")
		str(t, a, "SELECT 1") // uses no table: MariaDB keeps the warning on the connection
		if got := showWarningCodes(t, b); got != "" {
			t.Errorf("session B sees warnings %q that session A left on a shared connection", got)
		}
		if got := str(t, b, "SELECT @@warning_count"); got != "0" {
			t.Errorf("session B: @@warning_count = %s, want 0", got)
		}
	})
}

// oneConnProxy is a proxy with one backend connection per node and one
// reader (node2): every read of every session shares one connection.
func oneConnProxy(t *testing.T, pt *proxyUnderTest) *proxyUnderTest {
	return startProxy(t, pt.sb, func(c *config.Config) {
		c.Pool.MaxConnections = 1
		for i := range c.Servers {
			if c.Servers[i].Name == "node3" {
				c.Servers[i].ReaderWeight = 0
			}
		}
	})
}

// showWarningCodes runs SHOW WARNINGS and returns the codes, comma-separated.
func showWarningCodes(t *testing.T, c *sql.Conn) string {
	t.Helper()
	rows, err := c.QueryContext(context.Background(), "SHOW WARNINGS")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var codes []string
	for rows.Next() {
		var level, code, msg string
		if err := rows.Scan(&level, &code, &msg); err != nil {
			t.Fatal(err)
		}
		codes = append(codes, code)
	}
	return strings.Join(codes, ",")
}

func portOf(addr string) string {
	_, port, _ := net.SplitHostPort(addr)
	return port
}

// readGreeting connects to addr and returns its initial handshake.
func readGreeting(t *testing.T, addr string) *mysqlproto.Handshake {
	t.Helper()
	nc, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	_ = nc.SetDeadline(time.Now().Add(5 * time.Second))
	pkt, err := mysqlproto.NewPacketReader(bufio.NewReader(nc), 0).ReadPacket()
	if err != nil {
		t.Fatal(err)
	}
	hs, err := mysqlproto.ParseHandshake(pkt)
	if err != nil {
		t.Fatal(err)
	}
	return hs
}

// handshakeInsisting logs in while asking for extra capabilities whether
// or not the server offered them, and returns the server's error.
func handshakeInsisting(t *testing.T, addr string, extra mysqlproto.Capability) *mysqlproto.SQLError {
	t.Helper()
	nc, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	_ = nc.SetDeadline(time.Now().Add(5 * time.Second))
	c := mysqlproto.NewConn(bufio.NewReader(nc), bufio.NewWriter(nc), 0)
	pkt, err := c.ReadPacket()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := mysqlproto.ParseHandshake(pkt); err != nil {
		t.Fatal(err)
	}
	resp := &mysqlproto.HandshakeResponse{
		Capabilities: mysqlproto.DefaultClientCapabilities | extra, MaxPacketSize: 1 << 24, Charset: 45,
		Username: "nobody", AuthPlugin: mysqlproto.NativePasswordPlugin,
	}
	b, err := mysqlproto.AppendHandshakeResponse(nil, resp)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.WritePacket(b); err != nil {
		t.Fatal(err)
	}
	if err := c.Flush(); err != nil {
		t.Fatal(err)
	}
	reply, err := c.ReadPacket()
	if err != nil {
		t.Fatalf("no answer to a handshake asking for unoffered capabilities: %v", err)
	}
	if !mysqlproto.IsErr(reply) {
		return nil
	}
	e, _ := mysqlproto.ParseErr(reply)
	return e
}
