package foundation

import (
	"bytes"
	"database/sql"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/galeon-db/galeon/internal/testkit"
)

// These tests run the real binary, `galeon proxy`, with the embedded etcd
// and no Galera nodes: what they check (what the proxy prints and logs,
// how long its stop takes) does not depend on the nodes.

// embeddedProxyConfig writes a proxy configuration that hosts the
// embedded etcd (etcd == "") or joins the one at etcd, and returns its
// path and the proxy's MySQL and admin addresses.
func embeddedProxyConfig(t *testing.T, dir, etcd, keyFile string) (path, mysqlAddr, adminAddr string) {
	t.Helper()
	a := freeAddrs(t, 5)
	disc := fmt.Sprintf("endpoints = \"embedded\"\ndata_dir = %q\nclient_listen = %q\npeer_listen = %q\n", filepath.Join(dir, "etcd"), a[3], a[4])
	if etcd != "" {
		disc = fmt.Sprintf("endpoints = \"etcd://%s\"\nsecret_key_file = %q\n", etcd, keyFile)
	}
	text := fmt.Sprintf(`[proxy]
listen = %q
[admin]
listen = %q
http_listen = %q
[galera]
monitor_user = "monitor"
monitor_password = "monitor-secret-pw"
[[users]]
name = "app"
password = "app-secret-pw"
[discovery]
cluster = "stoptest"
%s`, a[0], a[1], a[2], disc)
	path = filepath.Join(dir, "galeon.toml")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return path, a[0], a[1]
}

// lockedBuffer collects a process's output while it runs.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// runningProxy is a `galeon proxy` in the foreground.
type runningProxy struct {
	cmd *exec.Cmd
	out *lockedBuffer
	// exited is closed when the process has ended, with err its exit.
	exited chan struct{}
	err    error
}

// startProxy starts `galeon proxy --config path args...` and waits until
// it accepts connections on every address given (the MySQL listener is
// open a moment before the admin one).
func startProxy(t *testing.T, path string, addrs []string, args ...string) *runningProxy {
	t.Helper()
	rp := &runningProxy{out: &lockedBuffer{}, exited: make(chan struct{})}
	rp.cmd = exec.Command(galeonBin, append([]string{"proxy", "--config", path}, args...)...)
	rp.cmd.Stdout, rp.cmd.Stderr = rp.out, rp.out
	if err := rp.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		rp.err = rp.cmd.Wait()
		close(rp.exited)
	}()
	t.Cleanup(func() {
		select {
		case <-rp.exited:
		default:
			_ = rp.cmd.Process.Kill()
			<-rp.exited
		}
	})
	testkit.WaitFor(t, 30*time.Second, "galeon proxy listening on "+strings.Join(addrs, ", "), func() bool {
		select {
		case <-rp.exited:
			t.Fatalf("galeon proxy exited during start-up (%v):\n%s", rp.err, rp.out)
		default:
		}
		for _, a := range addrs {
			c, err := net.DialTimeout("tcp", a, 100*time.Millisecond)
			if err != nil {
				return false
			}
			c.Close()
		}
		return true
	})
	return rp
}

// stop sends SIGTERM and returns how long the process took to exit.
func (rp *runningProxy) stop(t *testing.T) time.Duration {
	t.Helper()
	start := time.Now()
	if err := rp.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-rp.exited:
		took := time.Since(start)
		if rp.err != nil {
			t.Errorf("galeon proxy exited with %v after SIGTERM:\n%s", rp.err, rp.out)
		}
		return took
	case <-time.After(30 * time.Second):
		t.Fatalf("galeon proxy still runs 30 s after SIGTERM:\n%s", rp.out)
	}
	return 0
}

// adminLogin checks that password opens the admin interface at addr.
func adminLogin(t *testing.T, addr, password string) {
	t.Helper()
	mc := mysql.NewConfig()
	mc.User, mc.Passwd, mc.Net, mc.Addr = "admin", password, "tcp", addr
	mc.Timeout = 5 * time.Second
	db, err := sql.Open("mysql", mc.FormatDSN())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.QueryRow("SELECT COUNT(*) FROM users").Scan(&n); err != nil || n != 1 {
		t.Fatalf("admin login with the stored password: %d users, %v", n, err)
	}
}

