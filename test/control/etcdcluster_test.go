package control_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/galeon-db/galeon/internal/assemble"
	"github.com/galeon-db/galeon/internal/config"
	"github.com/galeon-db/galeon/internal/discovery"
	"github.com/galeon-db/galeon/internal/discovery/discoverytest"
	"github.com/galeon-db/galeon/internal/proxy/proxytest"
	"github.com/galeon-db/galeon/internal/sandbox"
	"github.com/galeon-db/galeon/internal/sandbox/sandboxtest"
	"github.com/galeon-db/galeon/internal/sharedconfig"
)

// etcdMember is one proxy's embedded etcd member on loopback: its
// addresses and data directory.
type etcdMember struct {
	name, listen, admin, http, client, peer, dir string
}

func newEtcdMembers(t *testing.T, names ...string) []*etcdMember {
	var out []*etcdMember
	for _, n := range names {
		out = append(out, newEtcdMember(t, n))
	}
	return out
}

func newEtcdMember(t *testing.T, name string) *etcdMember {
	return &etcdMember{name: name, listen: uniqueAddr(t), admin: uniqueAddr(t), http: uniqueAddr(t),
		client: uniqueAddr(t), peer: uniqueAddr(t), dir: t.TempDir()}
}

var handedOut = struct {
	sync.Mutex
	addrs map[string]bool
}{addrs: map[string]bool{}}

// uniqueAddr is a free loopback address never handed out before in this
// test binary (the kernel may offer a port again once it is closed).
func uniqueAddr(t *testing.T) string {
	handedOut.Lock()
	defer handedOut.Unlock()
	for {
		a := discoverytest.FreeAddr(t)
		if !handedOut.addrs[a] {
			handedOut.addrs[a] = true
			return a
		}
	}
}

func staticPeers(ms []*etcdMember) []string {
	var out []string
	for _, m := range ms {
		out = append(out, m.name+"=http://"+m.peer)
	}
	return out
}

func clientEndpoints(ms ...*etcdMember) string {
	var out []string
	for _, m := range ms {
		out = append(out, "etcd://"+m.client)
	}
	return strings.Join(out, ",")
}

// discoveryConfig is the proxy's [discovery] section for this member.
func (m *etcdMember) discoveryConfig(peers []string, join, keyFile string) config.Discovery {
	d := config.Defaults().Discovery
	d.Endpoints, d.DataDir, d.ClientListen, d.PeerListen = config.EmbeddedEndpoints, filepath.Join(m.dir, "discovery"), m.client, m.peer
	d.MemberName, d.Peers, d.Join, d.ProxyName, d.SecretKeyFile = m.name, peers, join, m.name, keyFile
	return d
}

// proxyProc is a `galeon proxy` process, stopped by its PID.
type proxyProc struct {
	m    *etcdMember
	cmd  *exec.Cmd
	log  string
	done chan struct{}
	err  error
}

