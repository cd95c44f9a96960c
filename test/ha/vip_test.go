// Package ha_test tests galeon's proxy high availability the way
// operators deploy it: several proxies behind one virtual IP moved by
// keepalived (VRRP), each proxy on its own "machine" — a network
// namespace made for the test — in front of a real Galera sandbox.
package ha_test

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/galeon-db/galeon/internal/agent"
	"github.com/galeon-db/galeon/internal/discovery"
	"github.com/galeon-db/galeon/internal/discovery/discoverytest"
	"github.com/galeon-db/galeon/internal/sandbox"
	"github.com/galeon-db/galeon/internal/sandbox/sandboxtest"
	"github.com/galeon-db/galeon/internal/testkit"
)

var galeonBin string

func TestMain(m *testing.M) { os.Exit(testkit.RunWithGaleon(m, &galeonBin)) }

// startIn runs a command inside machine ns (ip netns exec) and stops it
// with the test; its output goes to logFile.
func startIn(t *testing.T, ns, logFile string, args ...string) *exec.Cmd {
	t.Helper()
	out, err := os.Create(logFile)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("ip", append([]string{"netns", "exec", ns}, args...)...)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); out.Close(); close(done) }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-done
	})
	return cmd
}

// keepalivedConf is the shipped recipe with this network's interface
// address, virtual IP and the machine's priority.
func keepalivedConf(t *testing.T, vip string, priority int) string {
	t.Helper()
	b, err := os.ReadFile("../../deploy/keepalived/keepalived.conf")
	if err != nil {
		t.Fatal(err)
	}
	s := strings.Replace(string(b), "10.0.0.100/24", vip+"/24", 1)
	return strings.Replace(s, "priority 150", fmt.Sprintf("priority %d", priority), 1)
}

// probe runs one short query through the VIP on a new connection every
// few milliseconds and remembers the longest gap between two answered
// queries.
type probe struct {
	mu      sync.Mutex
	last    time.Time
	gap     time.Duration
	gapEnd  time.Time
	ok, bad int
	stop    chan struct{}
	done    chan struct{}
}

func startProbe(dsn string) *probe {
	p := &probe{stop: make(chan struct{}), done: make(chan struct{}), last: time.Now()}
	go func() {
		defer close(p.done)
		for n := 0; n < 200000; n++ {
			select {
			case <-p.stop:
				return
			default:
			}
			db, err := sql.Open("mysql", dsn)
			var one int
			if err == nil {
				ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
				err = db.QueryRowContext(ctx, "SELECT 1").Scan(&one)
				cancel()
				db.Close()
			}
			now := time.Now()
			p.mu.Lock()
			if err != nil {
				p.bad++
			} else {
				p.ok++
				if g := now.Sub(p.last); g > p.gap {
					p.gap, p.gapEnd = g, now
				}
				p.last = now
			}
			p.mu.Unlock()
			time.Sleep(5 * time.Millisecond)
		}
	}()
	return p
}

func (p *probe) answeredSince(t0 time.Time) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.last.After(t0)
}

func (p *probe) finish() (gap time.Duration, ok, bad int) {
	close(p.stop)
	<-p.done
	return p.gap, p.ok, p.bad
}