// TestProxyNeverShowsPassword: the generated admin password is neither
// logged nor printed — not on the first start that generates it, not on
// restarts that read it back, not by the --background launcher, not in
// debug logging — and the output says where it is instead. The client
// account's and the monitor account's passwords do not appear either.
func TestProxyNeverShowsPassword(t *testing.T) {
	dir := t.TempDir()
	path, mysqlAddr, adminAddr := embeddedProxyConfig(t, dir, "", "")
	credFile := filepath.Join(dir, "galeon-admin.credentials")
	secrets := func() []string {
		b, err := os.ReadFile(credFile)
		if err != nil {
			t.Fatalf("credentials file: %v", err)
		}
		user, pw, ok := strings.Cut(strings.TrimSpace(string(b)), ":")
		if !ok || user != "admin" || len(pw) < 16 {
			t.Fatalf("credentials file holds %d bytes, not admin:PASSWORD", len(b))
		}
		return []string{pw, "app-secret-pw", "monitor-secret-pw"}
	}
	check := func(what, text string) {
		t.Helper()
		for _, s := range secrets() {
			if strings.Contains(text, s) {
				t.Errorf("%s shows a password (%d bytes of it):\n%s", what, len(s), text)
			}
		}
	}

	// First start (generates the password), then a restart (reads it).
	for _, run := range []string{"first start", "restart"} {
		rp := startProxy(t, path, []string{mysqlAddr, adminAddr}, "--verbose")
		if st, err := os.Stat(credFile); err != nil || st.Mode().Perm() != 0o600 {
			t.Fatalf("credentials file after %s: %v %v, want mode 0600", run, st.Mode(), err)
		}
		adminLogin(t, adminAddr, secrets()[0])
		rp.stop(t)
		out := rp.out.String()
		check(run+" log", out)
		if !strings.Contains(out, credFile) {
			t.Errorf("the %s log does not say where the admin password is (%s):\n%s", run, credFile, out)
		}
	}

	// The --background launcher and its log file.
	logFile, pidFile := filepath.Join(dir, "proxy.log"), filepath.Join(dir, "proxy.pid")
	out, err := galeon(t, "proxy", "--config", path, "--background", "--verbose", "--pid-file", pidFile, "--log-file", logFile)
	if err != nil {
		t.Fatalf("proxy --background: %v\n%s", err, out)
	}
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			_, _ = galeon(t, "proxy", "stop", "--pid-file", pidFile)
		}
	})
	// The launcher returns once the MySQL port accepts; the admin port
	// opens a moment later.
	testkit.WaitFor(t, 10*time.Second, "the admin interface listening on "+adminAddr, func() bool {
		c, err := net.DialTimeout("tcp", adminAddr, 100*time.Millisecond)
		if err == nil {
			c.Close()
		}
		return err == nil
	})
	adminLogin(t, adminAddr, secrets()[0])
	check("proxy --background output", out)
	if !strings.Contains(out, credFile) || !strings.Contains(out, "0600") {
		t.Errorf("proxy --background does not say where the admin password is (%s, mode 0600):\n%s", credFile, out)
	}
	t.Logf("galeon proxy --background printed:\n%s", out)
	if out, err := galeon(t, "proxy", "stop", "--pid-file", pidFile); err != nil {
		t.Fatalf("proxy stop: %v\n%s", err, out)
	}
	stopped = true
	b, err := os.ReadFile(logFile)
	if err != nil {
		t.Fatal(err)
	}
	check("proxy.log of --background", string(b))
}

// TestProxyStopBounded: SIGTERM of the proxy that hosts the embedded etcd
// while another proxy keeps its watches and leases open on that etcd
// (as other proxies and agents do) ends the process in bounded time;
// etcd alone would wait its request timeout (7 s) for those streams.
// Then the other proxy, whose etcd is gone, is stopped too.
func TestProxyStopBounded(t *testing.T) {
	hostDir, otherDir := t.TempDir(), t.TempDir()
	hostCfg, hostAddr, hostAdmin := embeddedProxyConfig(t, hostDir, "", "")
	host := startProxy(t, hostCfg, []string{hostAddr, hostAdmin})
	cfgText, err := os.ReadFile(hostCfg)
	if err != nil {
		t.Fatal(err)
	}
	var etcdAddr string
	for _, line := range strings.Split(string(cfgText), "\n") {
		if v, ok := strings.CutPrefix(line, "client_listen = "); ok {
			etcdAddr = strings.Trim(v, `"`)
		}
	}
	otherCfg, otherAddr, otherAdmin := embeddedProxyConfig(t, otherDir, etcdAddr, filepath.Join(hostDir, "galeon-secret.key"))
	other := startProxy(t, otherCfg, []string{otherAddr, otherAdmin})
	testkit.WaitFor(t, 10*time.Second, "the second proxy joined the host's etcd", func() bool {
		return strings.Contains(other.out.String(), "joined the control plane")
	})

	tookHost := host.stop(t)
	t.Logf("SIGTERM of the etcd-hosting proxy (another proxy attached): exited after %s", tookHost.Round(time.Millisecond))
	t.Logf("its last log lines:\n%s", lastLines(host.out.String(), 3))
	if tookHost > 5*time.Second {
		t.Errorf("the etcd-hosting proxy took %s to stop after SIGTERM, want < 5 s", tookHost)
	}
	if out := host.out.String(); !strings.Contains(out, "proxy stopped") && !strings.Contains(out, "shutdown deadline passed") {
		t.Errorf("the host's log does not say how its stop went:\n%s", out)
	}

	tookOther := other.stop(t)
	t.Logf("SIGTERM of the other proxy (its etcd gone): exited after %s", tookOther.Round(time.Millisecond))
	t.Logf("its last log lines:\n%s", lastLines(other.out.String(), 2))
	if tookOther > 5*time.Second {
		t.Errorf("the proxy whose etcd is gone took %s to stop after SIGTERM, want < 5 s", tookOther)
	}
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
