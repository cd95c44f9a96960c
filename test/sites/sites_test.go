// Package sites_test runs multi-site sandboxes (each site in its own
// network namespace, real garbd) and checks that what `galeon plan`
// predicts for a partition is what Galera does.
package sites_test

import (
	"context"
	"database/sql"
	"fmt"
	"os/exec"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/galeon-db/galeon/internal/config"
	galeonproxy "github.com/galeon-db/galeon/internal/proxy"
	"github.com/galeon-db/galeon/internal/proxy/proxytest"
	"github.com/galeon-db/galeon/internal/quorum"
	"github.com/galeon-db/galeon/internal/sandbox"
	"github.com/galeon-db/galeon/internal/sandbox/sandboxtest"
)

// view is what one data node says about its component.
type view struct {
	status string // Primary, non-Primary, or the error
	size   string
	state  string
}

func observe(t *testing.T, sb *sandbox.Sandbox) map[string]view {
	t.Helper()
	out := map[string]view{}
	for _, n := range sb.Nodes {
		db, err := sb.DB(n.Name)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		rows, err := db.QueryContext(ctx, "SHOW STATUS WHERE Variable_name IN ('wsrep_cluster_status', 'wsrep_cluster_size', 'wsrep_local_state_comment')")
		v := view{}
		if err != nil {
			v.status = err.Error()
		} else {
			for rows.Next() {
				var k, val string
				_ = rows.Scan(&k, &val)
				switch k {
				case "wsrep_cluster_status":
					v.status = val
				case "wsrep_cluster_size":
					v.size = val
				case "wsrep_local_state_comment":
					v.state = val
				}
			}
			rows.Close()
		}
		cancel()
		out[n.Name] = v
	}
	return out
}

// expected turns a prediction into what each data node should report:
// Primary with the size of its component, or non-Primary.
func expected(o quorum.Outcome, sb *sandbox.Sandbox) map[string]view {
	want := map[string]view{}
	for _, c := range o.Components {
		for _, m := range c.Members {
			if !slices.ContainsFunc(sb.Nodes, func(n sandbox.Node) bool { return n.Name == m }) {
				continue // an arbitrator: nothing to ask
			}
			if c.Primary {
				want[m] = view{status: "Primary", size: fmt.Sprint(len(c.Members))}
			} else {
				want[m] = view{status: "non-Primary"}
			}
		}
	}
	return want
}

// primaryData is the data nodes of sb among members, sorted.
func primaryData(members []string, sb *sandbox.Sandbox) []string {
	var out []string
	for _, m := range members {
		if slices.ContainsFunc(sb.Nodes, func(n sandbox.Node) bool { return n.Name == m }) {
			out = append(out, m)
		}
	}
	sort.Strings(out)
	return out
}

