package control_test

import (
	"context"
	"testing"
	"time"

	"github.com/galeon-db/galeon/internal/discovery"
	"github.com/galeon-db/galeon/internal/discovery/discoverytest"
	"github.com/galeon-db/galeon/internal/eventlog"
	"github.com/galeon-db/galeon/internal/sandbox"
	"github.com/galeon-db/galeon/internal/sandbox/sandboxtest"
)

func openExternal(t *testing.T, endpoints string) *discovery.Store {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := discovery.Open(ctx, discovery.Config{Endpoints: endpoints, Cluster: discoverytest.Cluster}, discoverytest.Quiet())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// startExternalProxies starts three proxies, each with its own client of
// the etcd cluster at endpoints (the first with the sandbox's accounts in
// its file), and waits until they agree on a writer.
func startExternalProxies(t *testing.T, sb *sandbox.Sandbox, endpoints string) []*member {
	t.Helper()
	var ms []*member
	for i, name := range []string{"proxy1", "proxy2", "proxy3"} {
		ms = append(ms, startProxyVia(t, sb, func() (*discovery.Store, func()) { return openExternal(t, endpoints), func() {} }, name, i == 0))
	}
	waitFor(t, 30*time.Second, "all proxies agree on a writer: "+views(ms), func() bool {
		_, _, ok := agreement(ms)
		return ok
	})
	return ms
}

func degraded(ms []*member, want bool) bool {
	for _, m := range ms {
		if m.p.Degraded() != want {
			return false
		}
	}
	return true
}

func ackCount(l *ledger) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.acks)
}

// TestExternalEtcd runs three proxies against a three-member cluster of
// Debian's etcd-server. Losing one member changes nothing. Losing all of
// them: proxies keep serving reads and writes with the last decision;
// the writer then killed, each proxy fails over on its own by the same
// deterministic policy (a degraded decision, counted), and writes go on;
// etcd back, the proxies converge on one published writer and epoch.
func TestExternalEtcd(t *testing.T) {
	sb := sandboxtest.New(t, sandbox.Options{Nodes: 3})
	endpoints, members := discoverytest.StartEtcdCluster(t, 3)
	agents := openExternal(t, endpoints)
	for _, n := range sb.Nodes {
		runAgent(t, sb, agents, n)
	}
	ms := startExternalProxies(t, sb, endpoints)
	checkScaling(t, sb, agents, ms)
	w0, _, _ := agreement(ms)
	db0, _ := sb.DB(w0)
	createLedger(t, db0)
	l := startLedger(ms, 2, 2)

	// One member down: no effect.
	members[0].Stop(t)
	before := ackCount(l)
	changed := time.Now()
	if err := adminUpdate(t, ms[1].p, "servers", "node2", map[string]any{"reader_weight": int64(50)}); err != nil {
		t.Fatalf("admin change with one etcd member down: %v", err)
	}
	at := waitFor(t, 5*time.Second, "the change on every proxy", func() bool {
		for _, m := range ms {
			if readerWeight(m.p, "node2") != 50 {
				return false
			}
		}
		return true
	})
	t.Logf("FIGURE one of 3 etcd members down: admin change propagated in %d ms", at.Sub(changed).Milliseconds())
	waitFor(t, 5*time.Second, "writes acknowledged with one member down", func() bool { return ackCount(l) > before+50 })
	if !degraded(ms, false) {
		t.Errorf("a proxy went degraded with 2 of 3 etcd members up: %s", views(ms))
	}
	members[0].Start(t)

	// All members down: the proxies keep serving with the last decision.
	time.Sleep(time.Second)
	down := time.Now()
	for _, m := range members {
		m.Stop(t)
	}
	at = waitFor(t, 10*time.Second, "every proxy degraded", func() bool { return degraded(ms, true) })
	t.Logf("FIGURE etcd all down -> every proxy degraded after %d ms", at.Sub(down).Milliseconds())
	before = ackCount(l)
	waitFor(t, 5*time.Second, "writes acknowledged with etcd down", func() bool { return ackCount(l) > before+50 })
	if w, _, ok := agreement(ms); !ok || w != w0 {
		t.Fatalf("with etcd down the proxies left the last decision (%s): %s", w0, views(ms))
	}

	// The writer dies while etcd is down: each proxy decides alone, all
	// alike (same policy, same view).
	killed := time.Now()
	if err := sb.Kill(w0); err != nil {
		t.Fatal(err)
	}
	at = waitFor(t, 20*time.Second, "every proxy on one new writer, decided alone: "+views(ms), func() bool {
		w, _, ok := agreement(ms)
		return ok && w != w0
	})
	wAlone, _, _ := agreement(ms)
	t.Logf("FIGURE writer killed with etcd down -> every proxy on %s (degraded decisions) after %d ms", wAlone, at.Sub(killed).Milliseconds())
	for _, m := range ms {
		if !hasEvent(m.p, eventlog.WriterChange, "decided alone") {
			t.Errorf("%s: no writer_change event marked as decided alone", m.name)
		}
	}
	before = ackCount(l)
	waitFor(t, 10*time.Second, "writes acknowledged on the new writer with etcd down", func() bool { return ackCount(l) > before+50 })

	// etcd back: the proxies converge on the controller's decision.
	back := time.Now()
	for _, m := range members {
		m.Start(t)
	}
	at = waitFor(t, 30*time.Second, "proxies following one published decision again: "+views(ms), func() bool {
		d, ok, _ := readDecision(agents)
		w, e, agree := agreement(ms)
		return ok && agree && degraded(ms, false) && d.Writer == w && d.Epoch == e && !d.Fencing
	})
	w, e, _ := agreement(ms)
	t.Logf("FIGURE etcd back -> all proxies on the published writer %s (epoch %d) after %d ms", w, e, at.Sub(back).Milliseconds())
	time.Sleep(500 * time.Millisecond)
	acks := l.finish()
	survivor, _ := sb.DB(w)
	order := commitOrder(t, survivor)
	if len(order) != 2 || order[0] != w0 || order[1] != wAlone {
		t.Errorf("committing nodes in commit order %v, want [%s %s]: proxies that decided alone diverged", order, w0, wAlone)
	}
	l.mu.Lock()
	t.Logf("FIGURE acknowledged writes %d; client errors %v", len(acks), l.errs)
	l.mu.Unlock()
}
