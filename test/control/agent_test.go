// Package control_test runs galeon's control plane for real: an embedded
// etcd, agents beside real Galera nodes, and (later) proxies that follow
// what the agents publish.
package control_test

import (
	"context"
	"database/sql"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/galeon-db/galeon/internal/agent"
	"github.com/galeon-db/galeon/internal/discovery"
	"github.com/galeon-db/galeon/internal/discovery/discoverytest"
	"github.com/galeon-db/galeon/internal/sandbox"
	"github.com/galeon-db/galeon/internal/sandbox/sandboxtest"
)

func clustercheck(t *testing.T, addr string) (int, string) {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestAgent: an agent beside a real node registers it, keeps its wsrep
// state current, answers clustercheck, and deregisters on shutdown.
func TestAgent(t *testing.T) {
	sb := sandboxtest.New(t, sandbox.Options{Nodes: 1})
	store := discoverytest.Open(t)
	n := sb.Nodes[0]
	c := sb.Credentials
	a, err := agent.New(agent.Config{Node: n.Name, Address: n.Addr(), User: c.MonitorUser, Password: c.MonitorPassword,
		Grastate: sb.GrastatePath(n), HTTPListen: "127.0.0.1:0", Interval: 200 * time.Millisecond}, store, discoverytest.Quiet())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	var runErr error
	stop := sync.OnceFunc(func() { cancel(); runErr = <-done })
	t.Cleanup(stop)

	wctx, wcancel := context.WithCancel(context.Background())
	defer wcancel()
	watch := store.WatchNodes(wctx)
	ns := discoverytest.WaitNodes(t, watch, 20*time.Second, "node1 registered Synced", func(ns discovery.NodeSet) bool { return ns.Nodes["node1"].Synced })
	f := ns.Nodes["node1"]
	if f.Address != n.Addr() || f.ClusterStatus != "Primary" || f.StateUUID == "" || f.Grastate.UUID == "" || f.Agent == "" {
		t.Errorf("facts incomplete: %+v", f)
	}
	if code, body := clustercheck(t, f.Agent); code != 200 || !strings.Contains(body, "is synced") {
		t.Errorf("clustercheck on a Synced node: %d %q", code, body)
	}

	// Desync the node: the agent reports it, clustercheck says 503.
	admin := adminDB(t, sb)
	if _, err := admin.Exec("SET GLOBAL wsrep_desync = ON"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = admin.Exec("SET GLOBAL wsrep_desync = OFF") })
	discoverytest.WaitNodes(t, watch, 20*time.Second, "node1 reported Donor/Desynced", func(ns discovery.NodeSet) bool {
		return ns.Nodes["node1"].LocalState == 2 && !ns.Nodes["node1"].Synced
	})
	if code, body := clustercheck(t, f.Agent); code != 503 || !strings.Contains(body, "not Synced") {
		t.Errorf("clustercheck on a desynced node: %d %q", code, body)
	}
	if _, err := admin.Exec("SET GLOBAL wsrep_desync = OFF"); err != nil {
		t.Fatal(err)
	}
	discoverytest.WaitNodes(t, watch, 20*time.Second, "node1 Synced again", func(ns discovery.NodeSet) bool { return ns.Nodes["node1"].Synced })

	// Clean shutdown: the node leaves at once, not after the lease.
	stopped := time.Now()
	stop()
	if runErr != nil {
		t.Errorf("agent ended with %v", runErr)
	}
	discoverytest.WaitNodes(t, watch, 20*time.Second, "node1 deregistered", func(ns discovery.NodeSet) bool { _, ok := ns.Nodes["node1"]; return !ok })
	t.Logf("FIGURE clean agent stop → node gone from discovery in %s", time.Since(stopped).Round(time.Millisecond))
}

func adminDB(t *testing.T, sb *sandbox.Sandbox) *sql.DB {
	t.Helper()
	mc := mysql.NewConfig()
	mc.User, mc.Passwd, mc.Net, mc.Addr = sb.Credentials.AdminUser, sb.Credentials.AdminPassword, "tcp", sb.Nodes[0].Addr()
	db, err := sql.Open("mysql", mc.FormatDSN())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}
