package sites_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/galeon-db/galeon/internal/mysqlproto"
	"github.com/galeon-db/galeon/internal/quorum"
	"github.com/galeon-db/galeon/internal/sandbox"
	"github.com/galeon-db/galeon/internal/sandbox/sandboxtest"
	"github.com/galeon-db/galeon/internal/testkit"
)

// siteProxyProcess runs `galeon proxy` inside a site's network namespace,
// as a proxy on an application host of that site runs: it reaches the
// other sites only across the (delayed, cuttable) links between sites.
// The test, in the host's namespace, reaches it on the site's address.
// It returns a pool of app connections through it.
func siteProxyProcess(t *testing.T, sb *sandbox.Sandbox, site string, port int, home string, stale bool) *sql.DB {
	t.Helper()
	ns, ok := sb.SiteOf(site)
	if !ok {
		t.Fatalf("no site %s", site)
	}
	dir := t.TempDir()
	listen := fmt.Sprintf("%s:%d", ns.IP, port)
	conf := sb.ProxyConfig(sandbox.ProxyOptions{Listen: listen, AdminListen: fmt.Sprintf("127.0.0.1:%d", port+1),
		HTTPListen: fmt.Sprintf("127.0.0.1:%d", port+2), Site: home, StaleReads: stale})
	path := filepath.Join(dir, "galeon.toml")
	if err := os.WriteFile(path, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	logPath := filepath.Join(dir, "galeon.log")
	out, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	cmd := exec.Command(galeonBin, "proxy", "--config", path)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := ns.Start(cmd); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		if t.Failed() {
			b, _ := os.ReadFile(logPath)
			t.Logf("proxy in %s (%s) log:\n%s", site, listen, tail(string(b), 40))
		}
	})
	db := appThrough(t, sb, listen)
	testkit.WaitFor(t, 60*time.Second, "the proxy in "+site+" answering", func() bool {
		var one int
		return db.QueryRow("SELECT 1").Scan(&one) == nil
	})
	return db
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// read is one read through a proxy: the node that answered, how long it
// took, and the rows of app.cut it saw.
type read struct {
	node string
	took time.Duration
	rows int
	err  error
}

func readOnce(db *sql.DB) read {
	start := time.Now()
	var r read
	r.err = db.QueryRow("SELECT @@wsrep_node_name, (SELECT COUNT(*) FROM app.cut)").Scan(&r.node, &r.rows)
	r.took = time.Since(start)
	return r
}

