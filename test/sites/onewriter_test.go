package sites_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/galeon-db/galeon/internal/discovery"
	"github.com/galeon-db/galeon/internal/discovery/discoverytest"
	"github.com/galeon-db/galeon/internal/sandbox"
	"github.com/galeon-db/galeon/internal/sandbox/sandboxtest"
	"github.com/galeon-db/galeon/internal/testkit"
)

// TestOneWriterAcrossSites is issue 25's first repro with proxies inside
// two sites on one control plane (Debian's etcd on the sites' bridge, as
// `galeon sandbox up --dc` and `proxy-config --site` set up): with load
// through both, cut only the dc1↔dc2 link (Galera stays whole, relayed
// through the arbitrator's site) for 35 s, past the site hold-down, then heal; then cut dc2 from dc1 and
// from etcd too, so that dc2's proxy decides alone. Throughout, both
// proxies' writer is sampled every 100 ms and every committed row says
// which node ran it: writes never run on two nodes, no deadlock comes
// from galeon's routing, and a proxy cut off from the writer fails
// writes with an error that names the cut instead of choosing another.
func TestOneWriterAcrossSites(t *testing.T) {
	const spec = "dc1:1,dc2:1,dc3:garbd"
	base := sandboxtest.FreeBasePort(2)
	endpoint := sandbox.SiteDiscoveryEndpoint(base)
	sb := sandboxtest.New(t, sandbox.Options{BasePort: base, Sites: spec, Discovery: endpoint,
		Control: sandbox.Control{AgentBinary: galeonBin}})
	waitView(t, sb, "the cluster at start", allPrimary(sb, 3), time.Minute)
	host := strings.TrimPrefix(endpoint, "etcd://")
	h, port, _ := strings.Cut(host, ":")
	p, _ := strconv.Atoi(port)
	discoverytest.StartEtcdAt(t, [][2]string{{host, fmt.Sprintf("%s:%d", h, p+1)}})

	direct := sandboxtest.AppDB(t, sb, "dc1-1")
	createSiteLoadTables(t, direct)
	// dc2's proxy starts first: it is the likelier controller, the one
	// cut off from the writer.
	pb := sb.BasePort + 750
	dbs := map[string]*sql.DB{"dc2": siteProxyProcess(t, sb, "dc2", pb+10, "dc2", false), "dc1": siteProxyProcess(t, sb, "dc1", pb, "dc1", false)}
	l := startSiteLoad(t, dbs)
	setPhase, okOf, errOf, both := l.setPhase, l.ok, l.lastErr, l.both
	both("writes through both proxies before the cut")

	// 1. Only the dc1-dc2 link is cut: Galera relays through dc3.
	setPhase("link cut")
	if err := sb.Partition(context.Background(), "dc1", "dc2"); err != nil {
		t.Fatal(err)
	}
	cutAt := time.Now()
	var cutErr error
	testkit.WaitFor(t, 60*time.Second, "a write through the dc2 proxy failing with an error that names the cut", func() bool {
		cutErr = errOf("dc2")
		return cutErr != nil && strings.Contains(cutErr.Error(), "out of reach from this proxy")
	})
	t.Logf("FIGURE dc1<->dc2 cut: the dc2 proxy's writes fail with: %v", cutErr)
	store, err := discovery.Open(context.Background(), discovery.Config{Endpoints: endpoint, Cluster: sb.Name, DialTimeout: 2 * time.Second}, discoverytest.Quiet())
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	ctl, _ := store.Controller(context.Background())
	t.Logf("FIGURE the controller during the cut: %s (dc2's proxy listens on port %d: it is cut off from the writer)", ctl, pb+10)
	a := okOf("dc1")
	testkit.WaitFor(t, 30*time.Second, "writes through the dc1 proxy during the cut", func() bool { return okOf("dc1") > a+50 })
	// Past the 30 s site hold-down: nothing moves, during the cut or as
	// dc1-1 proves itself to dc2's proxy after heal.
	time.Sleep(time.Until(cutAt.Add(35 * time.Second))) // a duration of the scenario, not a readiness wait
	setPhase("after the link heals")
	if err := sb.Heal(context.Background()); err != nil {
		t.Fatal(err)
	}
	healed := time.Now()
	both("writes through both proxies after heal")
	t.Logf("FIGURE dc1<->dc2 heal: both proxies write again %.1f s after heal", time.Since(healed).Seconds())

	// 2. dc2 is cut from dc1 and from etcd: its proxy decides alone
	// (degraded) and must not choose dc2-1 while dc2-1 itself still
	// counts dc1-1 in the Primary component.
	setPhase("link and etcd cut")
	ns, _ := sb.SiteOf("dc2")
	etcdRule := []string{"OUTPUT", "-d", h, "-p", "tcp", "--dport", port, "-j", "DROP"}
	if out, err := exec.Command("ip", append([]string{"netns", "exec", ns.NS, "iptables", "-I"}, etcdRule...)...).CombinedOutput(); err != nil {
		t.Fatalf("cut dc2 from etcd: %v: %s", err, out)
	}
	t.Cleanup(func() {
		_ = exec.Command("ip", append([]string{"netns", "exec", ns.NS, "iptables", "-D"}, etcdRule...)...).Run()
	})
	if err := sb.Partition(context.Background(), "dc1", "dc2"); err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, 90*time.Second, "the dc2 proxy, deciding alone, refusing to choose a second writer", func() bool {
		cutErr = errOf("dc2")
		return cutErr != nil && strings.Contains(cutErr.Error(), "the control plane is unreachable") &&
			strings.Contains(cutErr.Error(), "writes wait rather than go to a second node")
	})
	t.Logf("FIGURE dc2 cut from dc1 and etcd: the dc2 proxy's writes fail with: %v", cutErr)
	b := okOf("dc2")
	a = okOf("dc1")
	testkit.WaitFor(t, 30*time.Second, "writes through the dc1 proxy while dc2 decides alone", func() bool { return okOf("dc1") > a+50 })
	if n := okOf("dc2"); n != b {
		t.Errorf("%d writes went through the dc2 proxy while it was cut from dc1-1 and from etcd", n-b)
	}
	setPhase("after everything heals")
	if out, err := exec.Command("ip", append([]string{"netns", "exec", ns.NS, "iptables", "-D"}, etcdRule...)...).CombinedOutput(); err != nil {
		t.Fatalf("restore dc2's etcd link: %v: %s", err, out)
	}
	if err := sb.Heal(context.Background()); err != nil {
		t.Fatal(err)
	}
	healed = time.Now()
	both("writes through both proxies after everything heals")
	t.Logf("FIGURE full heal: both proxies write again %.1f s after heal", time.Since(healed).Seconds())

	// 3. dc2 cut off from both other sites: its node leaves the Primary
	// component; dc1 writes on, dc2's proxy refuses writes, and nothing
	// moves the writer (dc2-1 is not fit, whoever is controller).
	setPhase("dc2 cut off")
	if err := sb.Partition(context.Background(), "dc2"); err != nil {
		t.Fatal(err)
	}
	cutAt = time.Now()
	a = okOf("dc1")
	testkit.WaitFor(t, 60*time.Second, "writes through the dc1 proxy with dc2 cut off", func() bool { return okOf("dc1") > a+50 })
	b = okOf("dc2")
	time.Sleep(time.Until(cutAt.Add(15 * time.Second))) // a duration of the scenario, not a readiness wait
	if n := okOf("dc2"); n > b {
		t.Errorf("%d writes went through the dc2 proxy while dc2 was cut off", n-b)
	}
	t.Logf("FIGURE dc2 cut off: the dc2 proxy's writes fail with: %v", errOf("dc2"))
	setPhase("after dc2 rejoins")
	if err := sb.Heal(context.Background()); err != nil {
		t.Fatal(err)
	}
	healed = time.Now()
	both("writes through both proxies after dc2 rejoins")
	t.Logf("FIGURE dc2 rejoins: both proxies write again %.1f s after heal", time.Since(healed).Seconds())
	l.finish(t, direct)
}