// writeProxyConfig writes the file a `galeon proxy` of member m runs with.
func writeProxyConfig(t *testing.T, m *etcdMember, d config.Discovery, user, password, monitor, monitorPassword string) string {
	t.Helper()
	q := func(ss []string) string {
		var out []string
		for _, s := range ss {
			out = append(out, fmt.Sprintf("%q", s))
		}
		return "[" + strings.Join(out, ", ") + "]"
	}
	text := fmt.Sprintf(`[proxy]
listen = %q
[admin]
listen = %q
http_listen = %q
password = "admin-secret"
[galera]
monitor_user = %q
monitor_password = %q
interval = "200ms"
drain_grace = "3s"
[[users]]
name = %q
password = %q
[discovery]
cluster = %q
proxy_name = %q
secret_key_file = %q
data_dir = %q
client_listen = %q
peer_listen = %q
member_name = %q
`, m.listen, m.admin, m.http, monitor, monitorPassword, user, password, d.Cluster, d.ProxyName, d.SecretKeyFile, d.DataDir, d.ClientListen, d.PeerListen, d.MemberName)
	if len(d.Peers) > 0 {
		text += "peers = " + q(d.Peers) + "\n"
	}
	if d.Join != "" {
		text += fmt.Sprintf("join = %q\n", d.Join)
	}
	path := filepath.Join(m.dir, "galeon.toml")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// startProxyProc runs `galeon proxy --config path`; it is killed when the
// test ends if it still runs.
func startProxyProc(t *testing.T, m *etcdMember, path string) *proxyProc {
	t.Helper()
	p := &proxyProc{m: m, log: filepath.Join(m.dir, "proxy.log"), done: make(chan struct{})}
	out, err := os.OpenFile(p.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	p.cmd = exec.Command(galeonBin, "proxy", "--config", path)
	p.cmd.Stdout, p.cmd.Stderr = out, out
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		p.err = p.cmd.Wait()
		out.Close()
		close(p.done)
	}()
	t.Cleanup(func() { p.kill() })
	return p
}

// listening says whether the proxy accepts MySQL connections (it listens
// once its etcd member is ready and the shared configuration is read).
func (p *proxyProc) listening() bool {
	c, err := net.DialTimeout("tcp", p.m.listen, 100*time.Millisecond)
	if err == nil {
		c.Close()
	}
	return err == nil
}

func (p *proxyProc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// kill ends the process as kill -9 does.
func (p *proxyProc) kill() {
	if !p.exited() {
		_ = p.cmd.Process.Signal(syscall.SIGKILL)
		<-p.done
	}
}

// stop ends it cleanly (SIGTERM).
func (p *proxyProc) stop(t *testing.T) {
	if p.exited() {
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(20 * time.Second):
		t.Errorf("proxy %s did not stop within 20s of SIGTERM", p.m.name)
		p.kill()
	}
}

func (p *proxyProc) logText() string {
	b, _ := os.ReadFile(p.log)
	return string(b)
}

// memberClient is an etcd client on the given members only.
func memberClient(t *testing.T, ms ...*etcdMember) *clientv3.Client {
	t.Helper()
	var eps []string
	for _, m := range ms {
		eps = append(eps, "http://"+m.client)
	}
	c, err := clientv3.New(clientv3.Config{Endpoints: eps, DialTimeout: 2 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// oneCluster checks that every member answers as part of the same etcd
// cluster, which lists exactly want started voting members.
func oneCluster(t *testing.T, ms []*etcdMember, want []string) {
	t.Helper()
	var cluster uint64
	for i, m := range ms {
		c := memberClient(t, m)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		resp, err := c.MemberList(ctx)
		cancel()
		if err != nil {
			t.Fatalf("member %s: %v", m.name, err)
		}
		if i == 0 {
			cluster = resp.Header.ClusterId
		} else if resp.Header.ClusterId != cluster {
			t.Fatalf("member %s is in etcd cluster %x, %s in %x: more than one cluster", m.name, resp.Header.ClusterId, ms[0].name, cluster)
		}
		var names []string
		for _, pm := range resp.Members {
			if pm.IsLearner || len(pm.ClientURLs) == 0 {
				t.Fatalf("member %s lists %q as learner=%v, started=%v", m.name, pm.Name, pm.IsLearner, len(pm.ClientURLs) > 0)
			}
			names = append(names, pm.Name)
		}
		sort.Strings(names)
		if !slices.Equal(names, want) {
			t.Fatalf("member %s lists members %v, want %v", m.name, names, want)
		}
	}
}

// sharedKeyFile creates the key every proxy of the cluster shares.
func sharedKeyFile(t *testing.T) (string, sharedconfig.Key) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "galeon-secret.key")
	k, _, err := sharedconfig.LoadOrCreateKey(path)
	if err != nil {
		t.Fatal(err)
	}
	return path, k
}

// TestEmbeddedEtcdFormsAtOnce: three `galeon proxy` processes whose
// [discovery] names the same three peers, started at the same instant,
// form ONE embedded etcd cluster of three voting members — ten times out
// of ten. Then, on the last cluster: a member killed and restarted with
// its data rejoins; a member whose data directory is gone does not
// start; a removed member that restarts with its data does not start.
func TestEmbeddedEtcdFormsAtOnce(t *testing.T) {
	keyFile, _ := sharedKeyFile(t)
	var took, stops []time.Duration
	var last []*proxyProc
	for round := 1; round <= 10; round++ {
		ms := newEtcdMembers(t, "p1", "p2", "p3")
		peers := staticPeers(ms)
		var paths []string
		for _, m := range ms {
			paths = append(paths, writeProxyConfig(t, m, m.discoveryConfig(peers, "", keyFile), "app", "app-secret", "monitor", "monitor-secret"))
		}
		start := time.Now()
		var ps []*proxyProc
		for i, m := range ms {
			ps = append(ps, startProxyProc(t, m, paths[i]))
		}
		waitFor(t, 60*time.Second, fmt.Sprintf("round %d: all three proxies listen", round), func() bool {
			for _, p := range ps {
				if p.exited() {
					t.Fatalf("round %d: proxy %s exited: %v\n%s", round, p.m.name, p.err, p.logText())
				}
				if !p.listening() {
					return false
				}
			}
			return true
		})
		took = append(took, time.Since(start))
		oneCluster(t, ms, []string{"p1", "p2", "p3"})
		if round < 10 {
			// All three stop at once (SIGTERM), as a machine-wide
			// shutdown would stop them.
			stopStart := time.Now()
			var wg sync.WaitGroup
			for _, p := range ps {
				wg.Add(1)
				go func() { defer wg.Done(); p.stop(t) }()
			}
			wg.Wait()
			stops = append(stops, time.Since(stopStart))
			continue
		}
		last = ps
	}
	sorted := slices.Clone(took)
	slices.Sort(sorted)
	t.Logf("FIGURE embedded 3-member etcd: 10 of 10 simultaneous starts formed one cluster; start to all three proxies listening: median %s, max %s (each: %v)",
		sorted[len(sorted)/2].Round(time.Millisecond), sorted[len(sorted)-1].Round(time.Millisecond), roundAll(took))
	t.Logf("FIGURE three proxies stopped together (SIGTERM): all exited after %v", roundAll(stops))

	ms := []*etcdMember{last[0].m, last[1].m, last[2].m}
	cfgOf := func(m *etcdMember) string { return filepath.Join(m.dir, "galeon.toml") }
	galeon := func(args ...string) (string, error) {
		out, err := exec.Command(galeonBin, args...).CombinedOutput()
		return strings.TrimSpace(string(out)), err
	}
	waitListening := func(p *proxyProc, what string) {
		waitFor(t, 60*time.Second, what, func() bool {
			if p.exited() {
				t.Fatalf("%s: the proxy exited: %v\n%s", what, p.err, p.logText())
			}
			return p.listening()
		})
	}
	waitRefused := func(p *proxyProc, what, want string) {
		started := time.Now()
		select {
		case <-p.done:
		case <-time.After(60 * time.Second):
			t.Fatalf("%s: still runs after 60s", what)
		}
		if !strings.Contains(p.logText(), want) {
			t.Fatalf("%s: want a refusal saying %q, got:\n%s", what, want, p.logText())
		}
		t.Logf("%s: refused after %s: %s", what, time.Since(started).Round(time.Millisecond), lastLine(p.logText()))
	}

	// 1. A member killed (kill -9) and restarted with its data rejoins.
	last[2].kill()
	p3 := startProxyProc(t, ms[2], cfgOf(ms[2]))
	waitListening(p3, "p3 restarted with its data")
	oneCluster(t, ms, []string{"p1", "p2", "p3"})

	// 2. p3 is removed while down; restarted with its data, it must not
	// come back (etcd stops a removed member; galeon says what to do).
	p3.kill()
	out, err := galeon("discovery", "member", "remove", "p3", "--discovery", clientEndpoints(ms[0], ms[1]))
	if err != nil {
		t.Fatalf("member remove p3: %v: %s", err, out)
	}
	waitRefused(startProxyProc(t, ms[2], cfgOf(ms[2])), "p3 removed, restarted with its old data", "was removed from the cluster")
	oneCluster(t, ms[:2], []string{"p1", "p2"})

	// 3. Added back at the same peer URL, with an empty data directory
	// and the same file (its peers), it joins as a learner and is
	// promoted.
	if err := os.RemoveAll(filepath.Join(ms[2].dir, "discovery", "etcd")); err != nil {
		t.Fatal(err)
	}
	if out, err := galeon("discovery", "member", "add", "--peer-url", "http://"+ms[2].peer, "--discovery", clientEndpoints(ms[0], ms[1])); err != nil {
		t.Fatalf("member add: %v: %s", err, out)
	}
	p3 = startProxyProc(t, ms[2], cfgOf(ms[2]))
	waitListening(p3, "p3 added back with an empty data directory")
	waitFor(t, 30*time.Second, "p3 promoted", func() bool {
		c := memberClient(t, ms[0])
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		resp, err := c.MemberList(ctx)
		return err == nil && !slices.ContainsFunc(resp.Members, func(m *etcdserverpb.Member) bool { return m.IsLearner || len(m.ClientURLs) == 0 })
	})
	oneCluster(t, ms, []string{"p1", "p2", "p3"})

	// 4. p2's data directory is lost: it must not start afresh (it could
	// vote twice in one term); `member replace` then lets it back in.
	last[1].kill()
	if err := os.RemoveAll(filepath.Join(ms[1].dir, "discovery", "etcd")); err != nil {
		t.Fatal(err)
	}
	waitRefused(startProxyProc(t, ms[1], cfgOf(ms[1])), "p2 without its data directory", "galeon discovery member replace p2")
	out, err = galeon("discovery", "member", "replace", "p2", "--peer-url", "http://"+ms[1].peer, "--discovery", clientEndpoints(ms[0], ms[2]))
	if err != nil {
		t.Fatalf("member replace p2: %v: %s", err, out)
	}
	t.Logf("galeon discovery member replace: %s", out)
	p2 := startProxyProc(t, ms[1], cfgOf(ms[1]))
	waitListening(p2, "p2 replaced, started with an empty data directory")
	waitFor(t, 30*time.Second, "p2 promoted", func() bool {
		c := memberClient(t, ms[0])
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		resp, err := c.MemberList(ctx)
		return err == nil && len(resp.Members) == 3 && !slices.ContainsFunc(resp.Members, func(m *etcdserverpb.Member) bool { return m.IsLearner || len(m.ClientURLs) == 0 })
	})
	oneCluster(t, ms, []string{"p1", "p2", "p3"})
	listing, _ := galeon("discovery", "member", "list", "--discovery", clientEndpoints(ms...))
	t.Logf("galeon discovery member list:\n%s", listing)
}

func roundAll(ds []time.Duration) []string {
	var out []string
	for _, d := range ds {
		out = append(out, d.Round(time.Millisecond).String())
	}
	return out
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

var (
	_ = assemble.Options{}
	_ = proxytest.StartWith
	_ = sandboxtest.New
	_ = sandbox.Options{}
	_ = discovery.Embedded
)
