package discovery_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/galeon-db/galeon/internal/discovery"
	"github.com/galeon-db/galeon/internal/discovery/discoverytest"
)

func TestRegistrationLifecycle(t *testing.T) {
	s := discoverytest.Open(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	watch := s.WatchNodes(ctx)
	discoverytest.WaitNodes(t, watch, 10*time.Second, "empty start", func(ns discovery.NodeSet) bool { return len(ns.Nodes) == 0 })

	facts := discovery.NodeFacts{Name: "node1", Address: "127.0.0.1:4401", LocalState: 4, ClusterStatus: "Primary", Ready: true, Synced: true, Up: true}
	reg, err := s.Register(ctx, facts, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	ns := discoverytest.WaitNodes(t, watch, 10*time.Second, "node1 registered", func(ns discovery.NodeSet) bool { return ns.Nodes["node1"].Synced })
	if got := ns.Nodes["node1"].Address; got != "127.0.0.1:4401" {
		t.Errorf("address %q", got)
	}
	facts.LocalState, facts.Synced = 2, false
	if err := reg.Update(ctx, facts); err != nil {
		t.Fatal(err)
	}
	discoverytest.WaitNodes(t, watch, 10*time.Second, "node1 updated", func(ns discovery.NodeSet) bool { return ns.Nodes["node1"].LocalState == 2 })

	// A corrupt value is reported, never applied.
	if _, err := s.Client.Put(ctx, s.Keys.Node("bad"), `{"name":"bad","address":"nowhere"}`); err != nil {
		t.Fatal(err)
	}
	ns = discoverytest.WaitNodes(t, watch, 10*time.Second, "corrupt value rejected", func(ns discovery.NodeSet) bool { return len(ns.Rejected) > 0 })
	if _, ok := ns.Nodes["bad"]; ok || !strings.Contains(ns.Rejected[0].Error(), "not host:port") {
		t.Errorf("corrupt node applied or badly reported: %v", ns.Rejected)
	}

	// Clean shutdown: gone at once.
	if err := reg.Close(ctx); err != nil {
		t.Fatal(err)
	}
	discoverytest.WaitNodes(t, watch, 10*time.Second, "node1 deregistered", func(ns discovery.NodeSet) bool { _, ok := ns.Nodes["node1"]; return !ok })
}

func TestDeadAgentExpires(t *testing.T) {
	s := discoverytest.Open(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	watch := s.WatchNodes(ctx)
	// The agent is another process with its own client: it dies without
	// revoking its lease, its keep-alives just stop.
	agent := discoverytest.Connect(t, s)
	if _, err := agent.Register(ctx, discovery.NodeFacts{Name: "node2", Address: "127.0.0.1:4402"}, 2*time.Second); err != nil {
		t.Fatal(err)
	}
	discoverytest.WaitNodes(t, watch, 10*time.Second, "node2 registered", func(ns discovery.NodeSet) bool { _, ok := ns.Nodes["node2"]; return ok })
	agent.Close()
	died := time.Now()
	discoverytest.WaitNodes(t, watch, 10*time.Second, "node2 expired", func(ns discovery.NodeSet) bool { _, ok := ns.Nodes["node2"]; return !ok })
	if took := time.Since(died); took > 3500*time.Millisecond {
		t.Errorf("a dead agent's node disappeared after %s, want within ~3 s", took)
	} else {
		t.Logf("FIGURE dead agent's node gone after %s (lease TTL 2 s)", took.Round(time.Millisecond))
	}
}

func TestOpenErrors(t *testing.T) {
	ctx := context.Background()
	_, err := discovery.Open(ctx, discovery.Config{Endpoints: "etcd://" + discoverytest.FreeAddr(t), Cluster: "test", DialTimeout: time.Second}, nil)
	if err == nil || !strings.Contains(err.Error(), "discovery.endpoints http://127.0.0.1:") {
		t.Errorf("unreachable etcd: %v, want an error naming the endpoint", err)
	}
	for _, c := range []struct {
		cfg  discovery.Config
		want string
	}{
		{discovery.Config{Endpoints: "h1:2379", Cluster: "c"}, "discovery.endpoints"},
		{discovery.Config{Endpoints: "ftp://h1:2379", Cluster: "c"}, "scheme must be etcd://"},
		{discovery.Config{Endpoints: "etcd://h1", Cluster: "c"}, "needs a port"},
		{discovery.Config{Endpoints: discovery.Embedded, Cluster: "c"}, "discovery.data_dir"},
		{discovery.Config{Endpoints: "etcd://h1:2379", Cluster: "a/b"}, "discovery.cluster"},
		{discovery.Config{Endpoints: "etcd://h1:2379", Cluster: "c", Username: "u"}, "discovery.username"},
	} {
		p := strings.Join(c.cfg.Validate(), "; ")
		if !strings.Contains(p, c.want) {
			t.Errorf("%+v: problems %q, want one about %s", c.cfg, p, c.want)
		}
	}
}

// TestSwitchoverIsAnswered: a request waits for the controller's answer —
// nil once accepted, the controller's reason when refused — and only a
// controller still in office can answer.
func TestSwitchoverIsAnswered(t *testing.T) {
	s := discoverytest.Open(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	lead, err := s.Campaign(ctx, "proxy1", 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	controller := func(accept bool, why string) {
		for r := range s.WatchSwitchover(ctx) {
			if r.Valid && r.State == discovery.SwitchoverPending {
				if err := lead.AnswerSwitchover(ctx, r, accept, why); err != nil {
					t.Error(err)
				}
				return
			}
		}
	}
	go controller(false, "node2 cannot take the writer role now: unreachable")
	err = s.RequestSwitchover(ctx, "node2", "proxy2")
	if err == nil || !strings.Contains(err.Error(), "refused by the controller: node2 cannot take the writer role now") {
		t.Fatalf("refused request: %v", err)
	}
	go controller(true, "")
	if err := s.RequestSwitchover(ctx, "node3", "proxy2"); err != nil {
		t.Fatalf("accepted request: %v", err)
	}
	// Nobody answers: the requester gives up when its context ends, and
	// says the request may still be carried out.
	short, scancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer scancel()
	err = s.RequestSwitchover(short, "node1", "proxy3")
	if err == nil || !strings.Contains(err.Error(), "may still be carried out") {
		t.Fatalf("unanswered request: %v", err)
	}
	// A deposed controller cannot answer.
	lead.Resign(ctx)
	pending := <-s.WatchSwitchover(ctx)
	if !pending.Valid || pending.State != discovery.SwitchoverPending {
		t.Fatalf("the unanswered request: %+v", pending)
	}
	_ = lead.AnswerSwitchover(ctx, pending, true, "")
	if r := <-s.WatchSwitchover(ctx); r.State != discovery.SwitchoverPending {
		t.Fatalf("a resigned controller answered: %+v", r)
	}
}
