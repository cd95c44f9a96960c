package control_test

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/galeon-db/galeon/internal/discovery/discoverytest"
	"github.com/galeon-db/galeon/internal/lifecycle"
	"github.com/galeon-db/galeon/internal/sandbox"
	"github.com/galeon-db/galeon/internal/sandbox/sandboxtest"
)

// TestFaultFigures measures the write outage each proxy's clients see
// for the control plane's faults, GALEON_FAULT_RUNS times each (make
// faults; skipped otherwise: figures, not a pass/fail test): the writer
// killed (kill -9), the writer frozen 12 s (SIGSTOP), the only etcd
// member stopped 15 s and started again, and the writer killed while
// etcd is down. Three proxies, a bank load of two clients each; the
// outage of a proxy is the time from the fault to its first
// acknowledged COMMIT after it (for etcd: the largest gap between two),
// next to Galera's own view change in the same run.
func TestFaultFigures(t *testing.T) {
	runs, _ := strconv.Atoi(os.Getenv("GALEON_FAULT_RUNS"))
	if runs <= 0 {
		t.Skip("figures only: set GALEON_FAULT_RUNS (make faults)")
	}
	sb := sandboxtest.New(t, sandbox.Options{Nodes: 3})
	endpoints, members := discoverytest.StartEtcdCluster(t, 1)
	agents := openExternal(t, endpoints)
	for _, n := range sb.Nodes {
		runAgent(t, sb, agents, n)
	}
	dctx, dcancel := context.WithCancel(context.Background())
	defer dcancel()
	sb.SetDonors(func(j sandbox.Node, seqno int64) []string {
		return lifecycle.SandboxDonors(dctx, agents, func(string) {})(j.Name, seqno)
	})
	ms := startExternalProxies(t, sb, endpoints)
	w0, _, _ := agreement(ms)
	db0, _ := sb.DB(w0)
	createLedger(t, db0)
	b := startBank(ms, 2)
	defer b.finish()

	type sample struct{ view, outage []time.Duration }
	figures := map[string]*sample{}
	add := func(scenario string, view time.Duration, outages map[string]time.Duration) {
		s := figures[scenario]
		if s == nil {
			s = &sample{}
			figures[scenario] = s
		}
		s.view = append(s.view, view)
		for _, o := range outages {
			s.outage = append(s.outage, o)
		}
		t.Logf("%s: Galera view %d ms, outage per proxy %v", scenario, view.Milliseconds(), outages)
	}
	steady := func() {
		// Every node in one view: a node thawed after SIGSTOP reports
		// its old view as Synced/Primary for a while, then leaves and
		// rejoins (two view changes), which would land in the next
		// scenario's figures.
		waitFor(t, 120*time.Second, "every node in the same 3-member Primary view", func() bool {
			var ids []int64
			for _, n := range sb.Nodes {
				db, err := sb.DB(n.Name)
				if err != nil {
					return false
				}
				var k, status string
				var size, id int64
				if db.QueryRow("SHOW GLOBAL STATUS LIKE 'wsrep_cluster_size'").Scan(&k, &size) != nil ||
					db.QueryRow("SHOW GLOBAL STATUS LIKE 'wsrep_cluster_conf_id'").Scan(&k, &id) != nil ||
					db.QueryRow("SHOW GLOBAL STATUS LIKE 'wsrep_cluster_status'").Scan(&k, &status) != nil {
					return false
				}
				if size != int64(len(sb.Nodes)) || status != "Primary" {
					return false
				}
				ids = append(ids, id)
			}
			return slices.Min(ids) == slices.Max(ids)
		})
		waitFor(t, 120*time.Second, "every node ONLINE on every proxy and one writer", func() bool {
			for _, n := range sb.Nodes {
				for _, m := range ms {
					if !online(m.p, n.Name) {
						return false
					}
				}
			}
			_, _, ok := agreement(ms)
			return ok && degraded(ms, false)
		})
		from := time.Now()
		b.waitEach(t, ms, from, 10, 20*time.Second, "transfers through every proxy")
	}
	survivorDB := func(not string) (string, *sql.DB) {
		for _, n := range sb.Nodes {
			if n.Name != not {
				db, err := sb.DB(n.Name)
				if err != nil {
					t.Fatal(err)
				}
				return n.Name, db
			}
		}
		t.Fatal("no survivor")
		return "", nil
	}
	outages := func(at time.Time) map[string]time.Duration {
		out := map[string]time.Duration{}
		waitFor(t, 60*time.Second, "a transfer through every proxy after the fault", func() bool {
			for _, m := range ms {
				if _, ok := b.firstAfter(m.name, at); !ok {
					return false
				}
			}
			return true
		})
		for _, m := range ms {
			first, _ := b.firstAfter(m.name, at)
			out[m.name] = first.Sub(at)
		}
		return out
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	for range runs {
		// The writer killed.
		steady()
		w, _, _ := agreement(ms)
		_, sdb := survivorDB(w)
		at := time.Now()
		if err := sb.Kill(w); err != nil {
			t.Fatal(err)
		}
		view := waitPrimary(t, sdb, 2, at)
		add("writer kill -9", view, outages(at))
		if err := sb.StartNode(ctx, w); err != nil {
			t.Fatal(err)
		}

		// The writer frozen for 12 s.
		steady()
		w, _, _ = agreement(ms)
		_, sdb = survivorDB(w)
		at = time.Now()
		if err := sb.Pause(w); err != nil {
			t.Fatal(err)
		}
		view = waitPrimary(t, sdb, 2, at)
		add("writer SIGSTOP 12 s", view, outages(at))
		time.Sleep(time.Until(at.Add(12 * time.Second)))
		if err := sb.Resume(w); err != nil {
			t.Fatal(err)
		}

		// etcd stopped for 15 s and back.
		steady()
		w, _, _ = agreement(ms)
		_, sdb = survivorDB(w)
		conf0 := confID(t, sdb)
		at = time.Now()
		members[0].Stop(t)
		time.Sleep(time.Until(at.Add(15 * time.Second)))
		back := time.Now()
		members[0].Start(t)
		waitFor(t, 30*time.Second, "every proxy out of degraded mode", func() bool { return degraded(ms, false) })
		end := time.Now().Add(3 * time.Second)
		time.Sleep(time.Until(end))
		gaps := map[string]time.Duration{}
		for _, m := range ms {
			gap, began := b.largestGapAt(m.name, at, end)
			gaps[m.name] = gap
			t.Logf("etcd scenario: %s's largest gap began %d ms after etcd stopped (etcd started again at %d ms)", m.name, began.Sub(at).Milliseconds(), back.Sub(at).Milliseconds())
		}
		if conf := confID(t, sdb); conf != conf0 {
			t.Logf("etcd scenario: Galera changed view during it (wsrep_cluster_conf_id %d -> %d): its gaps are not etcd's", conf0, conf)
		}
		add("etcd down 15 s and back (largest gap)", 0, gaps)

		// The writer killed while etcd is down.
		steady()
		members[0].Stop(t)
		waitFor(t, 10*time.Second, "every proxy degraded", func() bool { return degraded(ms, true) })
		w, _, _ = agreement(ms)
		_, sdb = survivorDB(w)
		at = time.Now()
		if err := sb.Kill(w); err != nil {
			t.Fatal(err)
		}
		view = waitPrimary(t, sdb, 2, at)
		add("writer kill -9 with etcd down", view, outages(at))
		members[0].Start(t)
		if err := sb.StartNode(ctx, w); err != nil {
			t.Fatal(err)
		}
	}
	steady()
	var keys []string
	for k := range figures {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		s := figures[k]
		t.Logf("FIGURE %s, %d runs × %d proxies: write outage per proxy median %s (range %s); Galera's view change median %s (range %s)",
			k, runs, len(ms), median(s.outage), spread(s.outage), median(s.view), spread(s.view))
	}
	b.mu.Lock()
	for name, errs := range b.errs {
		t.Logf("%s: %d client errors over all runs", name, len(errs))
	}
	b.mu.Unlock()
}

// confID is the node's wsrep_cluster_conf_id: it grows at every view
// change of Galera's.
func confID(t *testing.T, db *sql.DB) int64 {
	t.Helper()
	var k string
	var id int64
	if err := db.QueryRow("SHOW GLOBAL STATUS LIKE 'wsrep_cluster_conf_id'").Scan(&k, &id); err != nil {
		t.Fatal(err)
	}
	return id
}

func median(ds []time.Duration) string {
	if len(ds) == 0 {
		return "-"
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return fmt.Sprintf("%d ms", s[len(s)/2].Milliseconds())
}

func spread(ds []time.Duration) string {
	if len(ds) == 0 {
		return "-"
	}
	return fmt.Sprintf("%d–%d ms", slices.Min(ds).Milliseconds(), slices.Max(ds).Milliseconds())
}
