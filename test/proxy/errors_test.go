package proxy_test

import (
	"bufio"
	"context"
	"database/sql"
	"errors"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/galeon-db/galeon/internal/config"
	"github.com/galeon-db/galeon/internal/mysqlproto"
	"github.com/galeon-db/galeon/internal/mysqlproto/prototest"
	"github.com/galeon-db/galeon/internal/testkit"
)

// testErrors checks every failure a client can meet: each gives a clear
// MySQL error, and other sessions keep working.
func testErrors(t *testing.T, pt *proxyUnderTest, db *sql.DB) {
	// A bystander session runs reads for the whole test; it must never fail.
	bystander := pinConn(t, pt.db(t, nil))
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var bystanderErr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			var one int
			if err := bystander.QueryRowContext(context.Background(), "SELECT 1").Scan(&one); err != nil {
				bystanderErr = err
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
	}()
	defer func() {
		close(stop)
		wg.Wait()
		if bystanderErr != nil {
			t.Errorf("a bystander session failed while other sessions misbehaved: %v", bystanderErr)
		}
	}()

	t.Run("wrong password: 1045", func(t *testing.T) {
		bad, _ := sql.Open("mysql", strings.Replace(pt.dsn(nil), pt.sb.Credentials.AppPassword, "nope", 1))
		defer bad.Close()
		if code := mysqlErr(bad.Ping()); code != 1045 {
			t.Errorf("error code %d, want 1045", code)
		}
	})

	t.Run("unknown schema at connect: the server's own error", func(t *testing.T) {
		bad, _ := sql.Open("mysql", strings.Replace(pt.dsn(nil), "/app", "/no_such_db", 1))
		defer bad.Close()
		// The app account may not even see the schema: MariaDB then says
		// 1044 (access denied to database) instead of 1049.
		err := bad.Ping()
		if code := mysqlErr(err); (code != 1049 && code != 1044) || !strings.Contains(err.Error(), "no_such_db") {
			t.Errorf("got %v, want 1049 or 1044 naming no_such_db", err)
		}
	})

	t.Run("no backend available: 9001 within the timeout, naming the hostgroup", func(t *testing.T) {
		dead := startProxy(t, pt.sb, func(c *config.Config) {
			c.Proxy.NoBackendWait = config.Duration(500 * time.Millisecond)
			c.Servers = []config.Server{{Name: "gone", Address: "127.0.0.1:1", WriterWeight: 1, ReaderWeight: 1}}
		})
		ddb := dead.db(t, func(c *mysql.Config) { c.DBName = "" })
		start := time.Now()
		_, err := ddb.Exec("INSERT INTO app.w (v) VALUES (1)")
		took := time.Since(start)
		if code := mysqlErr(err); code != 9001 || !strings.Contains(err.Error(), "hostgroup 'writer'") || !strings.Contains(err.Error(), "gone") {
			t.Errorf("got %v, want 9001 naming hostgroup 'writer' and node gone", err)
		}
		if took > 3*time.Second {
			t.Errorf("error took %s; no_backend_timeout is 500ms", took)
		}
	})

	t.Run("writes waiting for a writer: woken by the view, bounded by max_paused_writes, counted", func(t *testing.T) {
		nw := startProxy(t, pt.sb, func(c *config.Config) {
			c.Proxy.NoBackendWait = config.Duration(3 * time.Second)
			c.Proxy.MaxPausedWrites = 2
		})
		adm := nw.adminDB(t)
		// until waits for what the proxy's admin tables show, and says
		// all they show when it does not come (this case once failed in
		// CI with no clue: a drained writer coming back was one cause).
		until := func(what string, limit time.Duration, ok func() bool) {
			t.Helper()
			deadline := time.Now().Add(limit)
			for !ok() {
				if time.Now().After(deadline) {
					t.Fatalf("%s: not within %s\nwriter: %s\nservers: %s\nevents: %s",
						what, limit, dumpTable(adm, "writer"), dumpTable(adm, "servers"), dumpTable(adm, "events"))
				}
				time.Sleep(10 * time.Millisecond)
			}
		}
		writerNode := func() string {
			var n sql.NullString
			_ = adm.QueryRow("SELECT node FROM writer").Scan(&n)
			return n.String
		}
		until("node1 the writer of the new proxy", 10*time.Second, func() bool { return writerNode() == "node1" })
		// Taking the only writer weight away is refused (it would stop
		// writes until undone) ...
		if _, err := adm.Exec("UPDATE servers SET writer_weight = 0 WHERE name = 'node1'"); mysqlErr(err) != 4025 ||
			!strings.Contains(err.Error(), "no node would have writer_weight > 0") {
			t.Fatalf("UPDATE servers SET writer_weight = 0 on the only writer: %v, want 4025 saying no node would have a writer weight", err)
		}
		// ... but an operator drain of node1, the only node with a
		// writer weight, leaves no node that may take writes: writes
		// pause until a writer appears or no_backend_timeout ends.
		if _, err := adm.Exec("UPDATE servers SET admin_state = 'drain' WHERE name = 'node1'"); err != nil {
			t.Fatal(err)
		}
		until("no writer once node1 is drained", 5*time.Second, func() bool { return writerNode() == "" })
		stat := func(name string) int64 {
			var v int64
			if err := adm.QueryRow("SELECT variable_value FROM stats_galeon WHERE variable_name = ?", name).Scan(&v); err != nil {
				t.Fatalf("stats_galeon %s: %v", name, err)
			}
			return v
		}
		wdb := nw.db(t, nil)
		wdb.SetMaxOpenConns(10)
		errs := make(chan error, 2)
		began := time.Now()
		for i := 0; i < 2; i++ {
			go func() {
				_, err := wdb.Exec("INSERT INTO app.w (v) VALUES (2)")
				errs <- err
			}()
		}
		until("two writes waiting for a writer", 2*time.Second, func() bool {
			select {
			case e := <-errs:
				t.Fatalf("a write ended while no node may take writes: %v", e)
			default:
			}
			return stat("paused_writes") == 2
		})
		start := time.Now()
		_, err := wdb.Exec("INSERT INTO app.w (v) VALUES (3)")
		if code := mysqlErr(err); code != 9001 || !strings.Contains(err.Error(), "proxy.max_paused_writes") {
			t.Errorf("a third waiting write: %v, want 9001 naming proxy.max_paused_writes", err)
		}
		if took := time.Since(start); took > time.Second {
			t.Errorf("the write past the limit took %s; it must be refused at once", took)
		}
		// A writer appears: the waiting writes go on as soon as the view
		// says so, not after the timeout.
		if _, err := adm.Exec("UPDATE servers SET admin_state = 'active' WHERE name = 'node1'"); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 2; i++ {
			if err := <-errs; err != nil {
				t.Errorf("a paused write failed once node1 could take writes: %v", err)
			}
		}
		if waited := time.Since(began); waited > 2500*time.Millisecond {
			t.Errorf("paused writes finished %s after they began; the writer came back well before no_backend_timeout (3s)", waited)
		}
		if now, total, rejected := stat("paused_writes"), stat("paused_writes_total"), stat("paused_writes_rejected"); now != 0 || total != 2 || rejected != 1 {
			t.Errorf("paused_writes %d, total %d, rejected %d; want 0, 2, 1", now, total, rejected)
		}
		if ms := stat("paused_writes_ms_total"); ms <= 0 {
			t.Errorf("paused_writes_ms_total = %d, want the time the two writes waited", ms)
		}
	})

	t.Run("backend dies mid-transaction: error to that client, session recovers", func(t *testing.T) {
		victim := pinConn(t, pt.db(t, nil))
		tx, err := victim.BeginTx(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = tx.Rollback() })
		// CONNECTION_ID() through galeon is the session's id; the node's
		// thread is found by the statement it runs.
		mustExec(t, tx, "DO 1")
		admin, err := pt.sb.DB("node1")
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() {
			_, err := tx.ExecContext(context.Background(), "DO SLEEP(10) /* victim */")
			done <- err
		}()
		// Wait until the statement runs on the node, then kill its thread.
		var backendID string
		testkit.WaitFor(t, 5*time.Second, "the victim statement on its node", func() bool {
			_ = admin.QueryRow("SELECT id FROM information_schema.processlist WHERE info LIKE 'DO SLEEP(10) /* victim */%'").Scan(&backendID)
			return backendID != ""
		})
		if _, err := admin.Exec("KILL " + backendID); err != nil {
			t.Fatal(err)
		}
		select {
		case err := <-done:
			if err == nil {
				t.Fatal("statement on a killed backend connection succeeded")
			}
			t.Logf("client saw: %v", err)
			// The node is up: its KILL stands (no replay), and the
			// transaction, whose COMMIT was never sent, is rolled back.
			var me *mysql.MySQLError
			if !errors.As(err, &me) || me.Number != 9002 || !strings.Contains(me.Message, "rolled back (its COMMIT was never sent)") {
				t.Errorf("client saw %v; want 9002 saying the transaction was rolled back", err)
			}
			if n := str(t, pt.adminDB(t), "SELECT variable_value FROM stats_galeon WHERE variable_name = 'backend_lost'"); n == "0" {
				t.Errorf("stats_galeon backend_lost is 0 after a client lost its node's connection")
			}
		case <-time.After(8 * time.Second):
			t.Fatal("client hung after its backend connection died")
		}
		_ = tx.Rollback()
		if got := str(t, victim, "SELECT 'recovered'"); got != "recovered" {
			t.Errorf("session did not recover")
		}
	})

	t.Run("protocol abuse: clear error, connection closed, proxy keeps running", func(t *testing.T) {
		pt := startProxy(t, pt.sb, func(c *config.Config) { c.Proxy.MaxPacketSize = 1 << 20 })
		cases := []struct {
			name string
			send func(w *bufio.Writer)
			code mysqlproto.ErrorCode
		}{
			{"oversize packet", func(w *bufio.Writer) {
				// Header announcing 16 MiB (over max_packet_size 1 MiB).
				w.Write([]byte{0xff, 0xff, 0xff, 0})
				w.Write(make([]byte, 64))
			}, mysqlproto.ErNetPacketTooLarge},
			{"packet out of order", func(w *bufio.Writer) {
				w.Write([]byte{1, 0, 0, 7, byte(mysqlproto.ComPing)})
			}, mysqlproto.ErNetPacketsOutOfOrder},
			{"empty command", func(w *bufio.Writer) {
				w.Write([]byte{0, 0, 0, 0})
			}, mysqlproto.ErMalformedPacket},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				nc, br, bw := rawLogin(t, pt)
				defer nc.Close()
				c.send(bw)
				bw.Flush()
				code, closed := readErrThenClose(t, nc, br)
				if code != c.code || !closed {
					t.Errorf("got error %d closed=%v, want %d and the connection closed", code, closed, c.code)
				}
			})
		}
		t.Run("unknown command: 1047, connection stays usable", func(t *testing.T) {
			nc, br, bw := rawLogin(t, pt)
			defer nc.Close()
			bw.Write([]byte{1, 0, 0, 0, 0x1e}) // COM_BINLOG_DUMP_GTID
			bw.Flush()
			pc := mysqlproto.NewConn(br, bw, 1<<20)
			pc.SetSeq(1)
			pkt, err := pc.ReadPacket()
			if err != nil || !mysqlproto.IsErr(pkt) {
				t.Fatalf("want an error packet, got %x %v", pkt, err)
			}
			if e, _ := mysqlproto.ParseErr(pkt); e.Code != mysqlproto.ErUnknownComError {
				t.Errorf("code %d, want 1047", e.Code)
			}
			pc.ResetSeq()
			pc.WritePacket([]byte{byte(mysqlproto.ComPing)})
			pc.Flush()
			if pkt, err := pc.ReadPacket(); err != nil || !mysqlproto.IsOK(pkt) {
				t.Errorf("COM_PING after the error: %x %v", pkt, err)
			}
		})
		t.Run("garbage instead of a handshake response", func(t *testing.T) {
			nc, err := net.Dial("tcp", pt.addr)
			if err != nil {
				t.Fatal(err)
			}
			defer nc.Close()
			br := bufio.NewReader(nc)
			pc := mysqlproto.NewConn(br, bufio.NewWriter(nc), 1<<20)
			if _, err := pc.ReadPacket(); err != nil {
				t.Fatal(err)
			}
			pc.WritePacket([]byte("this is not a handshake response"))
			pc.Flush()
			pkt, err := pc.ReadPacket()
			if err != nil || !mysqlproto.IsErr(pkt) {
				t.Fatalf("want an error packet, got %q %v", pkt, err)
			}
			if e, _ := mysqlproto.ParseErr(pkt); e.Code != mysqlproto.ErHandshakeError {
				t.Errorf("code %d, want 1043", e.Code)
			}
		})
	})
}

