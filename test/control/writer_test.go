package control_test

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/galeon-db/galeon/internal/agent"
	"github.com/galeon-db/galeon/internal/assemble"
	"github.com/galeon-db/galeon/internal/config"
	"github.com/galeon-db/galeon/internal/discovery"
	"github.com/galeon-db/galeon/internal/discovery/discoverytest"
	"github.com/galeon-db/galeon/internal/lifecycle"
	"github.com/galeon-db/galeon/internal/proxy"
	"github.com/galeon-db/galeon/internal/proxy/proxytest"
	"github.com/galeon-db/galeon/internal/sandbox"
	"github.com/galeon-db/galeon/internal/sandbox/sandboxtest"
	"github.com/galeon-db/galeon/internal/sharedconfig"
	"github.com/galeon-db/galeon/internal/testkit"
)

// member is one proxy of a multi-proxy deployment, with its own etcd
// client as its own process would have.
type member struct {
	name  string
	p     *proxy.Proxy
	addr  string
	db    *sql.DB
	store *discovery.Store
	// admin is the admin SQL address, if served.
	admin string
	kill  func()
	stop  func()
}

// newControlRig starts a 3-node sandbox, an embedded etcd, one agent per
// node and n proxies, and waits until the proxies agree on a writer.
func newControlRig(t *testing.T, n int) (*sandbox.Sandbox, *discovery.Store, []*member) {
	t.Helper()
	return newRig(t, n, false)
}

// newRig is newControlRig; with managed, each agent runs its node (the
// sandbox is its executor), as galeon agent --manage does elsewhere.
func newRig(t *testing.T, n int, managed bool) (*sandbox.Sandbox, *discovery.Store, []*member) {
	t.Helper()
	return newRigOf(t, n, managed, sandbox.Options{Nodes: 3})
}

// newRigOf is newRig over a sandbox made with opts.
func newRigOf(t *testing.T, n int, managed bool, opts sandbox.Options) (*sandbox.Sandbox, *discovery.Store, []*member) {
	t.Helper()
	sb := sandboxtest.New(t, opts)
	store := discoverytest.Open(t)
	for _, node := range sb.Nodes {
		var exec agent.Executor
		if managed {
			exec = sb
		}
		runAgentWith(t, sb, store, node, exec)
	}
	ms := startProxies(t, sb, store, n)
	waitFor(t, 30*time.Second, "all proxies agree on a writer: "+views(ms), func() bool {
		_, _, ok := agreement(ms)
		return ok
	})
	return sb, store, ms
}

// testKey seals the shared configuration's secrets in these tests.
var testKey = sharedconfig.NewKey([]byte("0123456789abcdef0123456789abcdef"))

// startProxies starts n proxies over the nodes registered in store, each
// joined to the control plane under its own etcd link, as `galeon proxy`
// does. Only the first has users and a monitor account in its file: the
// others get them from the cluster's shared configuration.
func startProxies(t *testing.T, sb *sandbox.Sandbox, store *discovery.Store, n int) []*member {
	t.Helper()
	var ms []*member
	for i := 1; i <= n; i++ {
		ms = append(ms, startProxy(t, sb, store, fmt.Sprintf("proxy%d", i), i == 1))
	}
	return ms
}

// startProxy starts one proxy; withAccounts puts the sandbox's users and
// monitor account in its file.
func startProxy(t *testing.T, sb *sandbox.Sandbox, store *discovery.Store, name string, withAccounts bool) *member {
	t.Helper()
	return startProxyVia(t, sb, func() (*discovery.Store, func()) { return discoverytest.ConnectCuttable(t, store) }, name, withAccounts)
}

// startProxyVia starts a proxy whose etcd client connect opens (with a
// function that severs its link, or does nothing).
func startProxyVia(t *testing.T, sb *sandbox.Sandbox, connect func() (*discovery.Store, func()), name string, withAccounts bool) *member {
	t.Helper()
	return startProxyTuned(t, sb, connect, name, withAccounts, nil)
}