// TestVirtualIPFailover puts two galeon proxies, each on its own machine
// with keepalived and the shipped recipe, behind one virtual IP. Clients
// connect to the VIP. When the holder's galeon stops answering, or the
// holder machine dies, the other machine takes the address; the figure is
// how long clients are without service.
func TestVirtualIPFailover(t *testing.T) {
	if _, err := exec.LookPath("keepalived"); err != nil {
		t.Fatal("keepalived not found: install Debian's keepalived (`make deps`)")
	}
	sb := sandboxtest.New(t, sandbox.Options{Nodes: 3})
	net := newLAN(t, 2)
	gw := net.prefix + "1"
	for _, n := range sb.Nodes {
		relay(t, gw, n.Port)
	}
	// The control plane: etcd (embedded in the test) reachable from the
	// machines, and one agent per node registering the node under the
	// address the machines reach it at.
	store := discoverytest.Open(t)
	_, etcdPort, _ := strings.Cut(strings.TrimPrefix(store.Endpoints[0], "http://"), ":")
	port, _ := strconv.Atoi(etcdPort)
	relay(t, gw, port)
	c := sb.Credentials
	for _, n := range sb.Nodes {
		a, err := agent.New(agent.Config{Node: n.Name, Address: fmt.Sprintf("%s:%d", gw, n.Port), User: c.MonitorUser, Password: c.MonitorPassword,
			Grastate: sb.GrastatePath(n), Interval: 200 * time.Millisecond}, store, discoverytest.Quiet())
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { _ = a.Run(ctx); close(done) }()
		t.Cleanup(func() { cancel(); <-done })
	}
	vip := net.prefix + "100"
	dir := t.TempDir()
	for i := 1; i <= 2; i++ {
		conf := filepath.Join(dir, fmt.Sprintf("galeon%d.toml", i))
		// Only the first proxy's file has accounts: the second takes them
		// from the cluster's shared configuration.
		text := fmt.Sprintf("[proxy]\nlisten = \"0.0.0.0:6033\"\n[admin]\nlisten = \"127.0.0.1:6032\"\nhttp_listen = \"127.0.0.1:6080\"\npassword = \"ha-test\"\n"+
			"[discovery]\nendpoints = \"etcd://%s:%d\"\ncluster = %q\nproxy_name = \"machine%d\"\nsecret_key_file = %q\n",
			gw, port, discoverytest.Cluster, i, filepath.Join(dir, "galeon-secret.key"))
		if i == 1 {
			text += fmt.Sprintf("[galera]\nmonitor_user = %q\nmonitor_password = %q\n[[users]]\nname = %q\npassword = %q\n", c.MonitorUser, c.MonitorPassword, c.AppUser, c.AppPassword)
		}
		if err := os.WriteFile(conf, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		startIn(t, net.hosts[i-1], filepath.Join(dir, fmt.Sprintf("galeon%d.log", i)), galeonBin, "proxy", "--config", conf)
		testkit.WaitFor(t, 20*time.Second, fmt.Sprintf("galeon on machine %d listening", i), func() bool {
			conn, err := netDial(net.addr(i) + ":6033")
			if err == nil {
				conn.Close()
			}
			return err == nil
		})
		kconf := filepath.Join(dir, fmt.Sprintf("keepalived%d.conf", i))
		if err := os.WriteFile(kconf, []byte(keepalivedConf(t, vip, 200-50*i)), 0o600); err != nil {
			t.Fatal(err)
		}
		run := filepath.Join(dir, fmt.Sprintf("k%d", i))
		startIn(t, net.hosts[i-1], filepath.Join(dir, fmt.Sprintf("keepalived%d.log", i)), "keepalived", "--dont-fork", "--log-console",
			"--use-file", kconf, "--pid", run+".pid", "--vrrp_pid", run+"-vrrp.pid", "--checkers_pid", run+"-check.pid")
	}
	testkit.WaitFor(t, 30*time.Second, "both proxies agree on one published writer", func() bool {
		d, ok := decision(store)
		ps, _ := store.Proxies(context.Background())
		if !ok || len(ps) != 2 {
			return false
		}
		for _, p := range ps {
			if p.Writer != d.Writer || p.Applied != d.Epoch || d.Writer == "" {
				return false
			}
		}
		return true
	})
	before, _ := decision(store)
	holder := 0
	testkit.WaitFor(t, 20*time.Second, "a machine holds the virtual IP "+vip, func() bool {
		for i := 1; i <= 2; i++ {
			if net.hasAddr(i, vip) {
				holder = i
				return true
			}
		}
		return false
	})
	mc := mysql.NewConfig()
	mc.User, mc.Passwd, mc.Net, mc.Addr = c.AppUser, c.AppPassword, "tcp", vip+":6033"
	mc.Timeout = 300 * time.Millisecond
	dsn := mc.FormatDSN()
	pr := startProbe(dsn)
	testkit.WaitFor(t, 20*time.Second, "queries answered through the VIP", func() bool { return pr.answeredSince(time.Now().Add(-50 * time.Millisecond)) })
	time.Sleep(500 * time.Millisecond)

	// 1. The holder's galeon dies (its machine stays up): keepalived's
	// check fails and the address moves.
	other := 3 - holder
	killed := time.Now()
	out, _ := exec.Command("ip", "netns", "pids", net.hosts[holder-1]).Output()
	for _, f := range strings.Fields(string(out)) {
		if b, err := os.ReadFile("/proc/" + f + "/cmdline"); err == nil && strings.Contains(string(b), galeonBin) {
			pid := 0
			fmt.Sscan(f, &pid)
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
	moved := testkit.WaitFor(t, 20*time.Second, "the VIP on the other machine", func() bool { return net.hasAddr(other, vip) })
	back := testkit.WaitFor(t, 20*time.Second, "queries answered again", func() bool { return pr.answeredSince(moved) })
	t.Logf("FIGURE galeon on the VIP holder killed: VIP moved after %d ms, clients answered again after %d ms",
		moved.Sub(killed).Milliseconds(), back.Sub(killed).Milliseconds())
	gap1, ok1, bad1 := pr.finish()
	t.Logf("FIGURE longest client-visible gap %d ms (%d queries answered, %d failed, a new connection each)", gap1.Milliseconds(), ok1, bad1)
	if gap1 > 10*time.Second {
		t.Errorf("clients were without service for %s", gap1)
	}

	// 2. The new holder machine dies altogether (galeon and keepalived):
	// with no advertisements the first machine takes the address back —
	// but its galeon is dead, so first bring it back, as an operator
	// would, and let it become healthy.
	startIn(t, net.hosts[holder-1], filepath.Join(dir, "galeon-restarted.log"), galeonBin, "proxy", "--config", filepath.Join(dir, fmt.Sprintf("galeon%d.toml", holder)))
	klog := filepath.Join(dir, fmt.Sprintf("keepalived%d.log", holder))
	testkit.WaitFor(t, 20*time.Second, "keepalived on the first machine healthy again (BACKUP, not FAULT)", func() bool {
		return lastState(klog) == "BACKUP"
	})
	pr = startProbe(dsn)
	testkit.WaitFor(t, 10*time.Second, "queries answered", func() bool { return pr.answeredSince(time.Now().Add(-50 * time.Millisecond)) })
	killed = time.Now()
	net.killAll(other)
	moved = testkit.WaitFor(t, 20*time.Second, "the VIP back on the first machine", func() bool { return net.hasAddr(holder, vip) })
	back = testkit.WaitFor(t, 20*time.Second, "queries answered again", func() bool { return pr.answeredSince(moved) })
	gap2, ok2, bad2 := pr.finish()
	// Which proxy holds the address never changed where writes go.
	if after, _ := decision(store); after.Writer != before.Writer || after.Epoch != before.Epoch {
		t.Errorf("the writer decision changed from %s (epoch %d) to %s (epoch %d) while only proxies failed", before.Writer, before.Epoch, after.Writer, after.Epoch)
	}
	t.Logf("FIGURE VIP holder machine died (galeon and keepalived): VIP moved after %d ms, clients answered again after %d ms; longest gap %d ms (%d answered, %d failed)",
		moved.Sub(killed).Milliseconds(), back.Sub(killed).Milliseconds(), gap2.Milliseconds(), ok2, bad2)
}

// lastState is the VRRP state keepalived last entered, from its log.
func lastState(logFile string) string {
	b, _ := os.ReadFile(logFile)
	state := ""
	for _, line := range strings.Split(string(b), "\n") {
		if i := strings.Index(line, "Entering "); i >= 0 {
			state = strings.TrimSuffix(strings.Fields(line[i+len("Entering "):])[0], ",")
		}
	}
	return state
}

func decision(store *discovery.Store) (discovery.WriterDecision, bool) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	u, err := store.ReadDecision(ctx)
	return u.Decision, err == nil && u.Present && !u.Decision.Fencing
}