// TestStaticSiteProxiesKeepOneWriter is issue 25's repro as it was filed:
// a sandbox without a control plane (--discovery none) and one proxy per
// site from proxy-config --site, each deciding alone. Cut only dc1↔dc2
// for 40 s (past the site hold-down), heal, 10 s more: the dc2 proxy,
// which cannot reach dc1-1 while dc2-1 counts it in the Primary
// component, holds its writes instead of choosing dc2-1, so the split
// never starts.
func TestStaticSiteProxiesKeepOneWriter(t *testing.T) {
	sb := sandboxtest.New(t, sandbox.Options{Sites: "dc1:1,dc2:1,dc3:garbd"})
	waitView(t, sb, "the cluster at start", allPrimary(sb, 3), time.Minute)
	direct := sandboxtest.AppDB(t, sb, "dc1-1")
	createSiteLoadTables(t, direct)
	pb := sb.BasePort + 750
	dbs := map[string]*sql.DB{"dc1": siteProxyProcess(t, sb, "dc1", pb, "dc1", false), "dc2": siteProxyProcess(t, sb, "dc2", pb+10, "dc2", false)}
	l := startSiteLoad(t, dbs)
	l.both("writes through both proxies before the cut")
	l.setPhase("link cut")
	if err := sb.Partition(context.Background(), "dc1", "dc2"); err != nil {
		t.Fatal(err)
	}
	cutAt := time.Now()
	var cutErr error
	testkit.WaitFor(t, 60*time.Second, "a write through the dc2 proxy held with an error that names the cut", func() bool {
		cutErr = l.lastErr("dc2")
		return cutErr != nil && strings.Contains(cutErr.Error(), "writes wait rather than go to a second node")
	})
	t.Logf("FIGURE static proxies, dc1<->dc2 cut: the dc2 proxy's writes fail with: %v", cutErr)
	time.Sleep(time.Until(cutAt.Add(40 * time.Second))) // the repro's duration, past the 30 s hold-down
	l.setPhase("after the link heals")
	if err := sb.Heal(context.Background()); err != nil {
		t.Fatal(err)
	}
	healed := time.Now()
	l.both("writes through both proxies after heal")
	t.Logf("FIGURE static proxies, heal: both proxies write again %.1f s after heal", time.Since(healed).Seconds())
	time.Sleep(time.Until(healed.Add(10 * time.Second))) // writes after heal, for the split check
	l.finish(t, direct)
}

