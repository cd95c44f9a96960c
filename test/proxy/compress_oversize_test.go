package proxy_test

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/galeon-db/galeon/internal/config"
	"github.com/galeon-db/galeon/internal/sandbox"
	"github.com/galeon-db/galeon/internal/sandbox/sandboxtest"
)

// TestCompressedOversize (issue 18, item 7): a statement over 16 MiB sent
// with the compressed protocol (several 16 MiB-1 packets, each in its own
// compressed packets) must get through galeon what a direct connection to
// the same node gets: the node's ER_NET_PACKET_TOO_LARGE when it is over
// max_allowed_packet, with galeon still serving the next client; its
// result when it fits.
func TestCompressedOversize(t *testing.T) {
	sb := sandboxtest.New(t, sandbox.Options{Nodes: 1})
	admin, err := sb.DB("node1")
	if err != nil {
		t.Fatal(err)
	}
	orig := str(t, admin, "SELECT @@GLOBAL.max_allowed_packet")
	maxPkt, err := strconv.Atoi(orig)
	if err != nil || maxPkt < 16<<20 || maxPkt > 32<<20 {
		t.Fatalf("node max_allowed_packet %q: the test expects MariaDB's default of 16 MiB", orig)
	}
	oneNode := func(c *config.Config) { c.Servers[0].ReaderWeight = 100 } // reads too go to node1

	t.Run("over max_allowed_packet: the node's 1153, as directly; galeon serves the next client", func(t *testing.T) {
		pt := startProxy(t, sb, oneNode)
		q := lengthQuery(maxPkt + 1<<20)
		for _, side := range []struct {
			name string
			db   *sql.DB
		}{
			{"direct", compressedDB(t, directConfig(t, sb), &driverLog{})},
			{"through galeon", compressedDB(t, proxyConfig(t, pt), &driverLog{})},
		} {
			c := pinConn(t, side.db)
			_, err := queryLength(c, q)
			if errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("%s: no answer within a minute (the hang of issue 18)", side.name)
			}
			if code := mysqlErr(err); code != 1153 {
				t.Errorf("%s: got %v, want ER_NET_PACKET_TOO_LARGE (1153)", side.name, err)
			}
		}
		next := compressedDB(t, proxyConfig(t, pt), nil)
		if got := str(t, next, "SELECT 'next client'"); got != "next client" {
			t.Errorf("galeon after the oversize statement: %q", got)
		}
	})

	t.Run("between 16 MiB and max_allowed_packet: runs through galeon as directly, well numbered", func(t *testing.T) {
		// Connections take the global value when they open: raise it
		// before the direct connection and the proxy's pool are made.
		mustExec(t, admin, "SET GLOBAL max_allowed_packet = 48 << 20")
		t.Cleanup(func() {
			if _, err := admin.Exec("SET GLOBAL max_allowed_packet = " + orig); err != nil {
				t.Errorf("restore max_allowed_packet: %v", err)
			}
		})
		pt := startProxy(t, sb, oneNode)
		size := 20 << 20
		q := lengthQuery(size)
		want := int64(size - 1 - len("SELECT LENGTH('')"))
		for _, side := range []struct {
			name string
			cfg  *mysql.Config
		}{
			{"direct", directConfig(t, sb)},
			{"through galeon", proxyConfig(t, pt)},
		} {
			var log driverLog
			c := pinConn(t, compressedDB(t, side.cfg, &log))
			n, err := queryLength(c, q)
			if err != nil || n != want {
				t.Errorf("%s: LENGTH %d, %v; want %d", side.name, n, err, want)
			}
			// MariaDB answers a command that took several compressed
			// packets from the compressed sequence; go-sql-driver warns
			// when the answer is numbered otherwise.
			if w := log.String(); strings.Contains(w, "sequence") {
				t.Errorf("%s: go-sql-driver warned: %s", side.name, w)
			}
			if got := str(t, c, "SELECT 'after'"); got != "after" {
				t.Errorf("%s: session after the large statement: %q", side.name, got)
			}
		}

		// The mariadb CLI (Connector/C) cuts its compressed packets
		// differently: at 16 MiB-1 of the packet stream, headers and all.
		file := filepath.Join(t.TempDir(), "big.sql")
		if err := os.WriteFile(file, []byte(q+";\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		node, err := sb.Node("node1")
		if err != nil {
			t.Fatal(err)
		}
		for _, addr := range []string{node.Addr(), pt.addr} {
			if out := cliCompressed(t, addr, sb.Credentials.AppUser, sb.Credentials.AppPassword, file); out != strconv.FormatInt(want, 10) {
				t.Errorf("mariadb --compress to %s: %q, want %d", addr, out, want)
			}
		}
	})
}

// lengthQuery is a COM_QUERY payload of exactly size bytes (command byte
// included): SELECT LENGTH('xyxy...').
func lengthQuery(size int) string {
	const head, tail = "SELECT LENGTH('", "')"
	n := size - 1 - len(head) - len(tail)
	return head + strings.Repeat("xy", n/2) + strings.Repeat("x", n%2) + tail
}

// queryLength runs q, bounded by a minute: a hang is a failure, not a
// stuck test.
func queryLength(c *sql.Conn, q string) (int64, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var n int64
	err := c.QueryRowContext(ctx, q).Scan(&n)
	if ctx.Err() != nil {
		return 0, ctx.Err()
	}
	return n, err
}

func directConfig(t *testing.T, sb *sandbox.Sandbox) *mysql.Config {
	t.Helper()
	dsn, err := sb.AppDSN("node1")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		t.Fatal(err)
	}
	cfg.DBName = "app"
	return cfg
}

func proxyConfig(t *testing.T, pt *proxyUnderTest) *mysql.Config {
	t.Helper()
	cfg, err := mysql.ParseDSN(pt.dsn(nil))
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// compressedDB opens cfg with compress=true, logging the driver's
// warnings to log if given.
func compressedDB(t *testing.T, cfg *mysql.Config, log *driverLog) *sql.DB {
	t.Helper()
	if err := cfg.Apply(mysql.EnableCompression(true)); err != nil {
		t.Fatal(err)
	}
	cfg.Timeout, cfg.ReadTimeout, cfg.WriteTimeout = 5*time.Second, 30*time.Second, 30*time.Second
	if log != nil {
		cfg.Logger = log
	}
	conn, err := mysql.NewConnector(cfg)
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(conn)
	t.Cleanup(func() { db.Close() })
	return db
}

// driverLog collects what go-sql-driver logs (mysql.Logger).
type driverLog struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *driverLog) Print(v ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	fmt.Fprintln(&l.b, v...)
}

func (l *driverLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// cliCompressed runs the statement in file with mariadb --compress
// against addr and returns its output, bounded by a minute.
func cliCompressed(t *testing.T, addr, user, password, file string) string {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	host, port := splitAddr(addr)
	cmd := exec.CommandContext(ctx, "mariadb", "-h"+host, "-P"+port, "-u"+user, "-p"+password,
		"--compress", "--max-allowed-packet=256M", "-N", "-B", "app")
	cmd.Stdin = f
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Errorf("mariadb --compress to %s: no answer within a minute", addr)
	} else if err != nil {
		t.Errorf("mariadb --compress to %s: %v: %.300s", addr, err, out)
	}
	return strings.TrimSpace(string(out))
}
