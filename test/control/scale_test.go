package control_test

import (
	"context"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/galeon-db/galeon/internal/discovery/discoverytest"
	"github.com/galeon-db/galeon/internal/lifecycle"
	"github.com/galeon-db/galeon/internal/sandbox"
	"github.com/galeon-db/galeon/internal/sandbox/sandboxtest"
)

// TestScalingCostsNothing grows a cluster from 3 to 5 nodes and shrinks
// it back to 3 under write and read load through two proxies, as
// `galeon cluster add` and `remove` do (lifecycle.Membership): new nodes
// join by state transfer from donors the control plane chose and are
// routed once Synced; the writer is among the nodes removed, so the
// writer role moves off it first. Clients see no error, and every
// acknowledged write is on every remaining node.
func TestScalingCostsNothing(t *testing.T) {
	sb := sandboxtest.New(t, sandbox.Options{Nodes: 3})
	store := discoverytest.Open(t)
	agents := map[string]func(){}
	for _, n := range sb.Nodes {
		agents[n.Name] = runAgent(t, sb, store, n)
	}
	ms := startProxies(t, sb, store, 2)
	waitFor(t, 30*time.Second, "all proxies agree on a writer: "+views(ms), func() bool { _, _, ok := agreement(ms); return ok })
	donors := lifecycle.SandboxDonors(context.Background(), store, func(msg string) { t.Log(msg) })
	var chosen []string
	sb.SetDonors(func(n sandbox.Node, seqno int64) []string {
		d := donors(n.Name, seqno)
		chosen = append(chosen, n.Name+"<-"+strings.Join(d, ","))
		return d
	})
	w0, _, _ := agreement(ms)
	db, _ := sb.DB(w0)
	createLedger(t, db)
	l := startLedger(ms, 2, 2)
	waitFor(t, 10*time.Second, "writes acknowledged", func() bool { return ackCount(l) > 50 })

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	start := time.Now()
	m := lifecycle.Membership{Store: store, DrainTimeout: 5 * time.Second,
		Progress: func(node, msg string) { t.Logf("[%5.1fs] %s: %s", time.Since(start).Seconds(), node, msg) }}
	for range 2 {
		began := time.Now()
		name, err := m.Add(ctx, func(ctx context.Context) (string, error) {
			n, err := sb.Add(ctx)
			if err == nil {
				agents[n.Name] = runAgent(t, sb, store, n)
			}
			return n.Name, err
		})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("FIGURE galeon cluster add under load: %s Synced and routed by both proxies after %s", name, time.Since(began).Round(time.Millisecond))
	}
	for _, c := range chosen {
		if first, _, _ := strings.Cut(c[strings.Index(c, "<-")+2:], ","); first == w0 {
			t.Errorf("a joiner took the writer %s as its donor (%v)", w0, chosen)
		}
	}
	for _, name := range []string{"node4", w0} {
		began := time.Now()
		err := m.Remove(ctx, name, func(ctx context.Context, node string) error {
			agents[node]()
			return sb.Remove(ctx, node)
		})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("FIGURE galeon cluster remove under load: %s gone after %s", name, time.Since(began).Round(time.Millisecond))
	}
	var left []string
	for _, n := range sb.Nodes {
		left = append(left, n.Name)
	}
	sort.Strings(left)
	waitFor(t, 20*time.Second, "both proxies route to exactly the remaining nodes "+views(ms), func() bool {
		ps, err := store.Proxies(ctx)
		if err != nil || len(ps) != 2 {
			return false
		}
		for _, p := range ps {
			online := slices.Clone(p.Online)
			sort.Strings(online)
			if !slices.Equal(online, left) {
				return false
			}
		}
		return true
	})
	w1, _, _ := agreement(ms)
	before := ackCount(l)
	waitFor(t, 10*time.Second, "writes acknowledged after scaling", func() bool { return ackCount(l) > before+20 })
	acks := l.finish()
	l.mu.Lock()
	if len(l.errs) > 0 {
		t.Errorf("clients saw errors while the cluster scaled 3 -> 5 -> 3: %v", l.errs)
	}
	t.Logf("FIGURE scaling 3 -> 5 -> 3 (the writer %s removed, now %s) under load through 2 proxies in %s: acknowledged writes %d, reads %v, client errors %d kinds; donors %v",
		w0, w1, time.Since(start).Round(time.Millisecond), len(acks), l.reads, len(l.errs), chosen)
	l.mu.Unlock()
	waitFor(t, 10*time.Second, "every remaining node's agent reports a Synced cluster of 3", func() bool {
		nodes, err := store.Nodes(ctx)
		if err != nil || len(nodes) != 3 {
			return false
		}
		for _, n := range nodes {
			if n.ClusterSize != 3 || !n.Synced {
				return false
			}
		}
		return true
	})
	checkAcked(t, sb, left, acks)
}