func createSiteLoadTables(t *testing.T, direct *sql.DB) {
	t.Helper()
	for _, q := range []string{"CREATE TABLE app.hot (id INT PRIMARY KEY, v INT)", "INSERT INTO app.hot VALUES (1, 0)",
		"CREATE TABLE app.ran (id INT AUTO_INCREMENT PRIMARY KEY, site VARCHAR(8), node VARCHAR(32), at DATETIME(6) DEFAULT NOW(6))"} {
		if _, err := direct.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
}

// siteLoad is a write load through the dc1 and dc2 proxies — each
// updates one hot row and logs the node that ran it — with both proxies'
// writer sampled every 100 ms, tallied by phase.
type siteLoad struct {
	t       *testing.T
	dbs     map[string]*sql.DB
	mu      sync.Mutex
	phase   string
	tallies map[string]*tally
	samples [][2]string
	stop    context.CancelFunc
	wg      sync.WaitGroup
}

type tally struct {
	ok, deadlocks int
	errs          map[string]int
	lastErr       error
	outage        map[string]time.Duration // longest run of failed writes, by the phase it began in
}

// writerOf is the node a proxy sends writes to now ("" with an error).
func writerOf(db *sql.DB) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	var n string
	err := db.QueryRowContext(ctx, "SELECT @@wsrep_node_name /* galeon:writer */").Scan(&n)
	return n, err
}

