package foundation

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/galeon-db/galeon/internal/sandbox"
	"github.com/galeon-db/galeon/internal/sandbox/sandboxtest"
)

// TestSandboxBadInput checks that every way `sandbox up` can fail names
// the cause, tells what to do, and leaves no process or directory behind.
func TestSandboxBadInput(t *testing.T) {
	ctx := context.Background()

	t.Run("port already taken", func(t *testing.T) {
		base := sandboxtest.FreeBasePort(3)
		l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(base+2)) // node2's client port
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		dir := filepath.Join(sandboxtest.Root, sandboxtest.Name(t))
		_, err = sandbox.Up(ctx, sandbox.Options{Name: sandboxtest.Name(t), BasePort: base, Dir: dir, Control: sandbox.Control{KillWithParent: true}})
		wantErr(t, err, "port "+strconv.Itoa(base+2)+" (node2 client) is already in use", "--base-port")
		assertGone(t, dir)
	})

	t.Run("node fails to start: error log quoted, nothing left behind", func(t *testing.T) {
		dir := filepath.Join(sandboxtest.Root, sandboxtest.Name(t))
		_, err := sandbox.Up(ctx, sandbox.Options{
			Name: sandboxtest.Name(t), BasePort: sandboxtest.FreeBasePort(3), Dir: dir,
			ServerOptions: map[string]string{"no_such_server_option": "1"},
			Control:       sandbox.Control{KillWithParent: true, NodeTimeout: time.Minute},
		})
		wantErr(t, err, "node1", "unknown variable 'no_such_server_option=1'", "retry")
		assertGone(t, dir)
	})

	t.Run("joiner fails: the failing node's log is quoted, every node stopped", func(t *testing.T) {
		dir := filepath.Join(sandboxtest.Root, sandboxtest.Name(t))
		// A donor that does not exist only hurts nodes that need a state transfer.
		_, err := sandbox.Up(ctx, sandbox.Options{
			Name: sandboxtest.Name(t), Nodes: 2, BasePort: sandboxtest.FreeBasePort(2), Dir: dir,
			ServerOptions: map[string]string{"wsrep_sst_donor": "no_such_node"},
			Control:       sandbox.Control{KillWithParent: true, NodeTimeout: 90 * time.Second},
		})
		wantErr(t, err, "node2", "error.log")
		assertGone(t, dir)
	})

	t.Run("CLI rejects bad arguments with a clear message", func(t *testing.T) {
		cases := []struct {
			args []string
			want string
		}{
			{[]string{"sandbox", "up", "--nodes", "0", "--name", "x"}, "a sandbox has 1 to 99 nodes"},
			{[]string{"sandbox", "up", "--sst-method", "carrier-pigeon", "--name", "x"}, `sst method "carrier-pigeon" is not supported`},
			{[]string{"sandbox", "up", "--name", "bad/name"}, "use 1-32 letters"},
			{[]string{"sandbox", "up", "--base-port", "80", "--name", "x"}, "--base-port 80"},
			{[]string{"sandbox", "status", "--name", "does-not-exist"}, "no sandbox in /var/tmp/galeon/does-not-exist"},
			{[]string{"sandbox", "kill", "--name", "does-not-exist", "node1"}, "no sandbox"},
			{[]string{"sandbox", "frobnicate"}, `unknown action "frobnicate"`},
			{[]string{"status", "--nodes", "127.0.0.1:1"}, "--nodes needs --user"},
			{[]string{"nonsense"}, `unknown command "nonsense"`},
		}
		for _, c := range cases {
			out, err := galeon(t, c.args...)
			if err == nil {
				t.Errorf("galeon %v succeeded, want an error", c.args)
				continue
			}
			if !strings.Contains(out, c.want) {
				t.Errorf("galeon %v: output %q does not contain %q", c.args, out, c.want)
			}
		}
	})
}

func wantErr(t *testing.T, err error, parts ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want one containing %q", parts)
	}
	for _, p := range parts {
		if !strings.Contains(err.Error(), p) {
			t.Errorf("error does not contain %q:\n%v", p, err)
		}
	}
}

// assertGone checks that a failed Up removed its directory and that no
// process still runs from it.
func assertGone(t *testing.T, dir string) {
	t.Helper()
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("sandbox dir %s still exists after a failed up (err %v)", dir, err)
	}
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		b, err := os.ReadFile(p)
		if err == nil && strings.Contains(string(b), dir+"/") {
			t.Errorf("process %s still runs from %s: %q", filepath.Dir(p), dir, strings.ReplaceAll(string(b), "\x00", " "))
		}
	}
}