// startProxyTuned is startProxyVia with tune applied to the proxy's
// configuration last (failure detection settings, drain_grace, ...).
func startProxyTuned(t *testing.T, sb *sandbox.Sandbox, connect func() (*discovery.Store, func()), name string, withAccounts bool, tune func(*config.Config)) *member {
	t.Helper()
	c := sb.Credentials
	cfg := config.Defaults()
	cfg.Proxy.Listen = "127.0.0.1:0"
	if withAccounts {
		cfg.Users = []config.User{{Name: c.AppUser, Password: c.AppPassword}}
		cfg.Galera.MonitorUser, cfg.Galera.MonitorPassword = c.MonitorUser, c.MonitorPassword
	}
	cfg.Galera.Interval = config.Duration(200 * time.Millisecond)
	cfg.Galera.DrainGrace = config.Duration(3 * time.Second)
	cfg.Admin.Listen, cfg.Admin.HTTPListen = "", "" // served only if tune says where
	if tune != nil {
		tune(&cfg)
	}
	own, sever := connect()
	cfg.Discovery.Endpoints = "etcd://" + strings.TrimPrefix(own.Endpoints[0], "http://")
	a := proxytest.StartWith(t, assemble.Options{Config: &cfg, Log: testLog(name), Store: own, CloseStore: true, Key: &testKey, Name: name,
		Admin: cfg.Admin.Listen != "" || cfg.Admin.HTTPListen != ""})
	m := &member{name: name, p: a.Proxy, addr: a.Addr, db: appDB(t, sb, a.Addr), store: own}
	if a.Admin != nil && cfg.Admin.Listen != "" {
		m.admin = a.Admin.SQLAddr().String()
	}
	var once sync.Once
	// kill ends the proxy as kill -9 would: its link to etcd is severed
	// first (no resignation, no record removal: its leases expire), then
	// its clients are cut off.
	m.kill = func() {
		once.Do(func() {
			testLog(name).Info("killing: link to etcd severed")
			sever()
			proxytest.Halt(t, a)
		})
	}
	// stop ends it cleanly (resigns, removes its record).
	m.stop = func() {
		once.Do(a.Stop)
	}
	t.Cleanup(m.kill)
	return m
}

// testLog discards a component's log unless GALEON_TEST_VERBOSE is set.
func testLog(name string) *slog.Logger {
	if os.Getenv("GALEON_TEST_VERBOSE") == "" {
		return discoverytest.Quiet()
	}
	return slog.New(slog.NewTextHandler(os.Stderr, nil)).With("proxy", name)
}

// agreement returns the writer and epoch every live proxy routes writes
// to, ok only when they all agree on a writer.
func agreement(ms []*member) (string, uint64, bool) {
	var w string
	var e uint64
	for i, m := range ms {
		snap := m.p.View().Load()
		sw, ok := snap.Writer()
		if !ok {
			return "", 0, false
		}
		if i == 0 {
			w, e = sw.Name, snap.Epoch
		} else if sw.Name != w || snap.Epoch != e {
			return "", 0, false
		}
	}
	return w, e, true
}

func views(ms []*member) string {
	var parts []string
	for _, m := range ms {
		snap := m.p.View().Load()
		w, _ := snap.Writer()
		parts = append(parts, fmt.Sprintf("%s: writer %q epoch %d controller %v degraded %v", m.name, w.Name, snap.Epoch, m.p.IsController(), m.p.Degraded()))
	}
	return strings.Join(parts, "; ")
}

// ledger is bounded write and read traffic through every proxy: each
// acknowledged insert is remembered, every error counted by proxy.
type ledger struct {
	stop  chan struct{}
	wg    sync.WaitGroup
	mu    sync.Mutex
	acks  []int64
	errs  map[string]int
	reads map[string]int
}

func startLedger(ms []*member, writers, readers int) *ledger {
	l := &ledger{stop: make(chan struct{}), errs: map[string]int{}, reads: map[string]int{}}
	for _, m := range ms {
		for i := 0; i < writers+readers; i++ {
			l.wg.Add(1)
			go l.client(m, i < writers)
		}
	}
	return l
}

