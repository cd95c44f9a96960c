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

// etcdLeader returns the ID of the etcd leader as the members seen by c
// report it, and the member ID of m.
func etcdLeader(t *testing.T, c *clientv3.Client, m *etcdMember) (leader, self uint64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	st, err := c.Status(ctx, "http://"+m.client)
	if err != nil {
		t.Fatalf("status of %s: %v", m.name, err)
	}
	return st.Leader, st.Header.MemberId
}

// moveLeader makes m the etcd leader (etcd's MoveLeader, sent to the
// current leader).
func moveLeader(t *testing.T, all []*etcdMember, m *etcdMember) {
	t.Helper()
	waitFor(t, 20*time.Second, "etcd leadership on "+m.name, func() bool {
		c := memberClient(t, m)
		leader, self := etcdLeader(t, c, m)
		if leader == self {
			return true
		}
		for _, o := range all {
			oc := memberClient(t, o)
			if l, id := etcdLeader(t, oc, o); l == id {
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				_, err := oc.MoveLeader(ctx, self)
				cancel()
				if err != nil {
					t.Logf("move leader to %s: %v", m.name, err)
				}
			}
		}
		time.Sleep(100 * time.Millisecond)
		return false
	})
}

// degradedWatch records whether any in-process proxy went degraded.
type degradedWatch struct {
	mu   sync.Mutex
	seen []string
	stop chan struct{}
	done chan struct{}
}

