package control_test

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/galeon-db/galeon/internal/config"
	"github.com/galeon-db/galeon/internal/discovery"
	"github.com/galeon-db/galeon/internal/discovery/discoverytest"
	"github.com/galeon-db/galeon/internal/eventlog"
	"github.com/galeon-db/galeon/internal/lifecycle"
	"github.com/galeon-db/galeon/internal/proxy"
	"github.com/galeon-db/galeon/internal/sandbox"
	"github.com/galeon-db/galeon/internal/sandbox/sandboxtest"
)

// bank is a transactional write load through every proxy: each client
// runs BEGIN; two INSERTs; COMMIT in a loop. Every acknowledged COMMIT
// is remembered (its rows and its time), every error counted by proxy.
type bank struct {
	stop    chan struct{}
	wg      sync.WaitGroup
	mu      sync.Mutex
	acks    []int64
	commits map[string][]time.Time
	// began is when each acknowledged transfer began (BEGIN sent),
	// index for index with commits.
	began map[string][]time.Time
	errs  map[string][]string
}

func startBank(ms []*member, clients int) *bank {
	b := &bank{stop: make(chan struct{}), commits: map[string][]time.Time{}, began: map[string][]time.Time{}, errs: map[string][]string{}}
	for _, m := range ms {
		for range clients {
			b.wg.Add(1)
			go b.client(m)
		}
	}
	return b
}

func (b *bank) client(m *member) {
	defer b.wg.Done()
	for n := 0; n < 100000; n++ {
		select {
		case <-b.stop:
			return
		default:
		}
		began := time.Now()
		ids, err := b.transfer(m)
		b.mu.Lock()
		if err != nil {
			b.errs[m.name] = append(b.errs[m.name], fmt.Sprintf("%s %v", time.Now().Format("15:04:05.000"), err))
		} else {
			b.acks = append(b.acks, ids...)
			b.commits[m.name] = append(b.commits[m.name], time.Now())
			b.began[m.name] = append(b.began[m.name], began)
		}
		b.mu.Unlock()
		time.Sleep(5 * time.Millisecond)
	}
}

func (b *bank) transfer(m *member) ([]int64, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	tx, err := m.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	var ids []int64
	for range 2 {
		res, err := tx.ExecContext(ctx, "INSERT INTO app.ledger (node, proxy, at) VALUES (@@wsrep_node_name, ?, NOW(6))", m.name)
		if err != nil {
			_ = tx.Rollback()
			return nil, err
		}
		id, _ := res.LastInsertId()
		ids = append(ids, id)
	}
	return ids, tx.Commit()
}

// commitsAfter counts proxy's acknowledged COMMITs after t.
func (b *bank) commitsAfter(proxy string, t time.Time) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := 0
	for _, at := range b.commits[proxy] {
		if at.After(t) {
			n++
		}
	}
	return n
}

// waitEach waits until every proxy of ms has n acknowledged COMMITs
// after since, failing the test after timeout.
func (b *bank) waitEach(t *testing.T, ms []*member, since time.Time, n int, timeout time.Duration, what string) {
	t.Helper()
	waitFor(t, timeout, what, func() bool {
		for _, m := range ms {
			if b.commitsAfter(m.name, since) < n {
				return false
			}
		}
		return true
	})
}

// firstAfter is when the first transfer through proxy that began after
// t was acknowledged (one already in flight at t does not count).
func (b *bank) firstAfter(proxy string, t time.Time) (time.Time, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for i, at := range b.began[proxy] {
		if at.After(t) {
			return b.commits[proxy][i], true
		}
	}
	return time.Time{}, false
}

// largestGap is the longest time between two acknowledged COMMITs of
// proxy within [from, to].
func (b *bank) largestGap(proxy string, from, to time.Time) time.Duration {
	gap, _ := b.largestGapAt(proxy, from, to)
	return gap
}

// largestGapAt is largestGap with the time the gap began.
func (b *bank) largestGapAt(proxy string, from, to time.Time) (time.Duration, time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	last, gap, began := from, time.Duration(0), from
	for _, at := range b.commits[proxy] {
		if at.Before(from) || at.After(to) {
			continue
		}
		if at.Sub(last) > gap {
			gap, began = at.Sub(last), last
		}
		last = at
	}
	if to.Sub(last) > gap {
		gap, began = to.Sub(last), last
	}
	return gap, began
}

func (b *bank) finish() []int64 {
	close(b.stop)
	b.wg.Wait()
	return b.acks
}

func cuttable(t *testing.T, store *discovery.Store) func() (*discovery.Store, func()) {
	return func() (*discovery.Store, func()) { return discoverytest.ConnectCuttable(t, store) }
}

