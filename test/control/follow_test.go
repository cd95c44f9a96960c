package control_test

import (
	"context"
	"database/sql"
	"strings"
	"testing"
	"time"

	"github.com/galeon-db/galeon/internal/agent"
	"github.com/galeon-db/galeon/internal/config"
	"github.com/galeon-db/galeon/internal/discovery"
	"github.com/galeon-db/galeon/internal/discovery/discoverytest"
	"github.com/galeon-db/galeon/internal/nodesync"
	"github.com/galeon-db/galeon/internal/proxy"
	"github.com/galeon-db/galeon/internal/proxy/proxytest"
	"github.com/galeon-db/galeon/internal/sandbox"
	"github.com/galeon-db/galeon/internal/sandbox/sandboxtest"
	"github.com/galeon-db/galeon/internal/testkit"
)

// runAgent starts an agent for node n; the returned stop deregisters it.
func runAgent(t *testing.T, sb *sandbox.Sandbox, store *discovery.Store, n sandbox.Node) (stop func()) {
	t.Helper()
	return runAgentWith(t, sb, store, n, nil)
}

// runAgentWith starts an agent for node n that manages it with exec (nil:
// it only reports).
func runAgentWith(t *testing.T, sb *sandbox.Sandbox, store *discovery.Store, n sandbox.Node, exec agent.Executor) (stop func()) {
	t.Helper()
	c := sb.Credentials
	a, err := agent.New(agent.Config{Node: n.Name, Address: n.Addr(), User: c.MonitorUser, Password: c.MonitorPassword,
		Grastate: sb.GrastatePath(n), Interval: 200 * time.Millisecond, Executor: exec}, store, discoverytest.Quiet())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = a.Run(ctx); close(done) }()
	stop = func() { cancel(); <-done }
	t.Cleanup(stop)
	return stop
}

var waitFor = testkit.WaitFor

func online(p *proxy.Proxy, name string) bool {
	s, ok := p.View().Load().Server(name)
	return ok && s.Online
}

// TestProxyFollowsDiscovery: a proxy with no [[servers]] at all routes to
// the nodes their agents register; a node added to the cluster is routed
// to as soon as it is Synced, and leaves routing when its agent
// deregisters it.
func TestProxyFollowsDiscovery(t *testing.T) {
	sb := sandboxtest.New(t, sandbox.Options{Nodes: 3})
	store := discoverytest.Open(t)
	for _, n := range sb.Nodes {
		runAgent(t, sb, store, n)
	}
	c := sb.Credentials
	cfg := config.Defaults()
	cfg.Proxy.Listen = "127.0.0.1:0"
	cfg.Users = []config.User{{Name: c.AppUser, Password: c.AppPassword}}
	cfg.Galera.MonitorUser, cfg.Galera.MonitorPassword = c.MonitorUser, c.MonitorPassword
	cfg.Galera.Interval = config.Duration(200 * time.Millisecond)
	cfg.Discovery.Endpoints = "etcd://" + strings.TrimPrefix(store.Endpoints[0], "http://")
	p, addr := proxytest.Start(t, &cfg, nil)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go nodesync.Follow(ctx, store, p)

	waitFor(t, 20*time.Second, "node1..3 discovered and ONLINE", func() bool {
		return online(p, "node1") && online(p, "node2") && online(p, "node3")
	})
	if w, _ := p.View().Load().Writer(); w.Name != "node1" {
		t.Errorf("writer %q, want node1 (equal discovered weights: first by name)", w.Name)
	}
	db := appDB(t, sb, addr)
	if _, err := db.Exec("CREATE TABLE IF NOT EXISTS app.d (id INT AUTO_INCREMENT PRIMARY KEY, node VARCHAR(16))"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("INSERT INTO app.d (node) VALUES (@@wsrep_node_name)"); err != nil {
		t.Fatal(err)
	}

	// Scale out: node4 joins; its agent registers it; galeon routes to it.
	wctx, wcancel := context.WithCancel(context.Background())
	defer wcancel()
	watch := store.WatchNodes(wctx)
	actx, acancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer acancel()
	n4, err := sb.Add(actx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sb.Remove(context.Background(), n4.Name) })
	stop4 := runAgent(t, sb, store, n4)
	var synced time.Time
	for ns := range watch {
		if ns.Nodes[n4.Name].Synced {
			synced = time.Now()
			break
		}
	}
	routed := waitFor(t, 10*time.Second, n4.Name+" ONLINE in the proxy", func() bool { return online(p, n4.Name) })
	t.Logf("FIGURE new node Synced (as its agent published it) -> routed by the proxy: %d ms (monitor interval 200 ms, ok_checks 2)",
		routed.Sub(synced).Milliseconds())
	seen := map[string]int{}
	for i := 0; i < 60; i++ {
		var name string
		if err := db.QueryRow("SELECT @@wsrep_node_name").Scan(&name); err != nil {
			t.Fatal(err)
		}
		seen[name]++
	}
	if seen[n4.Name] == 0 {
		t.Errorf("no read reached %s in 60: %v", n4.Name, seen)
	}
	if got := eventKinds(p); !strings.Contains(got, "node_joined "+n4.Name) {
		t.Errorf("no node_joined event for %s: %s", n4.Name, got)
	}

	// Scale in: the agent deregisters node4; it leaves routing.
	stopped := time.Now()
	stop4()
	left := waitFor(t, 10*time.Second, n4.Name+" gone from the proxy", func() bool {
		_, ok := p.View().Load().Server(n4.Name)
		return !ok
	})
	t.Logf("FIGURE agent deregistered -> node out of routing: %d ms", left.Sub(stopped).Milliseconds())
	for i := 0; i < 30; i++ {
		var name string
		if err := db.QueryRow("SELECT @@wsrep_node_name").Scan(&name); err != nil {
			t.Fatalf("read after %s left: %v", n4.Name, err)
		}
		if name == n4.Name {
			t.Fatalf("a read went to %s after it left routing", n4.Name)
		}
	}

	// A corrupt registration is reported, never routed to.
	if _, err := store.Client.Put(context.Background(), store.Keys.Node("bogus"), `{"name":"bogus","address":"not-an-address"}`); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 5*time.Second, "rejected event", func() bool { return strings.Contains(eventKinds(p), "rejected") })
	if _, ok := p.View().Load().Server("bogus"); ok {
		t.Errorf("a corrupt registration entered routing")
	}
}

func eventKinds(p *proxy.Proxy) string {
	var parts []string
	for _, e := range p.Events() {
		parts = append(parts, e.Kind+" "+e.Node)
	}
	return strings.Join(parts, "; ")
}

func appDB(t *testing.T, sb *sandbox.Sandbox, addr string) *sql.DB {
	t.Helper()
	return sandboxtest.ProxyDB(t, sb, addr, 30*time.Second)
}