func watchDegraded(ms []*member) *degradedWatch {
	w := &degradedWatch{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(w.done)
		for {
			for _, m := range ms {
				if m.p.Degraded() {
					w.mu.Lock()
					w.seen = append(w.seen, fmt.Sprintf("%s at %s", m.name, time.Now().Format("15:04:05.000")))
					w.mu.Unlock()
				}
			}
			select {
			case <-w.stop:
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	}()
	return w
}

func (w *degradedWatch) finish() []string {
	close(w.stop)
	<-w.done
	return w.seen
}

// maxWriteGap is the longest time between two acknowledged writes of the
// named proxies in [from, to] (the ledger's commit timestamps).
func maxWriteGap(t *testing.T, sb *sandbox.Sandbox, node string, proxies []string, from, to time.Time) time.Duration {
	t.Helper()
	db, err := sb.DB(node)
	if err != nil {
		t.Fatal(err)
	}
	q := "SELECT at FROM app.ledger WHERE proxy IN ('" + strings.Join(proxies, "','") + "') AND at BETWEEN ? AND ? ORDER BY at"
	rows, err := db.Query(q, from.UTC().Format("2006-01-02 15:04:05.000000"), to.UTC().Format("2006-01-02 15:04:05.000000"))
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var prev time.Time
	var gap time.Duration
	for rows.Next() {
		var raw string
		if err := rows.Scan(&raw); err != nil {
			t.Fatal(err)
		}
		at, err := time.Parse("2006-01-02 15:04:05.999999", raw)
		if err != nil {
			t.Fatal(err)
		}
		if !prev.IsZero() && at.Sub(prev) > gap {
			gap = at.Sub(prev)
		}
		prev = at
	}
	return gap
}

// TestEmbeddedEtcdMemberLossUnderLoad: three proxies — two in this
// process, one a `galeon proxy` process — form the embedded 3-member
// etcd cluster over a real Galera sandbox, with write and read load
// through all three. (1) The process holding the etcd leadership is
// killed (kill -9): the other two proxies never go degraded and their
// clients see no error. (2) The lost member is replaced with ONE command
// and a new proxy joins as p4. (3) The etcd leader's proxy and the Galera
// writer are killed together: the time until the new writer decision is
// published is the figure.
func TestEmbeddedEtcdMemberLossUnderLoad(t *testing.T) {
	sb := sandboxtest.New(t, sandbox.Options{Nodes: 3})
	c := sb.Credentials
	keyFile, key := sharedKeyFile(t)
	ems := newEtcdMembers(t, "p1", "p2", "p3")
	peers := staticPeers(ems)

	// p3 is a process; it waits for a quorum, which p1 completes.
	p3 := startProxyProc(t, ems[2], writeProxyConfig(t, ems[2], ems[2].discoveryConfig(peers, "", keyFile), c.AppUser, c.AppPassword, c.MonitorUser, c.MonitorPassword))
	var ms []*member
	for _, em := range ems[:2] {
		cfg := config.Defaults()
		cfg.Proxy.Listen = em.listen
		cfg.Users = []config.User{{Name: c.AppUser, Password: c.AppPassword}}
		cfg.Galera.MonitorUser, cfg.Galera.MonitorPassword = c.MonitorUser, c.MonitorPassword
		cfg.Galera.Interval = config.Duration(200 * time.Millisecond)
		cfg.Galera.DrainGrace = config.Duration(3 * time.Second)
		cfg.Discovery = em.discoveryConfig(peers, "", keyFile)
		ln, err := net.Listen("tcp", em.listen)
		if err != nil {
			t.Fatal(err)
		}
		a := proxytest.StartWith(t, assemble.Options{Config: &cfg, Log: testLog(em.name), Key: &key, Name: em.name, Listener: ln})
		ms = append(ms, &member{name: em.name, p: a.Proxy, addr: a.Addr, db: appDB(t, sb, a.Addr), store: a.Store})
	}
	waitFor(t, 60*time.Second, "p3 listens", func() bool {
		if p3.exited() {
			t.Fatalf("p3 exited: %v\n%s", p3.err, p3.logText())
		}
		return p3.listening()
	})
	oneCluster(t, ems, []string{"p1", "p2", "p3"})
	for _, m := range ms {
		// A member that was not up yet when this one became ready is
		// added by the client's membership sync.
		waitFor(t, 15*time.Second, m.name+" uses all three members' client URLs", func() bool {
			return len(m.store.Client.Endpoints()) == 3
		})
	}

	// Agents use every member's client URL, as the docs say.
	actx, acancel := context.WithTimeout(context.Background(), 10*time.Second)
	agentStore, err := discovery.Open(actx, discovery.Config{Endpoints: clientEndpoints(ems...), Cluster: "galeon"}, discoverytest.Quiet())
	acancel()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { agentStore.Close() })
	for _, n := range sb.Nodes {
		runAgent(t, sb, agentStore, n)
	}
	waitFor(t, 60*time.Second, "p1 and p2 agree on a writer: "+views(ms), func() bool {
		_, _, ok := agreement(ms)
		return ok
	})
	writer, epoch, _ := agreement(ms)
	wdb, err := sb.DB(writer)
	if err != nil {
		t.Fatal(err)
	}
	createLedger(t, wdb)
	p3m := &member{name: "p3", addr: ems[2].listen, db: appDB(t, sb, ems[2].listen)}
	waitFor(t, 30*time.Second, "p3 serves writes", func() bool {
		_, err := p3m.db.Exec("INSERT INTO app.ledger (node, proxy, at) VALUES (@@wsrep_node_name, 'p3', NOW(6))")
		return err == nil
	})
	controller := "p3"
	for _, m := range ms {
		if m.p.IsController() {
			controller = m.name
		}
	}

	// 1. The etcd leader's proxy is killed under load.
	moveLeader(t, ems, ems[2])
	survivors := startLedger(ms, 2, 2)
	victims := startLedger([]*member{p3m}, 1, 1)
	deg := watchDegraded(ms)
	time.Sleep(time.Second) // load before the kill, for the gap figure
	etcdProbe := memberClient(t, ems[0], ems[1])
	killed := time.Now()
	p3.kill()
	var etcdBack time.Time
	for time.Since(killed) < 20*time.Second {
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		_, err := etcdProbe.Put(ctx, "/galeon-test/probe", killed.String())
		cancel()
		if err == nil {
			etcdBack = time.Now()
			break
		}
	}
	if etcdBack.IsZero() {
		t.Fatal("etcd takes no write 20s after its leader's proxy was killed")
	}
	time.Sleep(6 * time.Second) // beyond the degraded probe (2 failures) and the leases (2 s)
	end := time.Now()
	acks := survivors.finish()
	victims.finish()
	degraded := deg.finish()
	gap := maxWriteGap(t, sb, writer, []string{"p1", "p2"}, killed.Add(-time.Second), end)
	t.Logf("FIGURE etcd leader's proxy (p3, galeon controller: %s) kill -9 under load: etcd writes again after %d ms; p1, p2: %d acknowledged writes, errors %v, longest write gap %d ms, degraded: %v",
		controller, etcdBack.Sub(killed).Milliseconds(), len(acks), survivors.errs, gap.Milliseconds(), degraded)
	if len(survivors.errs) > 0 {
		t.Errorf("clients of the surviving proxies saw errors: %v", survivors.errs)
	}
	if len(degraded) > 0 {
		t.Errorf("a surviving proxy went degraded: %v", degraded)
	}
	if w, e, ok := agreement(ms); !ok || w != writer || e != epoch {
		t.Errorf("p1, p2 now on %q epoch %d (agree %v); want %s epoch %d unchanged", w, e, ok, writer, epoch)
	}

	// 2. p3 is replaced with one command; p4 joins on another address.
	p4m := newEtcdMember(t, "p4")
	out, err := exec.Command(galeonBin, "discovery", "member", "replace", "p3", "--peer-url", "http://"+p4m.peer, "--discovery", clientEndpoints(ems[0], ems[1])).CombinedOutput()
	if err != nil {
		t.Fatalf("member replace p3: %v: %s", err, out)
	}
	t.Logf("%s", strings.TrimSpace(string(out)))
	joinStart := time.Now()
	p4 := startProxyProc(t, p4m, writeProxyConfig(t, p4m, p4m.discoveryConfig(nil, clientEndpoints(ems[0], ems[1]), keyFile), c.AppUser, c.AppPassword, c.MonitorUser, c.MonitorPassword))
	waitFor(t, 60*time.Second, "p4 listens", func() bool {
		if p4.exited() {
			t.Fatalf("p4 exited: %v\n%s", p4.err, p4.logText())
		}
		return p4.listening()
	})
	now := []*etcdMember{ems[0], ems[1], p4m}
	waitFor(t, 30*time.Second, "p4 a voting member", func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		resp, err := etcdProbe.MemberList(ctx)
		return err == nil && len(resp.Members) == 3 && !slices.ContainsFunc(resp.Members, func(m *etcdserverpb.Member) bool { return m.IsLearner || len(m.ClientURLs) == 0 })
	})
	oneCluster(t, now, []string{"p1", "p2", "p4"})
	t.Logf("FIGURE member replaced: p4 listening and a voting member %d ms after its start", time.Since(joinStart).Milliseconds())

	// 3. The etcd leader's proxy (p4) and the Galera writer die together.
	moveLeader(t, now, p4m)
	waitFor(t, 30*time.Second, "p1 and p2 agree: "+views(ms), func() bool {
		_, _, ok := agreement(ms)
		return ok
	})
	writer, epoch, _ = agreement(ms)
	controller = "p4"
	for _, m := range ms {
		if m.p.IsController() {
			controller = m.name
		}
	}
	watchStore, err := discovery.Open(context.Background(), discovery.Config{Endpoints: clientEndpoints(ems[0], ems[1]), Cluster: "galeon"}, discoverytest.Quiet())
	if err != nil {
		t.Fatal(err)
	}
	defer watchStore.Close()
	wctx, wcancel := context.WithCancel(context.Background())
	defer wcancel()
	published := make(chan time.Time, 1)
	var fencedAt time.Time // written before published is sent
	go func() {
		for u := range watchStore.WatchWriter(wctx) {
			d := u.Decision
			if u.Present && d.Writer == "" && d.Epoch > epoch && fencedAt.IsZero() {
				fencedAt = time.Now()
			}
			if u.Present && d.Writer != "" && d.Writer != writer && d.Epoch > epoch {
				published <- time.Now()
				return
			}
		}
	}()
	killed = time.Now()
	p4.kill()
	if err := sb.Kill(writer); err != nil {
		t.Fatal(err)
	}
	var at time.Time
	select {
	case at = <-published:
	case <-time.After(30 * time.Second):
		t.Fatalf("no new writer decision 30s after the etcd leader's proxy and the writer %s died: %s", writer, views(ms))
	}
	agreed := waitFor(t, 30*time.Second, "p1 and p2 on the new writer: "+views(ms), func() bool {
		w, e, ok := agreement(ms)
		return ok && w != writer && e > epoch
	})
	fence := "not seen"
	if !fencedAt.IsZero() {
		fence = fmt.Sprintf("%d ms", fencedAt.Sub(killed).Milliseconds())
	}
	t.Logf("FIGURE etcd leader loss (p4, galeon controller: %s) + writer %s kill -9: fence published after %s, new writer decision after %d ms, p1 and p2 on it after %d ms",
		controller, writer, fence, at.Sub(killed).Milliseconds(), agreed.Sub(killed).Milliseconds())
}