// p50 is the median of ds (0 for none).
func p50(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// TestProxiesInSites runs galeon proxies inside the sites' namespaces
// with 30 ms between sites: reads through a proxy at home in dc1 stay in
// dc1 (and what a site-unaware proxy pays for crossing is measured);
// when dc2 is cut off, a proxy in dc2 fails reads with an error that
// says why, unless it allows stale reads, and then serves dc2's data as
// of the cut; after heal both read fresh data in dc2 again.
func TestProxiesInSites(t *testing.T) {
	const spec, rtt = "dc1:2,dc2:2,dc3:garbd", 30 * time.Millisecond
	sb := sandboxtest.New(t, sandbox.Options{Sites: spec, Control: sandbox.Control{AgentBinary: galeonBin}})
	waitView(t, sb, "the cluster at start", allPrimary(sb, 5), time.Minute)
	direct := sandboxtest.AppDB(t, sb, sb.Nodes[0].Name)
	if _, err := direct.Exec("CREATE TABLE app.cut (id INT PRIMARY KEY)"); err != nil {
		t.Fatal(err)
	}
	base := sb.BasePort + 700
	home1 := siteProxyProcess(t, sb, "dc1", base, "dc1", false)
	anywhere := siteProxyProcess(t, sb, "dc1", base+10, "", false)
	home2 := siteProxyProcess(t, sb, "dc2", base+20, "dc2", false)
	stale2 := siteProxyProcess(t, sb, "dc2", base+30, "dc2", true)
	// A proxy that learns where it runs: proxy.site = "auto".
	auto2 := siteProxyProcess(t, sb, "dc2", base+40, "auto", false)
	if err := sb.SetDelay(context.Background(), "", rtt/2); err != nil {
		t.Fatal(err)
	}
	t.Logf("FIGURE commit p50 on dc1-1, %s with segments, %s between sites: %.1f ms", spec, rtt, ms(commitP50(t, direct, 40)))
	links, err := sb.Links(context.Background(), 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range links {
		if l.Err != "" || l.RTT < rtt {
			t.Errorf("link %s-%s: rtt %s (%s), want at least %s", l.A, l.B, l.RTT, l.Err, rtt)
		}
		t.Logf("FIGURE link %s-%s: TCP connect round trip %.1f ms with %s configured", l.A, l.B, ms(l.RTT), rtt)
	}

	siteOf := map[string]string{}
	for _, n := range sb.Nodes {
		siteOf[n.Name] = n.Site
	}
	// reads sends n reads through db after warming its pool, and returns
	// their latencies by the site that answered.
	reads := func(what string, db *sql.DB, n int) map[string][]time.Duration {
		for range 30 {
			readOnce(db) // connections to every node, opened before timing
		}
		by := map[string][]time.Duration{}
		for range n {
			r := readOnce(db)
			if r.err != nil {
				t.Fatalf("%s: %v", what, r.err)
			}
			by[siteOf[r.node]] = append(by[siteOf[r.node]], r.took)
		}
		return by
	}
	local := reads("reads through the dc1 proxy", home1, 200)
	if len(local) != 1 || len(local["dc1"]) != 200 {
		t.Fatalf("a proxy at home in dc1 sent reads out of dc1: %d in dc1, %d in dc2", len(local["dc1"]), len(local["dc2"]))
	}
	spread := reads("reads through the site-unaware proxy", anywhere, 300)
	if len(spread["dc2"]) == 0 {
		t.Fatalf("the site-unaware proxy never read from dc2 (%d reads in dc1): the comparison needs both", len(spread["dc1"]))
	}
	if p := p50(spread["dc2"]); p < rtt {
		t.Errorf("reads across sites took %s at p50, less than the %s round trip: the delay is not in place", p, rtt)
	}
	t.Logf("FIGURE read p50 through a proxy in dc1, %s between sites: at home in dc1 %.2f ms (200 of 200 reads in dc1); site-unaware %.2f ms in dc1 and %.2f ms across to dc2 (%d of 300 reads crossed)",
		rtt, ms(p50(local["dc1"])), ms(p50(spread["dc1"])), ms(p50(spread["dc2"])), len(spread["dc2"]))
	if got := reads("reads through the dc2 proxy", home2, 50); len(got["dc2"]) != 50 {
		t.Fatalf("a proxy at home in dc2 read outside dc2: %d of 50 in dc2", len(got["dc2"]))
	}
	// It may have learnt before the delay went in (nodes in its own
	// namespace answer faster even then), or after.
	testkit.WaitFor(t, 30*time.Second, "the auto proxy in dc2 reading only in dc2", func() bool {
		got := reads("reads through the auto proxy", auto2, 50)
		return len(got["dc2"]) == 50
	})
	t.Logf("FIGURE proxy.site = auto in dc2: 50 of 50 reads in dc2")

	// Cut dc2 off. What the planner predicts for the nodes holds first;
	// the proxies in dc2 then see dc2 non-Primary and dc1 unreachable.
	before := readOnce(stale2)
	if before.err != nil {
		t.Fatal(before.err)
	}
	l, _ := quorum.ParseLayout(spec)
	cutOff := quorum.Failure{Kind: quorum.SiteCut, Site: "dc2"}
	ctx := context.Background()
	if err := sb.Partition(ctx, "dc2"); err != nil {
		t.Fatal(err)
	}
	waitView(t, sb, cutOff.String(), expected(quorum.Predict(l, cutOff), sb), 90*time.Second)
	held := time.Now()
	if links, err = sb.Links(ctx, time.Second); err != nil {
		t.Fatal(err)
	}
	for _, l := range links {
		if cut := l.A == "dc2" || l.B == "dc2"; cut != (l.Err != "") {
			t.Errorf("link %s-%s with dc2 cut off: rtt %s, error %q", l.A, l.B, l.RTT, l.Err)
		}
	}
	if _, err := direct.Exec("INSERT INTO app.cut VALUES (1)"); err != nil {
		t.Fatalf("a write in dc1 with dc2 cut off: %v", err)
	}
	var refused error
	testkit.WaitFor(t, 60*time.Second, "reads through the dc2 proxy refused (no stale reads)", func() bool {
		r := readOnce(home2)
		refused = r.err
		return r.err != nil && strings.Contains(r.err.Error(), "galera.stale_reads")
	})
	var me *mysql.MySQLError
	// A node of the cut-off site answers 1047 to every statement: so
	// does galeon, with its explanation.
	if !errors.As(refused, &me) || me.Number != uint16(mysqlproto.ErUnknownComError) || !strings.Contains(refused.Error(), "no node is in a Primary component") {
		t.Errorf("the refused read's error is %v, want the nodes' own %d saying no node is in a Primary component", refused, mysqlproto.ErUnknownComError)
	}
	t.Logf("FIGURE dc2 cut off, proxy in dc2 without stale reads: %v", refused)
	var r read
	took := testkit.WaitFor(t, 60*time.Second, "stale reads through the dc2 proxy", func() bool {
		r = readOnce(stale2)
		return r.err == nil && siteOf[r.node] == "dc2"
	})
	if r.rows != before.rows {
		t.Errorf("a stale read in dc2 saw %d rows of app.cut, want %d (the data as of the cut)", r.rows, before.rows)
	}
	if _, err := stale2.Exec("INSERT INTO app.cut VALUES (2)"); err == nil {
		t.Error("a write through the dc2 proxy succeeded while dc2 is cut off")
	} else {
		t.Logf("FIGURE dc2 cut off, proxy in dc2 with stale reads: reads from %s (%d rows, as of the cut), %.1f s after the prediction held; a write: %v", r.node, r.rows, took.Sub(held).Seconds(), err)
	}

	if err := sb.Heal(ctx); err != nil {
		t.Fatal(err)
	}
	healed := time.Now()
	waitView(t, sb, "after heal", allPrimary(sb, 5), 2*time.Minute)
	for what, db := range map[string]*sql.DB{"the dc2 proxy": home2, "the dc2 proxy with stale reads": stale2} {
		testkit.WaitFor(t, 60*time.Second, what+" reading fresh data in dc2 after heal", func() bool {
			r := readOnce(db)
			return r.err == nil && siteOf[r.node] == "dc2" && r.rows == before.rows+1
		})
	}
	t.Logf("FIGURE heal: both dc2 proxies read the row written in dc1 during the cut, from dc2, %.1f s after heal", time.Since(healed).Seconds())
}
