package foundation

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/galeon-db/galeon/internal/sandbox"
	"github.com/galeon-db/galeon/internal/sandbox/sandboxtest"
)

// TestProxyCLI drives the proxy the way the README's first command and an
// operator do, through the binary: a configuration from `sandbox
// proxy-config`, `proxy --background`, clients through it, `proxy
// switchover`, `proxy drain`, `proxy events` and `proxy stop`.
func TestProxyCLI(t *testing.T) {
	sb := sandboxtest.New(t, sandbox.Options{Nodes: 3})
	addrs := freeAddrs(t, 3)
	dir := t.TempDir()
	cfgPath := filepath.Join(dir, "galeon.toml")
	pidFile := filepath.Join(dir, "galeon.pid")
	text, err := galeon(t, "sandbox", "proxy-config", "--dir", sb.Dir, "--listen", addrs[0], "--admin-listen", addrs[1], "--http-listen", addrs[2])
	if err != nil {
		t.Fatalf("sandbox proxy-config: %v\n%s", err, text)
	}
	if err := os.WriteFile(cfgPath, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := galeon(t, "proxy", "--config", cfgPath, "--background", "--pid-file", pidFile, "--log-file", filepath.Join(dir, "galeon.log"))
	if err != nil {
		t.Fatalf("proxy --background: %v\n%s", err, out)
	}
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			_, _ = galeon(t, "proxy", "stop", "--pid-file", pidFile)
		}
	})
	if !strings.Contains(out, "admin") {
		t.Errorf("proxy --background did not say how to reach the admin interface:\n%s", out)
	}

	db := sandboxtest.ProxyDB(t, sb, addrs[0], 10*time.Second)
	writerIs := func(want string) {
		t.Helper()
		var got string
		if err := db.QueryRow("SELECT @@wsrep_node_name /* galeon:writer */").Scan(&got); err != nil || got != want {
			t.Fatalf("writes go to %q (%v), want %s", got, err, want)
		}
	}
	writerIs("node1")

	out, err = galeon(t, "proxy", "switchover", "--to", "node3", "--config", cfgPath)
	if err != nil || !strings.Contains(out, "writer moved from node1 to node3") {
		t.Fatalf("proxy switchover: %v\n%s", err, out)
	}
	writerIs("node3")

	out, err = galeon(t, "proxy", "drain", "node2", "--config", cfgPath)
	if err != nil || !strings.Contains(out, "node2: admin_state = drain") {
		t.Fatalf("proxy drain: %v\n%s", err, out)
	}
	for i := 0; i < 20; i++ {
		var node string
		if err := db.QueryRow("SELECT @@wsrep_node_name").Scan(&node); err != nil || node == "node2" {
			t.Fatalf("read %d while node2 drains: %q %v", i, node, err)
		}
	}
	if out, err = galeon(t, "proxy", "drain", "node2", "--undo", "--config", cfgPath); err != nil {
		t.Fatalf("proxy drain --undo: %v\n%s", err, out)
	}

	out, err = galeon(t, "proxy", "events", "--config", cfgPath)
	if err != nil {
		t.Fatalf("proxy events: %v\n%s", err, out)
	}
	for _, want := range []string{"switchover", "from node1 to node3, epoch 2", "drain", "undrain"} {
		if !strings.Contains(out, want) {
			t.Errorf("proxy events lacks %q:\n%s", want, out)
		}
	}
	t.Logf("galeon proxy events:\n%s", out)
	// Newest first: the undrain is the last thing that happened.
	if first, _, _ := strings.Cut(out, "\n"); !strings.Contains(first, "undrain") {
		t.Errorf("newest event is %q, want the undrain", first)
	}

	if out, err = galeon(t, "proxy", "stop", "--pid-file", pidFile); err != nil {
		t.Fatalf("proxy stop: %v\n%s", err, out)
	}
	stopped = true
	if c, err := net.DialTimeout("tcp", addrs[0], time.Second); err == nil {
		c.Close()
		t.Errorf("the proxy still listens on %s after proxy stop", addrs[0])
	}
}

// freeAddrs returns n loopback addresses nothing listens on right now.
func freeAddrs(t *testing.T, n int) []string {
	t.Helper()
	var out []string
	var lns []net.Listener
	for i := 0; i < n; i++ {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		lns = append(lns, ln)
		out = append(out, ln.Addr().String())
	}
	for _, ln := range lns {
		ln.Close()
	}
	return out
}
