package foundation

import (
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

// TestHealthCheckAcrossHostStall: the proxy's plain health check (no
// Galera monitor) does not take nodes out, nor move the writer, because
// the whole host stalled; and it still takes out a node that hangs while
// the proxy runs. A stall is played with signals: the nodes stop, the
// pings sent to them meanwhile wait, the proxy stops too until the
// pings' deadlines have passed, then the proxy continues a moment
// before the nodes, so it finds its deadlines expired and no answer yet.
// The proxy runs as its own process (the binary), since it is stopped.
// Before the fix each such stall took every node out and moved the
// writer (judgePing in internal/proxy/health.go).
func TestHealthCheckAcrossHostStall(t *testing.T) {
	sb := sandboxtest.New(t, sandbox.Options{Nodes: 3})
	addrs := freeAddrs(t, 3)
	dir := t.TempDir()
	cfgPath, pidFile, logFile := filepath.Join(dir, "galeon.toml"), filepath.Join(dir, "galeon.pid"), filepath.Join(dir, "galeon.log")
	const timeout = time.Second
	c := sb.Credentials
	var b strings.Builder
	fmt.Fprintf(&b, "[proxy]\nlisten = %q\n\n[admin]\nlisten = %q\nhttp_listen = %q\nuser = \"admin\"\npassword = \"stall-test-admin\"\n\n", addrs[0], addrs[1], addrs[2])
	fmt.Fprintf(&b, "[pool]\nhealth_interval = \"200ms\"\nconnect_timeout = %q\n\n", timeout.String())
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
	if out, err := galeon(t, "proxy", "--config", cfgPath, "--background", "--pid-file", pidFile, "--log-file", logFile); err != nil {
		t.Fatalf("proxy --background: %v\n%s", err, out)
	}
	t.Cleanup(func() { _, _ = galeon(t, "proxy", "stop", "--pid-file", pidFile) })
	raw, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	proxyPID, err := strconv.Atoi(strings.TrimSpace(string(raw)))
	if err != nil {
		t.Fatalf("pid file: %v", err)
	}
	// Whatever happens, nothing stays stopped.
	t.Cleanup(func() {
		_ = syscall.Kill(proxyPID, syscall.SIGCONT)
		for _, n := range sb.Nodes {
			_ = sb.Resume(n.Name)
		}
	})

	db := sandboxtest.ProxyDB(t, sb, addrs[0], 10*time.Second)
	writer := func() string {
		t.Helper()
		var got string
		if err := db.QueryRow("SELECT @@wsrep_node_name /* galeon:writer */").Scan(&got); err != nil {
			t.Fatalf("a write through the proxy: %v", err)
		}
		return got
	}
	if w := writer(); w != "node1" {
		t.Fatalf("writes go to %s at start, want node1", w)
	}
	logText := func() string {
		b, err := os.ReadFile(logFile)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}

	for i := 0; i < 3; i++ {
		for _, n := range sb.Nodes {
			if err := sb.Pause(n.Name); err != nil {
				t.Fatal(err)
			}
		}
		// Two health intervals: every node has a ping in flight.
		time.Sleep(400 * time.Millisecond)
		if err := syscall.Kill(proxyPID, syscall.SIGSTOP); err != nil {
			t.Fatal(err)
		}
		// The pings went out within 200 ms of the pause, so their
		// deadlines pass 1.2 to 1.4 s before the proxy runs again.
		time.Sleep(timeout + time.Second)
		if err := syscall.Kill(proxyPID, syscall.SIGCONT); err != nil {
			t.Fatal(err)
		}
		time.Sleep(30 * time.Millisecond)
		for _, n := range sb.Nodes {
			if err := sb.Resume(n.Name); err != nil {
				t.Fatal(err)
			}
		}
		time.Sleep(time.Second)
	}
	text := logText()
	if n := strings.Count(text, "health check noticed late"); n == 0 {
		t.Errorf("no check was judged late across 3 stalls: the stall was not played as meant\n%s", text)
	}
	if strings.Contains(text, "backend offline") {
		t.Errorf("the proxy took nodes out because the host stalled:\n%s", text)
	}
	if w := writer(); w != "node1" {
		t.Errorf("writes go to %s after the stalls, want node1 still", w)
	}
	if n := strings.Count(text, "kind=writer_change"); n != 1 {
		t.Errorf("%d writer changes logged, want only the one at start:\n%s", n, text)
	}

	// A node that hangs while the proxy runs is still out after one
	// missed check.
	before := len(logText())
	start := time.Now()
	if err := sb.Pause("node3"); err != nil {
		t.Fatal(err)
	}
	for !strings.Contains(logText(), `msg="backend offline" server=node3`) {
		if time.Since(start) > 10*timeout {
			t.Fatalf("node3 hung for %s and is not out", time.Since(start).Round(time.Millisecond))
		}
		time.Sleep(50 * time.Millisecond)
	}
	if after := logText()[before:]; strings.Contains(after, "noticed late") {
		t.Errorf("a hung node's missed check was judged late though the proxy ran on time:\n%s", after)
	}
	t.Logf("FIGURE hung reader out after %s (health_interval 200ms, connect_timeout %s)", time.Since(start).Round(10*time.Millisecond), timeout)
	if err := sb.Resume("node3"); err != nil {
		t.Fatal(err)
	}
}