func (l *ledger) client(m *member, writes bool) {
	defer l.wg.Done()
	for n := 0; n < 100000; n++ {
		select {
		case <-l.stop:
			return
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		var err error
		var id int64
		if writes {
			var res sql.Result
			res, err = m.db.ExecContext(ctx, "INSERT INTO app.ledger (node, proxy, at) VALUES (@@wsrep_node_name, ?, NOW(6))", m.name)
			if err == nil {
				id, _ = res.LastInsertId()
			}
		} else {
			var one int
			err = m.db.QueryRowContext(ctx, "SELECT 1 FROM app.ledger LIMIT 1").Scan(&one)
			if err == sql.ErrNoRows {
				err = nil
			}
		}
		cancel()
		l.mu.Lock()
		switch {
		case err != nil:
			msg := err.Error()
			if len(msg) > 70 {
				msg = msg[:70]
			}
			l.errs[m.name+": "+msg]++
		case writes:
			l.acks = append(l.acks, id)
		default:
			l.reads[m.name]++
		}
		l.mu.Unlock()
		time.Sleep(3 * time.Millisecond)
	}
}

func (l *ledger) finish() []int64 {
	close(l.stop)
	l.wg.Wait()
	return l.acks
}

// commitOrder is the sequence of committing nodes in commit-time order,
// each run of the same node counted once.
func commitOrder(t *testing.T, db *sql.DB) []string {
	t.Helper()
	rows, err := db.Query("SELECT node FROM app.ledger ORDER BY at, id")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var order []string
	for rows.Next() {
		var node string
		if err := rows.Scan(&node); err != nil {
			t.Fatal(err)
		}
		if len(order) == 0 || order[len(order)-1] != node {
			order = append(order, node)
		}
	}
	return order
}

// TestProxiesShareOneWriter runs three proxies over one cluster, each with
// its own etcd client, under write and read load through all three. The
// writer is killed (kill -9): all three move to the same new writer with
// the same epoch. Then the controller proxy and the new writer are killed
// together: another proxy becomes controller and completes the failover.
// Ordered by commit time, the committing node changes exactly once per
// writer change — never two writers at once — and every acknowledged
// write is on every surviving node.
func TestProxiesShareOneWriter(t *testing.T) {
	sb, store, ms := newControlRig(t, 3)
	w1, epoch1, _ := agreement(ms)
	if w1 != "node1" {
		t.Fatalf("writer %s, want node1 (equal discovered weights: first by name)", w1)
	}
	node1, err := sb.DB("node1")
	if err != nil {
		t.Fatal(err)
	}
	createLedger(t, node1)
	controllers := 0
	for _, m := range ms {
		if m.p.IsController() {
			controllers++
		}
	}
	if controllers != 1 {
		t.Fatalf("%d controllers, want exactly 1: %s", controllers, views(ms))
	}
	// Every writer the controller names, in order: the committing nodes
	// must follow this sequence, never alternate.
	var hmu sync.Mutex
	var published []string
	hctx, hcancel := context.WithCancel(context.Background())
	defer hcancel()
	go func() {
		for u := range store.WatchWriter(hctx) {
			hmu.Lock()
			if w := u.Decision.Writer; u.Present && w != "" && (len(published) == 0 || published[len(published)-1] != w) {
				published = append(published, w)
			}
			hmu.Unlock()
		}
	}()
	l := startLedger(ms, 2, 2)
	time.Sleep(time.Second)

	// 1. kill -9 of the writer.
	killed := time.Now()
	if err := sb.Kill("node1"); err != nil {
		t.Fatal(err)
	}
	at := waitFor(t, 20*time.Second, "all proxies on one new writer: "+views(ms), func() bool {
		w, e, ok := agreement(ms)
		return ok && w != "node1" && e > epoch1
	})
	node2, _ := sb.DB("node2")
	primary := waitPrimary(t, node2, 2, killed)
	w2, epoch2, _ := agreement(ms)
	t.Logf("FIGURE writer kill -9 -> all 3 proxies on %s (epoch %d): %d ms; Galera's new Primary view after %d ms",
		w2, epoch2, at.Sub(killed).Milliseconds(), primary.Milliseconds())
	time.Sleep(500 * time.Millisecond)

	// node1 comes back (as a reader: failback = never).
	if err := sb.StartNode(context.Background(), "node1"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 60*time.Second, "node1 ONLINE on every proxy", func() bool {
		for _, m := range ms {
			if !online(m.p, "node1") {
				return false
			}
		}
		return true
	})

	// 2. The controller and the writer die together. (The writer may
	// have moved meanwhile: node1 rejoined by state transfer, and a
	// donor is drained.)
	waitFor(t, 20*time.Second, "all proxies agree: "+views(ms), func() bool {
		_, _, ok := agreement(ms)
		return ok
	})
	w2, epoch2, _ = agreement(ms)
	var ctl *member
	var rest []*member
	for _, m := range ms {
		if m.p.IsController() {
			ctl = m
		} else {
			rest = append(rest, m)
		}
	}
	if ctl == nil {
		t.Fatalf("no controller: %s", views(ms))
	}
	killed = time.Now()
	ctl.kill()
	t.Logf("controller %s killed in %s", ctl.name, time.Since(killed))
	if err := sb.Kill(w2); err != nil {
		t.Fatal(err)
	}
	t.Logf("writer %s killed %s after the controller", w2, time.Since(killed))
	at = waitFor(t, 30*time.Second, "surviving proxies on one new writer: "+views(rest), func() bool {
		w, e, ok := agreement(rest)
		return ok && w != w2 && e > epoch2
	})
	w3, epoch3, _ := agreement(rest)
	newCtl := ""
	for _, m := range rest {
		if m.p.IsController() {
			newCtl = m.name
		}
	}
	if newCtl == "" {
		t.Errorf("no surviving proxy became controller: %s", views(rest))
	}
	t.Logf("FIGURE controller %s and writer %s killed together -> %s controller, both surviving proxies on %s (epoch %d): %d ms",
		ctl.name, w2, newCtl, w3, epoch3, at.Sub(killed).Milliseconds())
	time.Sleep(time.Second)
	acks := l.finish()

	l.mu.Lock()
	t.Logf("FIGURE acknowledged writes %d; reads by proxy %v; client errors %v", len(acks), l.reads, l.errs)
	l.mu.Unlock()
	survivor, _ := sb.DB(w3)
	order := commitOrder(t, survivor)
	hmu.Lock()
	if !subsequence(order, published) {
		t.Errorf("committing nodes in commit order %v do not follow the published writers %v: two writers overlapped", order, published)
	}
	t.Logf("committing nodes in commit order %v; published writers %v", order, published)
	hmu.Unlock()
	checkAcked(t, sb, []string{"node1", w3}, acks)
	// Operators see the same story in the admin table proxies.
	for _, m := range rest {
		var rows int
		for _, r := range m.p.ProxiesRows() {
			if r.Agrees {
				rows++
			}
		}
		if rows != len(rest) {
			t.Errorf("%s: %d of %d proxies agree in the proxies table", m.name, rows, len(rest))
		}
	}
}

// waitPrimary waits until db's node is in a Primary component of size.
func waitPrimary(t *testing.T, db *sql.DB, size int, since time.Time) time.Duration {
	t.Helper()
	for time.Since(since) < 30*time.Second {
		var k, n, status string
		_ = db.QueryRow("SHOW GLOBAL STATUS LIKE 'wsrep_cluster_size'").Scan(&k, &n)
		_ = db.QueryRow("SHOW GLOBAL STATUS LIKE 'wsrep_cluster_status'").Scan(&k, &status)
		if n == fmt.Sprint(size) && status == "Primary" {
			return time.Since(since)
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("no Primary component of %d", size)
	return 0
}

// subsequence says whether a appears in b in order (b may have more).
func subsequence(a, b []string) bool {
	i := 0
	for _, x := range b {
		if i < len(a) && a[i] == x {
			i++
		}
	}
	return i == len(a)
}

func readDecision(store *discovery.Store) (discovery.WriterDecision, bool, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	u, err := store.ReadDecision(ctx)
	return u.Decision, u.Present, err
}

// checkScaling grows the cluster by one node: every proxy routes to it as
// soon as its agent has registered it Synced. Then its agent dies (its link to etcd is severed, so
// its lease expires): the node stays in routing while it is healthy, and
// leaves every proxy's routing once its server is removed.
func checkScaling(t *testing.T, sb *sandbox.Sandbox, store *discovery.Store, ms []*member) {
	t.Helper()
	wctx, wcancel := context.WithCancel(context.Background())
	defer wcancel()
	watch := store.WatchNodes(wctx)
	actx, acancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer acancel()
	// The joiner's donors come from the control plane: never the writer.
	writer, epoch, _ := agreement(ms)
	sb.SetDonors(func(j sandbox.Node, seqno int64) []string {
		return lifecycle.SandboxDonors(actx, store, func(msg string) { t.Error(msg) })(j.Name, seqno)
	})
	n, err := sb.Add(actx)
	if err != nil {
		t.Fatal(err)
	}
	donor := regexp.MustCompile(`Selected \d+\.\d+ \(([^)]+)\)\(SYNCED\) as donor`).FindStringSubmatch(sb.LogTail(n.Name, 400))
	if donor == nil || donor[1] == writer {
		t.Errorf("%s's state transfer donor %v, want a node other than the writer %s", n.Name, donor, writer)
	} else {
		t.Logf("%s joined with %s as donor; the writer %s kept its role", n.Name, donor[1], writer)
	}
	if w, e, ok := agreement(ms); !ok || w != writer || e != epoch {
		t.Errorf("the writer moved while %s joined: %s", n.Name, views(ms))
	}
	own, sever := discoverytest.ConnectCuttable(t, store)
	runAgent(t, sb, own, n)
	discoverytest.WaitNodes(t, watch, 20*time.Second, n.Name+" registered Synced", func(ns discovery.NodeSet) bool { return ns.Nodes[n.Name].Synced })
	synced := time.Now()
	routed := waitFor(t, 10*time.Second, n.Name+" ONLINE on every proxy", func() bool {
		for _, m := range ms {
			if !online(m.p, n.Name) {
				return false
			}
		}
		return true
	})
	t.Logf("FIGURE new node registered Synced -> routed by all %d proxies: %d ms (monitor interval 200 ms, ok_checks 2)", len(ms), routed.Sub(synced).Milliseconds())
	// The agent dies: its registration lapses with its lease, but that
	// says nothing about the node, which stays routed while healthy.
	sever()
	discoverytest.WaitNodes(t, watch, 20*time.Second, n.Name+"'s registration lapsed", func(ns discovery.NodeSet) bool {
		_, ok := ns.Nodes[n.Name]
		return !ok
	})
	lapsed := time.Now()
	for time.Since(lapsed) < time.Second {
		for _, m := range ms {
			if !online(m.p, n.Name) {
				t.Fatalf("%s left routing on %s because its agent's lease lapsed, while it is healthy", n.Name, m.name)
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	// Its server stops: the proxies' own checks take it out.
	stopped := time.Now()
	if err := sb.Remove(actx, n.Name); err != nil {
		t.Fatal(err)
	}
	left := waitFor(t, 10*time.Second, n.Name+" out of routing on every proxy", func() bool {
		for _, m := range ms {
			if _, ok := m.p.View().Load().Server(n.Name); ok {
				return false
			}
		}
		return true
	})
	t.Logf("FIGURE unregistered %s stopped -> out of routing on all %d proxies: %d ms", n.Name, len(ms), left.Sub(stopped).Milliseconds())
	waitFor(t, 30*time.Second, "all proxies agree on a writer after scaling: "+views(ms), func() bool {
		_, _, ok := agreement(ms)
		return ok
	})
}

// checkAcked asserts that every acknowledged write is on each of nodes.
func checkAcked(t *testing.T, sb *sandbox.Sandbox, nodes []string, acks []int64) {
	t.Helper()
	dbs := map[string]*sql.DB{}
	for _, name := range nodes {
		db, err := sb.DB(name)
		if err != nil {
			t.Fatal(err)
		}
		dbs[name] = db
	}
	testkit.CheckLedger(t, dbs, acks)
}

// createLedger creates the table the ledger load writes, through db.
func createLedger(t *testing.T, db *sql.DB) {
	t.Helper()
	if _, err := db.Exec("CREATE TABLE app.ledger (id BIGINT AUTO_INCREMENT PRIMARY KEY, node VARCHAR(32), proxy VARCHAR(32), at DATETIME(6), KEY(at))"); err != nil {
		t.Fatal(err)
	}
}