// primaryNodes is the nodes that say they are Primary, sorted.
func primaryNodes(m map[string]view) []string {
	var out []string
	for n, v := range m {
		if v.status == "Primary" {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}

func matches(got, want map[string]view) bool {
	for n, w := range want {
		g := got[n]
		if g.status != w.status || w.size != "" && g.size != w.size {
			return false
		}
	}
	return true
}

func render(m map[string]view) string {
	var names []string
	for n := range m {
		names = append(names, n)
	}
	sort.Strings(names)
	var parts []string
	for _, n := range names {
		v := m[n]
		s := n + "=" + v.status
		if v.size != "" {
			s += "/" + v.size
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, " ")
}

// waitView waits until the sandbox reports want, and returns how long it
// took.
func waitView(t *testing.T, sb *sandbox.Sandbox, what string, want map[string]view, limit time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	var got map[string]view
	for time.Since(start) < limit {
		if got = observe(t, sb); matches(got, want) {
			return time.Since(start)
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("%s: after %s the nodes say\n  %s\nwant\n  %s", what, limit, render(got), render(want))
	return 0
}

// settle waits until the sandbox has reported want for hold without a
// break, within limit, and returns how long after the start the last
// observation that did not match was (0 if every one matched).
func settle(t *testing.T, sb *sandbox.Sandbox, what string, want map[string]view, hold, limit time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	var lastBad time.Duration
	var got map[string]view
	for time.Since(start) < limit {
		if got = observe(t, sb); !matches(got, want) {
			lastBad = time.Since(start)
		} else if time.Since(start)-lastBad >= hold {
			return lastBad
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("%s: never held for %s within %s; the nodes say\n  %s\nwant\n  %s", what, hold, limit, render(got), render(want))
	return 0
}

func allPrimary(sb *sandbox.Sandbox, size int) map[string]view {
	want := map[string]view{}
	for _, n := range sb.Nodes {
		want[n.Name] = view{status: "Primary", size: fmt.Sprint(size)}
	}
	return want
}

// scenario is one failure to inflict, as the planner names it; reads,
// if set, are the nodes a proxy at home in the first site may then read
// from.
type scenario struct {
	failure quorum.Failure
	apply   func(ctx context.Context) error
	reads   []string
	// writer, if set, are the nodes the proxy's writer may then be;
	// held says the role left its site, so the hold-down applied.
	writer []string
	held   bool
}

// holdDown is the site hold-down of the test proxy: long enough to tell
// from the seconds a partition takes to be seen, short for a test.
const holdDown = 8 * time.Second

// siteProxy starts a Galera-aware proxy whose home site is home, over
// every node of sb with its site, and returns a pool of app connections
// through it.
func siteProxy(t *testing.T, sb *sandbox.Sandbox, home string) (*sql.DB, *galeonproxy.Proxy) {
	t.Helper()
	cfg := config.Defaults()
	c := sb.Credentials
	cfg.Proxy.Site = home
	cfg.Galera.WriterSite, cfg.Galera.SiteHoldDown = home, config.Duration(holdDown)
	cfg.Users = []config.User{{Name: c.AppUser, Password: c.AppPassword}}
	cfg.Galera.MonitorUser, cfg.Galera.MonitorPassword = c.MonitorUser, c.MonitorPassword
	for i, n := range sb.Nodes {
		cfg.Servers = append(cfg.Servers, config.Server{Name: n.Name, Address: n.Addr(), Site: n.Site,
			WriterWeight: 100 - 10*i, ReaderWeight: 100})
	}
	p, addr := proxytest.Start(t, &cfg, nil)
	return appThrough(t, sb, addr), p
}

// appThrough is a pool of the sandbox's app connections to addr (a
// proxy), closed when the test ends.
func appThrough(t *testing.T, sb *sandbox.Sandbox, addr string) *sql.DB {
	t.Helper()
	c := sb.Credentials
	mc := mysql.NewConfig()
	mc.User, mc.Passwd, mc.Net, mc.Addr = c.AppUser, c.AppPassword, "tcp", addr
	mc.Timeout, mc.ReadTimeout = 5*time.Second, 15*time.Second
	db, err := sql.Open("mysql", mc.FormatDSN())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// writerIn waits until the proxy's writer is one of want and returns
// when it was seen there.
func writerIn(t *testing.T, p *galeonproxy.Proxy, what string, want []string) time.Time {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for {
		w, ok := p.View().Load().Writer()
		if ok && slices.Contains(want, w.Name) {
			return time.Now()
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: the proxy's writer is %q after 90 s, want one of %v", what, w.Name, want)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// readsGoTo sends reads through the proxy until every one of 50 in a row
// lands on a node in want, and returns how long that took.
func readsGoTo(t *testing.T, db *sql.DB, what string, want []string) time.Duration {
	t.Helper()
	start := time.Now()
	seen := map[string]int{}
	for time.Since(start) < 60*time.Second {
		seen = map[string]int{}
		ok := true
		for range 50 {
			var node string
			if err := db.QueryRow("SELECT @@wsrep_node_name").Scan(&node); err != nil {
				seen["error: "+err.Error()]++
				ok = false
				continue
			}
			seen[node]++
			ok = ok && slices.Contains(want, node)
		}
		if ok {
			return time.Since(start)
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("%s: reads still went to %v after 60 s, want only %v", what, seen, want)
	return 0
}

// checkPlan inflicts each failure on the sandbox built from spec, and
// checks that the nodes end up as the planner predicts, then heals and
// checks the cluster is whole again.
func checkPlan(t *testing.T, spec string, scenarios func(sb *sandbox.Sandbox) []scenario) {
	sb := sandboxtest.New(t, sandbox.Options{Sites: spec})
	text := spec
	spec = oneLine(spec) // for the log
	var proxy *sql.DB
	var gp *galeonproxy.Proxy
	home := sb.Nodes[0].Site
	// local is where reads belong: the home site's nodes but the writer
	// (writer_is_also_reader = when_no_other_reader).
	local := func() []string {
		w, _ := gp.View().Load().Writer()
		var out []string
		for _, n := range sb.Nodes {
			if n.Site == home && n.Name != w.Name {
				out = append(out, n.Name)
			}
		}
		return out
	}
	for _, sc := range scenarios(sb) {
		if sc.reads != nil && proxy == nil {
			proxy, gp = siteProxy(t, sb, home)
		}
	}
	l, err := quorum.ParseLayoutText(text)
	if err != nil {
		t.Fatal(err)
	}
	members := len(l.Members)
	ctx := context.Background()
	waitView(t, sb, "the cluster at start", allPrimary(sb, members), time.Minute)
	for _, n := range sb.Nodes {
		db, _ := sb.DB(n.Name)
		var name, opts string
		if err := db.QueryRow("SHOW VARIABLES LIKE 'wsrep_provider_options'").Scan(&name, &opts); err != nil {
			t.Fatal(err)
		}
		if want := fmt.Sprintf("gmcast.segment = %d;", n.Segment); !strings.Contains(opts, want) {
			t.Errorf("%s (site %s) runs without %q", n.Name, n.Site, want)
		}
	}
	if proxy != nil {
		writerIn(t, gp, "the writer at start", []string{sb.Nodes[0].Name})
		readsGoTo(t, proxy, "reads at start, home site "+home, local())
	}
	plan := quorum.Plan(l)
	for _, sc := range scenarios(sb) {
		// The row `galeon plan` prints for this failure, not just what
		// Predict says when asked.
		o, ok := plan.Find(sc.failure)
		if !ok {
			t.Fatalf("%s: the plan has no row for %s", spec, sc.failure)
		}
		row := o.Row()
		want := expected(o, sb)
		t.Logf("%s: the plan prints %q, i.e. %s", spec, strings.Join(strings.Fields(row.String()), " "), render(want))
		cutAt := time.Now()
		if err := sc.apply(ctx); err != nil {
			t.Fatal(err)
		}
		if o.Relay != "" {
			// Galera first splits (the direct link is suspected), then
			// gmcast relays through the third site and the whole
			// cluster forms again: watch for the split to end and the
			// whole cluster to hold.
			cut := time.Now()
			pause := settle(t, sb, sc.failure.String(), want, 15*time.Second, 90*time.Second)
			t.Logf("FIGURE %s %s: split first (last seen %.1f s after the cut), then whole again through %s and held for 15 s (%.0f s watched)",
				spec, sc.failure, pause.Seconds(), o.Relay, time.Since(cut).Seconds())
		} else {
			took := waitView(t, sb, sc.failure.String(), want, 90*time.Second)
			t.Logf("FIGURE %s %s: as predicted %.1f s after the cut (%s)", spec, sc.failure, took.Seconds(), render(observe(t, sb)))
		}
		// The data nodes the row names as Primary are the ones that say
		// Primary, no more and no fewer.
		predicted, actual := primaryData(row.Primary, sb), primaryNodes(observe(t, sb))
		if strings.Join(predicted, " ") != strings.Join(actual, " ") {
			t.Errorf("%s %s: the plan's row names Primary %v, the sandbox shows %v", spec, sc.failure, predicted, actual)
		}
		t.Logf("FIGURE %s %s: predicted Primary %v (writes %s), actual Primary %v", spec, sc.failure, predicted, row.Writes, actual)
		if sc.writer != nil {
			moved := writerIn(t, gp, sc.failure.String(), sc.writer)
			w, _ := gp.View().Load().Writer()
			if sc.held && moved.Sub(cutAt) < holdDown {
				t.Errorf("%s: the writer left its site %.1f s after the cut, before the %s hold-down", sc.failure, moved.Sub(cutAt).Seconds(), holdDown)
			}
			t.Logf("FIGURE %s %s: the proxy's writer is %s, %.1f s after the cut (site hold-down %s)", spec, sc.failure, w.Name, moved.Sub(cutAt).Seconds(), holdDown)
		}
		if sc.reads != nil {
			took := readsGoTo(t, proxy, "reads after "+sc.failure.String(), sc.reads)
			t.Logf("FIGURE %s %s: reads through the %s proxy on %v within %.1f s of the prediction holding", spec, sc.failure, sb.Nodes[0].Site, sc.reads, took.Seconds())
		}
		if err := sb.Heal(ctx); err != nil {
			t.Fatal(err)
		}
		healed := time.Now()
		waitView(t, sb, "after heal", allPrimary(sb, members), 2*time.Minute)
		synced := func() bool {
			for _, v := range observe(t, sb) {
				if v.state != "Synced" {
					return false
				}
			}
			return true
		}
		for !synced() {
			if time.Since(healed) > 2*time.Minute {
				t.Fatalf("not every node Synced 2 min after heal: %s", render(observe(t, sb)))
			}
			time.Sleep(200 * time.Millisecond)
		}
		t.Logf("FIGURE %s heal after %s: all %d members Primary and Synced in %.1f s", spec, sc.failure, members, time.Since(healed).Seconds())
		if proxy != nil {
			// After a move to another site the writer stays there
			// (failback = never): reads use every home node then.
			took := readsGoTo(t, proxy, "reads after heal", local())
			t.Logf("FIGURE %s heal after %s: reads back in the home site %.1f s after every node is Synced", spec, sc.failure, took.Seconds())
		}
	}
}

// oneLine shows a layout file's text on one line: its lines joined with
// "; ", comments dropped.
func oneLine(text string) string {
	var parts []string
	for _, line := range strings.Split(text, "\n") {
		line, _, _ = strings.Cut(line, "#")
		if line = strings.TrimSpace(line); line != "" {
			parts = append(parts, line)
		}
	}
	return strings.Join(parts, "; ")
}

// TestTwoSitesAndAnArbitrator is the layout Galera's documentation
// recommends: losing a whole site, or the link between the two data
// sites, leaves a Primary component.
func TestTwoSitesAndAnArbitrator(t *testing.T) {
	checkPlan(t, "dc1:2,dc2:2,dc3:garbd", func(sb *sandbox.Sandbox) []scenario {
		return []scenario{
			// The proxy is at home in dc1 (its writer dc1-1, its reader
			// dc1-2): losing dc2 changes nothing for it; losing dc1 sends
			// reads to dc2, the only site left.
			{quorum.Failure{Kind: quorum.SiteCut, Site: "dc2"}, func(ctx context.Context) error { return sb.Partition(ctx, "dc2") },
				[]string{"dc1-2"}, []string{"dc1-1"}, false},
			{quorum.Failure{Kind: quorum.SiteCut, Site: "dc1"}, func(ctx context.Context) error { return sb.Partition(ctx, "dc1") },
				[]string{"dc2-1", "dc2-2"}, []string{"dc2-1", "dc2-2"}, true},
			{quorum.Failure{Kind: quorum.LinkCut, A: "dc1", B: "dc2"}, func(ctx context.Context) error { return sb.Partition(ctx, "dc1", "dc2") }, nil, nil, false},
		}
	})
}

// TestTwoSitesWithoutArbitrator is the mistake the planner warns about: a
// cut between two equal sites stops writes on both sides.
func TestTwoSitesWithoutArbitrator(t *testing.T) {
	checkPlan(t, "dc1:2,dc2:2", func(sb *sandbox.Sandbox) []scenario {
		return []scenario{
			{quorum.Failure{Kind: quorum.LinkCut, A: "dc1", B: "dc2"}, func(ctx context.Context) error { return sb.Partition(ctx, "dc1", "dc2") }, nil, nil, false},
		}
	})
}

// TestThreeSitesWithoutAMajoritySite: dc1 holds exactly half the votes,
// so cutting it off stops writes everywhere (the planner's warning),
// while cutting off a one-node site does not.
func TestThreeSitesWithoutAMajoritySite(t *testing.T) {
	checkPlan(t, "dc1:2,dc2:1,dc3:1", func(sb *sandbox.Sandbox) []scenario {
		return []scenario{
			{quorum.Failure{Kind: quorum.SiteCut, Site: "dc1"}, func(ctx context.Context) error { return sb.Partition(ctx, "dc1") }, nil, nil, false},
			{quorum.Failure{Kind: quorum.SiteCut, Site: "dc3"}, func(ctx context.Context) error { return sb.Partition(ctx, "dc3") }, nil, nil, false},
		}
	})
}

// TestMajoritySiteCutOff: a site with the majority of the votes, cut off
// from the others, keeps running as the Primary component (the plan's
// "cut off site dc1: ok" row), unlike the same site lost ("lose site dc1:
// STOP"); the minority site cut off stops alone.
func TestMajoritySiteCutOff(t *testing.T) {
	checkPlan(t, "dc1:2,dc2:1", func(sb *sandbox.Sandbox) []scenario {
		return []scenario{
			{quorum.Failure{Kind: quorum.SiteCut, Site: "dc1"}, func(ctx context.Context) error { return sb.Partition(ctx, "dc1") }, nil, nil, false},
			{quorum.Failure{Kind: quorum.SiteCut, Site: "dc2"}, func(ctx context.Context) error { return sb.Partition(ctx, "dc2") }, nil, nil, false},
		}
	})
}

// TestMoreLayoutsMatchThePlan: an odd split between two sites, one node
// per site, and a data site (not an arbitrator) relaying.
func TestMoreLayoutsMatchThePlan(t *testing.T) {
	for _, tc := range []struct {
		spec string
		f    quorum.Failure
		cut  []string // partition arguments: SITE [FROM...]
	}{
		{"dc1:3,dc2:2", quorum.Failure{Kind: quorum.LinkCut, A: "dc1", B: "dc2"}, []string{"dc1", "dc2"}},
		{"dc1:1,dc2:1,dc3:1", quorum.Failure{Kind: quorum.SiteCut, Site: "dc1"}, []string{"dc1"}},
		{"dc1:2,dc2:2,dc3:1", quorum.Failure{Kind: quorum.LinkCut, A: "dc1", B: "dc2"}, []string{"dc1", "dc2"}},
		// Weighted quorum, from a layout file: two equal sites, but dc1-1
		// votes twice, so dc1 keeps 3 of 5 votes when the link fails.
		{"# two sites, dc1 decides\ndc1:2\ndc2:2\nweight dc1-1=2\n", quorum.Failure{Kind: quorum.LinkCut, A: "dc1", B: "dc2"}, []string{"dc1", "dc2"}},
	} {
		t.Run(oneLine(tc.spec), func(t *testing.T) {
			checkPlan(t, tc.spec, func(sb *sandbox.Sandbox) []scenario {
				return []scenario{{tc.f, func(ctx context.Context) error { return sb.Partition(ctx, tc.cut[0], tc.cut[1:]...) }, nil, nil, false}}
			})
		})
	}
}

// TestSandboxLeavesNoNetworkBehind checks that destroying a multi-site
// sandbox removes its namespaces and bridge, and that bad layouts are
// refused before anything is created.
func TestSandboxLeavesNoNetworkBehind(t *testing.T) {
	for spec, want := range map[string]string{
		"dc1:0":       "at least one node",
		"dc1:2,dc1:1": "listed twice",
		"dc1:garbd":   "no data node",
		"dc1:x":       "node count",
	} {
		_, err := sandbox.Up(context.Background(), sandbox.Options{Name: "badlayout", Dir: "/var/tmp/galeon-test/badlayout", Sites: spec, BasePort: sandboxtest.FreeBasePort(3)})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("--dc %s: %v, want an error with %q", spec, err, want)
		}
	}
	out, _ := exec.Command("ip", "netns", "list").Output()
	if strings.Contains(string(out), "galeon-badlayout") {
		t.Errorf("a refused layout left a namespace: %s", out)
	}
	sb := sandboxtest.New(t, sandbox.Options{Sites: "dc1:1,dc2:1,dc3:garbd"})
	ns, bridge := sb.Net.Sites[0].NS, sb.Net.Bridge
	// A second sandbox whose subnet would be the first one's is refused
	// before anything is made, and the first keeps its network.
	clash := sb.BasePort + 20000
	if clash > 60000 {
		clash = sb.BasePort - 20000
	}
	_, err := sandbox.Up(context.Background(), sandbox.Options{Name: "clash", Dir: "/var/tmp/galeon-test/clash", Sites: "dc1:1,dc2:1", BasePort: clash})
	if err == nil || !strings.Contains(err.Error(), "in use by another sandbox") {
		t.Errorf("a sandbox on the same subnet: %v, want a refusal naming the clash", err)
	}
	if err := exec.Command("ip", "link", "show", bridge).Run(); err != nil {
		t.Fatalf("the refused sandbox took down the first one's bridge %s", bridge)
	}
	waitView(t, sb, "the first sandbox after the refused one", allPrimary(sb, 3), 30*time.Second)
	if err := sb.Destroy(context.Background()); err != nil {
		t.Fatal(err)
	}
	out, _ = exec.Command("ip", "netns", "list").Output()
	if strings.Contains(string(out), ns) {
		t.Errorf("destroy left namespace %s: %s", ns, out)
	}
	if err := exec.Command("ip", "link", "show", bridge).Run(); err == nil {
		t.Errorf("destroy left bridge %s", bridge)
	}
}