// TestHungWriterFailsOverAtGaleraSpeed freezes the writer (SIGSTOP) for
// 12 s under a transactional write load through three proxies, two of
// which detect failures more slowly than the controller
// (max_missed_checks 6 against 2) and all with drain_grace 10 s. The
// controller's fence says the old writer failed, so no proxy waits for
// transactions on a node that cannot answer: writes resume on every
// proxy soon after the survivors' new Primary view, not after
// drain_grace, and every acknowledged transfer is on every node.
func TestHungWriterFailsOverAtGaleraSpeed(t *testing.T) {
	sb := sandboxtest.New(t, sandbox.Options{Nodes: 3})
	store := discoverytest.Open(t)
	for _, n := range sb.Nodes {
		runAgent(t, sb, store, n)
	}
	const grace = 10 * time.Second
	ms := []*member{startProxyTuned(t, sb, cuttable(t, store), "proxy1", true, func(c *config.Config) {
		c.Galera.DrainGrace = config.Duration(grace)
	})}
	waitFor(t, 20*time.Second, "proxy1 is the controller", func() bool { return ms[0].p.IsController() })
	for _, name := range []string{"proxy2", "proxy3"} {
		ms = append(ms, startProxyTuned(t, sb, cuttable(t, store), name, false, func(c *config.Config) {
			c.Galera.DrainGrace = config.Duration(grace)
			c.Galera.MaxMissedChecks = 6
		}))
	}
	waitFor(t, 30*time.Second, "all proxies agree on a writer: "+views(ms), func() bool {
		_, _, ok := agreement(ms)
		return ok
	})
	w0, epoch0, _ := agreement(ms)
	db0, err := sb.DB(w0)
	if err != nil {
		t.Fatal(err)
	}
	createLedger(t, db0)
	b := startBank(ms, 2)
	start := time.Now()
	b.waitEach(t, ms, start, 20, 20*time.Second, "transfers acknowledged through every proxy")

	paused := time.Now()
	if err := sb.Pause(w0); err != nil {
		t.Fatal(err)
	}
	resumed := false
	defer func() {
		if !resumed {
			_ = sb.Resume(w0)
		}
	}()
	var survivor string
	for _, n := range sb.Nodes {
		if n.Name != w0 {
			survivor = n.Name
			break
		}
	}
	sdb, err := sb.DB(survivor)
	if err != nil {
		t.Fatal(err)
	}
	view := waitPrimary(t, sdb, 2, paused)
	waitFor(t, 20*time.Second, "transfers acknowledged through every proxy while the old writer is frozen", func() bool {
		for _, m := range ms {
			if _, ok := b.firstAfter(m.name, paused.Add(view)); !ok {
				return false
			}
		}
		return true
	})
	var figures []string
	for _, m := range ms {
		first, _ := b.firstAfter(m.name, paused)
		outage := first.Sub(paused)
		figures = append(figures, fmt.Sprintf("%s %d ms", m.name, outage.Milliseconds()))
		if outage > view+2*time.Second {
			t.Errorf("%s: first transfer %s after the pause, %s after the survivors' view (drain_grace %s): it waited for the frozen writer",
				m.name, outage.Round(time.Millisecond), (outage - view).Round(time.Millisecond), grace)
		}
	}
	w1, epoch1, ok := agreement(ms)
	if !ok || w1 == w0 || epoch1 <= epoch0 {
		t.Fatalf("after the pause: %s", views(ms))
	}
	for _, m := range ms {
		if !hasEvent(m.p, eventlog.WriterChange, "failover: writes paused") {
			t.Errorf("%s fenced the frozen %s as a planned switch (events: %s)", m.name, w0, eventKinds(m.p))
		}
	}
	t.Logf("FIGURE writer %s frozen (SIGSTOP): survivors' Primary view after %d ms; first transfer per proxy after %s (drain_grace %s, max_missed_checks 2/6/6)",
		w0, view.Milliseconds(), strings.Join(figures, ", "), grace)

	// Thaw it at 12 s: it rejoins; the writer stays where it is.
	time.Sleep(time.Until(paused.Add(12 * time.Second)))
	if err := sb.Resume(w0); err != nil {
		t.Fatal(err)
	}
	resumed = true
	waitFor(t, 60*time.Second, w0+" ONLINE again on every proxy", func() bool {
		for _, m := range ms {
			if !online(m.p, w0) {
				return false
			}
		}
		return true
	})
	acks := b.finish()
	for _, m := range ms {
		t.Logf("%s: %d client errors: %v", m.name, len(b.errs[m.name]), b.errs[m.name])
	}
	if w, _, ok := agreement(ms); !ok || w != w1 {
		t.Errorf("the writer moved again after %s thawed: %s", w0, views(ms))
	}
	var names []string
	for _, n := range sb.Nodes {
		names = append(names, n.Name)
	}
	waitAllNodesHave(t, sb, names, acks)
}

