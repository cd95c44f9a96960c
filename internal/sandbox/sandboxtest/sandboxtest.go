// Package sandboxtest starts real Galera sandboxes for integration tests
// and guarantees they are torn down: on test cleanup (pass or fail), and,
// through the kernel's parent-death signal, even if the test binary
// crashes or is killed.
package sandboxtest

import (
	"context"
	"database/sql"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/galeon-db/galeon/internal/sandbox"
)

// Root is where test sandboxes live: under /var/tmp so that the mysql
// user can traverse every parent directory.
const Root = "/var/tmp/galeon-test"

var (
	portMu   sync.Mutex
	nextSlot int
	// slotLocks keep this process's port slots claimed (see claimSlot).
	slotLocks []*os.File
)

// FreeBasePort returns a base port whose client, Galera, IST and SST
// ranges are free for nodes+2 nodes (room to add nodes later). Slots are
// 400 ports apart from 20000 upwards and never reused within a process.
//
// Test binaries of several packages may run at once (go test ./... runs
// packages in parallel): a free range is only free until a sandbox binds
// it, so two processes probing the same slot would both take it, and the
// second sandbox's Galera fails at start-up ("failed to open gcomm
// backend connection: Failed to read thread schedparams: No such
// process": its gcomm thread ended on the bind before the main thread
// read its parameters). So each slot is also claimed across processes,
// by a lock file held until the process exits.
func FreeBasePort(nodes int) int {
	portMu.Lock()
	defer portMu.Unlock()
	for ; nextSlot < 100; nextSlot++ {
		base := 20000 + 400*nextSlot
		if claimSlot(nextSlot) && rangeFree(base, nodes+2) {
			nextSlot++
			return base
		}
	}
	panic("sandboxtest: no free port range between 20000 and 60000")
}

// claimSlot takes slot's lock file (non-blocking) and keeps it for the
// life of the process; false if another process holds it. The kernel
// drops the lock when the process ends, however it ends.
func claimSlot(slot int) bool {
	dir := filepath.Join(Root, ".ports")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return true // no lock directory: fall back to probing alone
	}
	f, err := os.OpenFile(filepath.Join(dir, "slot-"+strconv.Itoa(slot)+".lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return true
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return false
	}
	slotLocks = append(slotLocks, f)
	return true
}

func rangeFree(base, nodes int) bool {
	for i := 1; i <= nodes; i++ {
		for _, off := range []int{0, 100, 200, 300} {
			l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(base+off+i))
			if err != nil {
				return false
			}
			l.Close()
		}
	}
	return true
}

// Name derives a short sandbox name from the test name.
func Name(t testing.TB) string {
	n := strings.ToLower(t.Name())
	n = strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			return r
		}
		return '-'
	}, n)
	if len(n) > 20 {
		n = n[len(n)-20:]
	}
	return strings.Trim(n, "-") + "-" + strconv.Itoa(os.Getpid()%100000)
}

// New starts a sandbox for t with opts (name, directory and ports chosen
// if unset) and registers its destruction with t.Cleanup.
func New(t testing.TB, opts sandbox.Options) *sandbox.Sandbox {
	t.Helper()
	if opts.Name == "" {
		opts.Name = Name(t)
	}
	if opts.Nodes == 0 {
		opts.Nodes = 3
	}
	if opts.BasePort == 0 {
		opts.BasePort = FreeBasePort(opts.Nodes)
	}
	if opts.Dir == "" {
		opts.Dir = filepath.Join(Root, opts.Name)
	}
	opts.KillWithParent = true
	if opts.Progress == nil {
		start := time.Now()
		opts.Progress = func(node, msg string) {
			t.Logf("[%5.1fs] %s %s: %s", time.Since(start).Seconds(), opts.Name, node, msg)
		}
	}
	if err := os.MkdirAll(Root, 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	sb, err := sandbox.Up(ctx, opts)
	if err != nil {
		t.Fatalf("sandbox up: %v", err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			for _, n := range sb.Nodes {
				t.Logf("%s error log tail:\n%s", n.Name, sb.LogTail(n.Name, 15))
			}
		}
		if err := sb.Destroy(context.Background()); err != nil {
			t.Errorf("destroy sandbox %s: %v", sb.Name, err)
		}
	})
	return sb
}

// AppDB opens a database/sql pool as the sandbox's application user on
// node, closed at cleanup.
func AppDB(t testing.TB, sb *sandbox.Sandbox, node string) *sql.DB {
	t.Helper()
	dsn, err := sb.AppDSN(node)
	if err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// ProxyDB opens a database/sql pool to addr (a proxy in front of sb) as
// the sandbox's application user, schema app, with a 5 s connect
// timeout and readTimeout per read; closed at cleanup.
func ProxyDB(t testing.TB, sb *sandbox.Sandbox, addr string, readTimeout time.Duration) *sql.DB {
	t.Helper()
	mc := mysql.NewConfig()
	mc.User, mc.Passwd, mc.Net, mc.Addr, mc.DBName = sb.Credentials.AppUser, sb.Credentials.AppPassword, "tcp", addr, "app"
	mc.Timeout, mc.ReadTimeout = 5*time.Second, readTimeout
	db, err := sql.Open("mysql", mc.FormatDSN())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// QueryString runs a one-value query and fails the test on error.
func QueryString(t testing.TB, db *sql.DB, query string, args ...any) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var v sql.NullString
	if err := db.QueryRowContext(ctx, query, args...).Scan(&v); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return v.String
}

// Status returns one wsrep status variable of node, read as admin.
func Status(t testing.TB, sb *sandbox.Sandbox, node, name string) string {
	t.Helper()
	db, err := sb.DB(node)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var k, v string
	// SHOW takes no placeholders; name is a trusted identifier from the test.
	if err := db.QueryRowContext(ctx, "SHOW GLOBAL STATUS LIKE '"+name+"'").Scan(&k, &v); err != nil {
		t.Fatalf("%s: SHOW GLOBAL STATUS LIKE %q: %v", node, name, err)
	}
	return v
}

// Eventually polls cond every 100 ms until it returns nil or timeout
// passes, then fails with cond's last error. It is how tests wait for a
// state instead of sleeping.
func Eventually(t testing.TB, timeout time.Duration, what string, cond func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		err := cond()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not reached within %s: %v", what, timeout, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