// rawLogin authenticates a raw protocol connection as the app user.
func rawLogin(t *testing.T, pt *proxyUnderTest) (net.Conn, *bufio.Reader, *bufio.Writer) {
	t.Helper()
	c := prototest.Login(t, pt.addr, pt.sb.Credentials.AppUser, pt.sb.Credentials.AppPassword)
	return c.NC, c.BR, c.BW
}

// readErrThenClose reads one error packet and checks the server closes.
func readErrThenClose(t *testing.T, nc net.Conn, br *bufio.Reader) (mysqlproto.ErrorCode, bool) {
	t.Helper()
	_ = nc.SetReadDeadline(time.Now().Add(5 * time.Second))
	// Read the header by hand: after a protocol violation the sequence id
	// of the answer is the server's choice.
	var hdr [4]byte
	if _, err := io.ReadFull(br, hdr[:]); err != nil {
		t.Fatalf("read error packet: %v", err)
	}
	pkt := make([]byte, int(hdr[0])|int(hdr[1])<<8|int(hdr[2])<<16)
	if _, err := io.ReadFull(br, pkt); err != nil {
		t.Fatalf("read error packet: %v", err)
	}
	var code mysqlproto.ErrorCode
	if e, perr := mysqlproto.ParseErr(pkt); perr == nil {
		code = e.Code
	}
	_, err := br.ReadByte()
	return code, err != nil
}

// dumpTable renders an admin table, one row per line, for a failure
// message.
func dumpTable(adm *sql.DB, table string) string {
	r, err := adm.Query("SELECT * FROM " + table)
	if err != nil {
		return err.Error()
	}
	defer r.Close()
	cols, _ := r.Columns()
	var out []string
	for r.Next() {
		vals := make([]sql.NullString, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		_ = r.Scan(ptrs...)
		var parts []string
		for i, v := range vals {
			parts = append(parts, cols[i]+"="+v.String)
		}
		out = append(out, strings.Join(parts, " "))
	}
	return strings.Join(out, "\n")
}