// waitAllNodesHave waits until every node has applied what was written
// (a causal read), then checks every acknowledged row is on each.
func waitAllNodesHave(t *testing.T, sb *sandbox.Sandbox, nodes []string, acks []int64) {
	t.Helper()
	for _, n := range nodes {
		db, err := sb.DB(n)
		if err != nil {
			t.Fatal(err)
		}
		// A node that was frozen or restarted may hand out a pooled
		// connection it dropped meanwhile: wait for an answer.
		waitFor(t, 30*time.Second, n+" answers a causal read", func() bool {
			var id sql.NullInt64
			return db.QueryRow("SET STATEMENT wsrep_sync_wait=1 FOR SELECT MAX(id) FROM app.ledger").Scan(&id) == nil
		})
	}
	checkAcked(t, sb, nodes, acks)
}

// TestSwitchoverTargetIsOneShot: a switchover's target is fulfilled and
// then forgotten. After a switchover to node3, node3 is killed (the
// writer fails over) and restarted: with failback = "never" the writer
// stays where the failover put it. A switchover to a node killed a
// moment earlier is refused with the reason, and nothing is fenced.
func TestSwitchoverTargetIsOneShot(t *testing.T) {
	sb, store, ms := newControlRig(t, 3)
	w0, _, _ := agreement(ms)
	// A restarted node's donor comes from the control plane, never the
	// writer (a donor is drained, which would move the writer for a
	// reason other than the one under test).
	dctx, dcancel := context.WithCancel(context.Background())
	defer dcancel()
	sb.SetDonors(func(j sandbox.Node, seqno int64) []string {
		return lifecycle.SandboxDonors(dctx, store, func(msg string) { t.Error(msg) })(j.Name, seqno)
	})
	target := "node3"
	if w0 == target {
		target = "node2"
	}
	// Through a proxy that is not the controller: the request goes
	// through etcd, and the answer comes back.
	via := ms[0]
	for _, m := range ms {
		if !m.p.IsController() {
			via = m
			break
		}
	}
	if err := via.p.Switchover(target); err != nil {
		t.Fatalf("switchover to %s through %s: %v", target, via.name, err)
	}
	waitFor(t, 20*time.Second, "every proxy on "+target+": "+views(ms), func() bool {
		w, _, ok := agreement(ms)
		return ok && w == target
	})

	// The target fails: the writer moves on, and must not come back.
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if err := sb.Kill(target); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 20*time.Second, "every proxy on a new writer after "+target+" died: "+views(ms), func() bool {
		w, _, ok := agreement(ms)
		return ok && w != target
	})
	w1, e1, _ := agreement(ms)
	if err := sb.StartNode(ctx, target); err != nil {
		t.Fatal(err)
	}
	back := waitFor(t, 90*time.Second, target+" ONLINE again on every proxy", func() bool {
		for _, m := range ms {
			if !online(m.p, target) {
				return false
			}
		}
		return true
	})
	for time.Since(back) < 3*time.Second {
		if w, e, ok := agreement(ms); ok && (w != w1 || e != e1) {
			t.Fatalf("the writer moved from %s to %s after %s came back (failback = never): %s", w1, w, target, views(ms))
		}
		time.Sleep(50 * time.Millisecond)
	}

	// A switchover to a node that died a moment ago: refused.
	var dead string
	for _, n := range sb.Nodes {
		if n.Name != w1 && n.Name != target {
			dead = n.Name
		}
	}
	if dead == "" {
		dead = target
	}
	if err := sb.Kill(dead); err != nil {
		t.Fatal(err)
	}
	err := via.p.Switchover(dead)
	if err == nil || !strings.Contains(err.Error(), "cannot take the writer role") {
		t.Fatalf("switchover to %s, killed a moment earlier: %v, want a refusal", dead, err)
	}
	t.Logf("switchover to a node killed a moment earlier: %v", err)
	if w, e, ok := agreement(ms); !ok || w != w1 || e != e1 {
		t.Errorf("the refused switchover moved or fenced the writer: %s", views(ms))
	}
	_ = sb.StartNode(ctx, dead)
}

