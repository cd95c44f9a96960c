package foundation

import (
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/galeon-db/galeon/internal/sandbox"
	"github.com/galeon-db/galeon/internal/sandbox/sandboxtest"
)

// stallProxy is a galeon binary run as its own process (it is stopped
// with signals) with the plain health check: no Galera monitor.
type stallProxy struct {
	pid     int
	logFile string
	db      *sql.DB
}

// startStallProxy starts the binary in front of sb: health checks every
// 200 ms, timeout connect_timeout, maxMissed pool.max_missed_checks,
// writes preferring node1.
func startStallProxy(t *testing.T, sb *sandbox.Sandbox, timeout time.Duration, maxMissed int) *stallProxy {
	t.Helper()
	addrs := freeAddrs(t, 3)
	dir := t.TempDir()
	cfgPath, pidFile := filepath.Join(dir, "galeon.toml"), filepath.Join(dir, "galeon.pid")
	sp := &stallProxy{logFile: filepath.Join(dir, "galeon.log")}
	c := sb.Credentials
	var b strings.Builder
	fmt.Fprintf(&b, "[proxy]\nlisten = %q\n\n[admin]\nlisten = %q\nhttp_listen = %q\nuser = \"admin\"\npassword = \"stall-test-admin\"\n\n", addrs[0], addrs[1], addrs[2])
	fmt.Fprintf(&b, "[pool]\nhealth_interval = \"200ms\"\nconnect_timeout = %q\nmax_missed_checks = %d\n\n", timeout.String(), maxMissed)
	fmt.Fprintf(&b, "[[users]]\nname = %q\npassword = %q\nbackend_password = %q\n", c.AppUser, c.AppPassword, c.AppPassword)
	for i, n := range sb.Nodes {
		ww := 10
		if i == 0 {
			ww = 100
		}
		fmt.Fprintf(&b, "\n[[servers]]\nname = %q\naddress = %q\nwriter_weight = %d\nreader_weight = 100\n", n.Name, n.Addr(), ww)
	}
	if err := os.WriteFile(cfgPath, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := galeon(t, "proxy", "--config", cfgPath, "--background", "--pid-file", pidFile, "--log-file", sp.logFile); err != nil {
		t.Fatalf("proxy --background: %v\n%s", err, out)
	}
	t.Cleanup(func() { _, _ = galeon(t, "proxy", "stop", "--pid-file", pidFile) })
	raw, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	if sp.pid, err = strconv.Atoi(strings.TrimSpace(string(raw))); err != nil {
		t.Fatalf("pid file: %v", err)
	}
	// Whatever happens, nothing stays stopped.
	t.Cleanup(func() { _ = syscall.Kill(sp.pid, syscall.SIGCONT) })
	sp.db = sandboxtest.ProxyDB(t, sb, addrs[0], 10*time.Second)
	return sp
}

// writer is the node the proxy sends writes to.
func (sp *stallProxy) writer(t *testing.T) string {
	t.Helper()
	var got string
	if err := sp.db.QueryRow("SELECT @@wsrep_node_name /* galeon:writer */").Scan(&got); err != nil {
		t.Fatalf("a write through the proxy: %v", err)
	}
	return got
}

func (sp *stallProxy) log(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(sp.logFile)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func (sp *stallProxy) signal(t *testing.T, sig syscall.Signal) {
	t.Helper()
	if err := syscall.Kill(sp.pid, sig); err != nil {
		t.Fatal(err)
	}
}

// TestHealthCheckAcrossHostStall: the proxy's plain health check (no
// Galera monitor) takes no node out, and moves no writer, when the whole
// host stalls or when the nodes alone pause for less than
// max_missed_checks checks; and it still takes out a node that hangs.
// Two proxies run side by side on one sandbox:
//
//   - "late" has max_missed_checks = 1, so only the rule for checks
//     noticed late keeps its nodes in across a whole-host stall. A stall
//     is played with signals: the nodes stop, the pings sent to them
//     meanwhile wait, the proxy stops too until the pings' deadlines have
//     passed, then the proxy continues a moment before the nodes, so it
//     finds its deadlines expired and no answer yet. Before that rule
//     each such stall took every node out and moved the writer.
//   - "missed" has the default max_missed_checks = 2: the nodes pause for
//     1.25 timeouts while it runs (as the bench's nodes did on an
//     overloaded host), which is one missed check each (or a check
//     noticed late, if the loaded host delays the proxy), and none is out.
//
// The timeout is 2 s, so that the check made again after a miss still
// has over a second when the nodes run again.
//
// The rules are judgePing's in internal/proxy/health.go.
func TestHealthCheckAcrossHostStall(t *testing.T) {
	sb := sandboxtest.New(t, sandbox.Options{Nodes: 3})
	t.Cleanup(func() {
		for _, n := range sb.Nodes {
			_ = sb.Resume(n.Name)
		}
	})
	const timeout = 2 * time.Second
	late := startStallProxy(t, sb, timeout, 1)
	missed := startStallProxy(t, sb, timeout, 2)
	for _, sp := range []*stallProxy{late, missed} {
		if w := sp.writer(t); w != "node1" {
			t.Fatalf("writes go to %s at start, want node1", w)
		}
	}
	pauseNodes := func() {
		t.Helper()
		for _, n := range sb.Nodes {
			if err := sb.Pause(n.Name); err != nil {
				t.Fatal(err)
			}
		}
	}
	resumeNodes := func() {
		t.Helper()
		for _, n := range sb.Nodes {
			if err := sb.Resume(n.Name); err != nil {
				t.Fatal(err)
			}
		}
	}

	// Whole-host stalls, three times.
	for i := 0; i < 3; i++ {
		pauseNodes()
		// Two health intervals: every node has a ping in flight.
		time.Sleep(400 * time.Millisecond)
		late.signal(t, syscall.SIGSTOP)
		missed.signal(t, syscall.SIGSTOP)
		// The pings went out within 200 ms of the pause, so their
		// deadlines pass 1.2 to 1.4 s before the proxies run again: over
		// the 500 ms slack.
		time.Sleep(timeout + time.Second)
		late.signal(t, syscall.SIGCONT)
		missed.signal(t, syscall.SIGCONT)
		time.Sleep(30 * time.Millisecond)
		resumeNodes()
		time.Sleep(time.Second)
	}
	text := late.log(t)
	if n := strings.Count(text, "health check noticed late"); n == 0 {
		t.Errorf("no check was judged late across 3 stalls: the stall was not played as meant\n%s", text)
	}
	for name, sp := range map[string]*stallProxy{"late": late, "missed": missed} {
		text := sp.log(t)
		if strings.Contains(text, "backend offline") {
			t.Errorf("proxy %q took nodes out because the host stalled:\n%s", name, text)
		}
		if w := sp.writer(t); w != "node1" {
			t.Errorf("proxy %q writes to %s after the stalls, want node1 still", name, w)
		}
		if n := strings.Count(text, "kind=writer_change"); n != 1 {
			t.Errorf("proxy %q logged %d writer changes, want only the one at start:\n%s", name, n, text)
		}
	}

	// The nodes alone pause for 1.25 timeouts: one missed check each for
	// a proxy that runs on time.
	before := len(missed.log(t))
	pause := timeout + timeout/4
	pauseNodes()
	time.Sleep(pause)
	resumeNodes()
	time.Sleep(time.Second)
	text = missed.log(t)[before:]
	if !strings.Contains(text, "health check missed") && !strings.Contains(text, "health check noticed late") {
		t.Errorf("the nodes paused for %s and no check missed: the pause was not played as meant\n%s", pause, text)
	}
	if strings.Contains(text, "backend offline") {
		t.Errorf("a node was out after one missed check (max_missed_checks = 2):\n%s", text)
	}
	if w := missed.writer(t); w != "node1" {
		t.Errorf("writes go to %s after the nodes paused, want node1 still", w)
	}
	t.Logf("FIGURE the same pause with max_missed_checks = 1: %d \"backend offline\"", strings.Count(late.log(t), "backend offline"))

	// A node that hangs while the proxy runs is out after two missed
	// checks.
	before = len(missed.log(t))
	start := time.Now()
	if err := sb.Pause("node3"); err != nil {
		t.Fatal(err)
	}
	for !strings.Contains(missed.log(t)[before:], `msg="backend offline" server=node3`) {
		if time.Since(start) > 10*timeout {
			t.Fatalf("node3 hung for %s and is not out", time.Since(start).Round(time.Millisecond))
		}
		time.Sleep(50 * time.Millisecond)
	}
	took := time.Since(start)
	after := missed.log(t)[before:]
	if strings.Contains(after, "noticed late") {
		t.Errorf("a hung node's missed check was judged late though the proxy ran on time:\n%s", after)
	}
	if !strings.Contains(after, `msg="health check missed, checking again" server=node3 missed=1`) {
		t.Errorf("node3 was out without a first missed check:\n%s", after)
	}
	t.Logf("FIGURE hung reader out after %s (health_interval 200ms, connect_timeout %s, max_missed_checks 2)", took.Round(10*time.Millisecond), timeout)
	if err := sb.Resume("node3"); err != nil {
		t.Fatal(err)
	}
}
