package discovery

import (
	"context"
	"io"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"
)

func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// openEmbedded starts a real single-member etcd in the test process.
func openEmbedded(t *testing.T) *Store {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := Open(ctx, Config{Endpoints: Embedded, Cluster: "test", DataDir: t.TempDir(),
		ClientListen: freePort(t), PeerListen: freePort(t)}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// next waits for the next snapshot that satisfies ok.
func next(t *testing.T, ch <-chan NodeSet, what string, ok func(NodeSet) bool) NodeSet {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case ns := <-ch:
			if ok(ns) {
				return ns
			}
		case <-deadline:
			t.Fatalf("timed out waiting for: %s", what)
		}
	}
}

func TestRegistrationLifecycle(t *testing.T) {
	s := openEmbedded(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	watch := s.WatchNodes(ctx)
	next(t, watch, "empty start", func(ns NodeSet) bool { return len(ns.Nodes) == 0 })

	facts := NodeFacts{Name: "node1", Address: "127.0.0.1:4401", LocalState: 4, ClusterStatus: "Primary", Ready: true, Synced: true, Up: true}
	reg, err := s.Register(ctx, facts, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	ns := next(t, watch, "node1 registered", func(ns NodeSet) bool { return ns.Nodes["node1"].Synced })
	if got := ns.Nodes["node1"].Address; got != "127.0.0.1:4401" {
		t.Errorf("address %q", got)
	}
	facts.LocalState, facts.Synced = 2, false
	if err := reg.Update(ctx, facts); err != nil {
		t.Fatal(err)
	}
	next(t, watch, "node1 updated", func(ns NodeSet) bool { return ns.Nodes["node1"].LocalState == 2 })

	// A corrupt value is reported, never applied.
	if _, err := s.Client.Put(ctx, s.Keys.Node("bad"), `{"name":"bad","address":"nowhere"}`); err != nil {
		t.Fatal(err)
	}
	ns = next(t, watch, "corrupt value rejected", func(ns NodeSet) bool { return len(ns.Rejected) > 0 })
	if _, ok := ns.Nodes["bad"]; ok || !strings.Contains(ns.Rejected[0].Error(), "not host:port") {
		t.Errorf("corrupt node applied or badly reported: %v", ns.Rejected)
	}

	// Clean shutdown: gone at once.
	if err := reg.Close(ctx); err != nil {
		t.Fatal(err)
	}
	next(t, watch, "node1 deregistered", func(ns NodeSet) bool { _, ok := ns.Nodes["node1"]; return !ok })
}

func TestDeadAgentExpires(t *testing.T) {
	s := openEmbedded(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	watch := s.WatchNodes(ctx)
	reg, err := s.Register(ctx, NodeFacts{Name: "node2", Address: "127.0.0.1:4402"}, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	next(t, watch, "node2 registered", func(ns NodeSet) bool { _, ok := ns.Nodes["node2"]; return ok })
	reg.stop() // the agent dies: no more keep-alives, no revoke
	died := time.Now()
	next(t, watch, "node2 expired", func(ns NodeSet) bool { _, ok := ns.Nodes["node2"]; return !ok })
	if took := time.Since(died); took > 3500*time.Millisecond {
		t.Errorf("a dead agent's node disappeared after %s, want within ~3 s", took)
	} else {
		t.Logf("FIGURE dead agent's node gone after %s (lease TTL 2 s)", took.Round(time.Millisecond))
	}
}

func TestOpenErrors(t *testing.T) {
	ctx := context.Background()
	_, err := Open(ctx, Config{Endpoints: "etcd://" + freePort(t), Cluster: "test", DialTimeout: time.Second}, nil)
	if err == nil || !strings.Contains(err.Error(), "discovery.endpoints http://127.0.0.1:") {
		t.Errorf("unreachable etcd: %v, want an error naming the endpoint", err)
	}
	for _, c := range []struct {
		cfg  Config
		want string
	}{
		{Config{Endpoints: "h1:2379", Cluster: "c"}, "discovery.endpoints"},
		{Config{Endpoints: "ftp://h1:2379", Cluster: "c"}, "scheme must be etcd://"},
		{Config{Endpoints: "etcd://h1", Cluster: "c"}, "needs a port"},
		{Config{Endpoints: Embedded, Cluster: "c"}, "discovery.data_dir"},
		{Config{Endpoints: "etcd://h1:2379", Cluster: "a/b"}, "discovery.cluster"},
		{Config{Endpoints: "etcd://h1:2379", Cluster: "c", Username: "u"}, "discovery.username"},
	} {
		p := strings.Join(c.cfg.Validate(), "; ")
		if !strings.Contains(p, c.want) {
			t.Errorf("%+v: problems %q, want one about %s", c.cfg, p, c.want)
		}
	}
}