// TestEtcdReturnIsANonEvent stops the only etcd member for 15 s under
// read and write load through three proxies; the agents' links are cut
// at the same moment and come back only 5 s after etcd (slow to
// re-register, so every registration lapses). No client sees an error,
// no proxy drops a node or moves the writer, and all leave degraded mode
// on the published decision.
func TestEtcdReturnIsANonEvent(t *testing.T) {
	sb := sandboxtest.New(t, sandbox.Options{Nodes: 3})
	endpoints, members := discoverytest.StartEtcdCluster(t, 1)
	agentsStore := openExternal(t, endpoints)
	severs := map[string]func(){}
	for _, n := range sb.Nodes {
		own, sever := discoverytest.ConnectCuttable(t, agentsStore)
		runAgent(t, sb, own, n)
		severs[n.Name] = sever
	}
	ms := startExternalProxies(t, sb, endpoints)
	w0, e0, _ := agreement(ms)
	db0, err := sb.DB(w0)
	if err != nil {
		t.Fatal(err)
	}
	createLedger(t, db0)
	var names []string
	for _, n := range sb.Nodes {
		names = append(names, n.Name)
		db, _ := sb.DB(n.Name)
		if _, err := db.Exec("SET STATEMENT wsrep_sync_wait=1 FOR SELECT 1 FROM app.ledger LIMIT 0"); err != nil {
			t.Fatal(err)
		}
	}
	b := startBank(ms, 2)
	l := startLedger(ms, 0, 2)
	loaded := time.Now()
	b.waitEach(t, ms, loaded, 20, 10*time.Second, "transfers acknowledged through every proxy")

	changes := map[string]int{}
	for _, m := range ms {
		changes[m.name] = countEvents(m.p, eventlog.WriterChange)
	}
	down := time.Now()
	for _, sever := range severs {
		sever()
	}
	members[0].Stop(t)
	waitFor(t, 10*time.Second, "every proxy degraded", func() bool { return degraded(ms, true) })
	for _, m := range ms {
		for _, r := range m.p.ProxiesRows() {
			if r.Controller {
				t.Errorf("%s, degraded, still shows %s as the controller", m.name, r.Name)
			}
		}
	}
	time.Sleep(time.Until(down.Add(15 * time.Second)))
	back := time.Now()
	members[0].Start(t)
	at := waitFor(t, 20*time.Second, "every proxy out of degraded mode", func() bool { return degraded(ms, false) })
	t.Logf("FIGURE etcd back -> every proxy out of degraded mode after %d ms", at.Sub(back).Milliseconds())
	// The agents' registrations lapse now (nobody keeps their leases
	// alive); the agents come back 5 s later.
	time.Sleep(time.Until(back.Add(5 * time.Second)))
	for _, n := range sb.Nodes {
		runAgent(t, sb, openExternal(t, endpoints), n)
	}
	at = waitFor(t, 20*time.Second, "every node registered again", func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		nodes, err := agentsStore.Nodes(ctx)
		return err == nil && len(nodes) == len(sb.Nodes)
	})
	t.Logf("FIGURE agents restarted -> every node registered again after %d ms", at.Sub(back.Add(5*time.Second)).Milliseconds())
	registered := time.Now()
	b.waitEach(t, ms, registered, 20, 10*time.Second, "transfers acknowledged through every proxy after the agents' return")
	end := time.Now()
	acks := b.finish()
	l.finish()
	var gaps []string
	for _, m := range ms {
		gaps = append(gaps, fmt.Sprintf("%s %d ms", m.name, b.largestGap(m.name, down, end).Milliseconds()))
	}
	t.Logf("FIGURE etcd down 15 s and back, agents back 5 s later: largest gap between acknowledged transfers per proxy: %s", strings.Join(gaps, ", "))
	if len(b.errs)+len(l.errs) > 0 {
		t.Errorf("client errors around etcd's outage and return: writes %v, reads %v", b.errs, l.errs)
	}
	for _, m := range ms {
		if hasEvent(m.p, eventlog.NodeLeft, "") {
			t.Errorf("%s dropped a node because its registration lapsed: %s", m.name, eventKinds(m.p))
		}
		if countEvents(m.p, eventlog.WriterChange) != changes[m.name] {
			t.Errorf("%s changed writer around etcd's return: %s", m.name, eventKinds(m.p))
		}
	}
	if w, e, ok := agreement(ms); !ok || w != w0 || e != e0 {
		t.Errorf("writer %s epoch %d before the outage; after: %s", w0, e0, views(ms))
	}
	d, ok, err := readDecision(agentsStore)
	if err != nil || !ok || d.Writer != w0 || d.Epoch != e0 {
		t.Errorf("published decision after etcd's return: %+v %v %v, want %s at epoch %d", d, ok, err, w0, e0)
	}
	waitAllNodesHave(t, sb, names, acks)
}

// countEvents counts p's events of kind.
func countEvents(p *proxy.Proxy, kind string) int {
	n := 0
	for _, e := range p.Events() {
		if e.Kind == kind {
			n++
		}
	}
	return n
}