// startSiteLoad waits until both proxies write to dc1-1, then starts the
// load and the sampler.
func startSiteLoad(t *testing.T, dbs map[string]*sql.DB) *siteLoad {
	t.Helper()
	for site, db := range dbs {
		testkit.WaitFor(t, 60*time.Second, "the "+site+" proxy writing to dc1-1", func() bool {
			w, err := writerOf(db)
			return err == nil && w == "dc1-1"
		})
	}
	l := &siteLoad{t: t, dbs: dbs, phase: "before the cut", tallies: map[string]*tally{}}
	ctx, stop := context.WithCancel(context.Background())
	l.stop = stop
	t.Cleanup(func() { stop(); l.wg.Wait() })
	for site, db := range dbs {
		tl := &tally{errs: map[string]int{}, outage: map[string]time.Duration{}}
		l.tallies[site] = tl
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			var failingSince time.Time
			var failingIn string
			for i := 0; i < 200000 && ctx.Err() == nil; i++ {
				_, err := db.ExecContext(ctx, "UPDATE app.hot SET v = v + 1 WHERE id = 1")
				if err == nil {
					_, err = db.ExecContext(ctx, "INSERT INTO app.ran (site, node) VALUES (?, @@wsrep_node_name)", site)
				}
				if ctx.Err() != nil {
					return
				}
				l.mu.Lock()
				switch {
				case err == nil:
					tl.ok++
					if !failingSince.IsZero() {
						tl.outage[failingIn] = max(tl.outage[failingIn], time.Since(failingSince))
						failingSince = time.Time{}
					}
				default:
					var me *mysql.MySQLError
					if errors.As(err, &me) && me.Number == 1213 {
						tl.deadlocks++
					}
					tl.errs[l.phase]++
					tl.lastErr = err
					if failingSince.IsZero() {
						failingSince, failingIn = time.Now(), l.phase
					}
				}
				l.mu.Unlock()
				if err != nil {
					time.Sleep(50 * time.Millisecond)
				}
			}
		}()
	}
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for ctx.Err() == nil {
			var s [2]string
			for i, site := range []string{"dc1", "dc2"} {
				s[i], _ = writerOf(dbs[site])
			}
			l.mu.Lock()
			l.samples = append(l.samples, s)
			l.mu.Unlock()
			select {
			case <-ctx.Done():
			case <-tick.C:
			}
		}
	}()
	return l
}

func (l *siteLoad) setPhase(p string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.phase = p
}

func (l *siteLoad) ok(site string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.tallies[site].ok
}

func (l *siteLoad) lastErr(site string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.tallies[site].lastErr
}

// both waits until writes go through both proxies again.
func (l *siteLoad) both(what string) {
	l.t.Helper()
	a, b := l.ok("dc1"), l.ok("dc2")
	testkit.WaitFor(l.t, 60*time.Second, what, func() bool { return l.ok("dc1") > a+20 && l.ok("dc2") > b+20 })
}

// finish stops the load and checks that there never were two writers:
// no sample shows the proxies on two nodes, every committed row ran on
// one node, no deadlock; and reports the figures.
func (l *siteLoad) finish(t *testing.T, direct *sql.DB) {
	t.Helper()
	l.stop()
	l.wg.Wait()
	split := 0
	for _, s := range l.samples {
		if s[0] != "" && s[1] != "" && s[0] != s[1] {
			split++
		}
	}
	if split > 0 {
		t.Errorf("%d of %d samples (100 ms apart) show the two proxies writing to two nodes", split, len(l.samples))
	}
	rows, err := direct.Query("SELECT node, site, COUNT(*) FROM app.ran GROUP BY node, site")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	nodes := map[string]bool{}
	for rows.Next() {
		var node, site string
		var n int
		if err := rows.Scan(&node, &site, &n); err != nil {
			t.Fatal(err)
		}
		nodes[node] = true
		t.Logf("FIGURE rows committed on %s through the %s proxy: %d", node, site, n)
	}
	if len(nodes) != 1 {
		t.Errorf("rows committed on %d nodes (%v): writes ran on more than one node", len(nodes), nodes)
	}
	for site, tl := range l.tallies {
		if tl.deadlocks > 0 {
			t.Errorf("%d deadlocks (1213) through the %s proxy: two nodes took writes", tl.deadlocks, site)
		}
		outages := map[string]string{}
		for ph, d := range tl.outage {
			outages[ph] = fmt.Sprintf("%.1fs", d.Seconds())
		}
		t.Logf("FIGURE %s proxy: %d writes, errors by phase %v, longest write outage by phase %v, %d samples", site, tl.ok, tl.errs, outages, len(l.samples))
	}
}
