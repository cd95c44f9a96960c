package proxy

import (
	"testing"
	"time"

	"github.com/galeon-db/galeon/internal/backend"
	"github.com/galeon-db/galeon/internal/topology"
)

// TestReadsWindowTurnsOver: the reads each reader served, as runs are
// steered by them (readsWindow): counted over the previous window and
// this one while load is steady; over this one only after a pause of two
// windows or more, or after the readers or their weights changed; and
// kept across a new view that leaves the readers as they were.
func TestReadsWindowTurnsOver(t *testing.T) {
	pools := map[string]*backend.Pool{}
	for _, n := range []string{"node1", "node2", "node3"} {
		pools[n] = backend.NewPool(backend.ServerInfo{Name: n, Addr: "127.0.0.1:1"}, backend.Options{MaxConns: 1})
	}
	p := &Proxy{}
	p.pools.Store(&pools)
	v := topology.NewView([]topology.Server{
		{Name: "node1", WriterWeight: 100},
		{Name: "node2", ReaderWeight: 100},
		{Name: "node3", ReaderWeight: 100},
	})
	reads := func(n string, k int) {
		for range k {
			pools[n].CountRead()
		}
	}
	var w readsWindow
	t0 := time.Now()
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	check := func(step string, snap *topology.Snapshot, now time.Time, want2, want3 int64) {
		t.Helper()
		r := w.since(p, snap, now)
		if g2, g3 := r.served("node2"), r.served("node3"); g2 != want2 || g3 != want3 {
			t.Errorf("%s: served node2 %d, node3 %d; want %d, %d", step, g2, g3, want2, want3)
		}
	}
	snap := v.Load()
	check("first window", snap, at(0), 0, 0)
	reads("node2", 10)
	check("same window", snap, at(100*time.Millisecond), 10, 0)
	// Turned over: the previous window's reads still count.
	check("second window", snap, at(300*time.Millisecond), 10, 0)
	reads("node3", 5)
	// Turned over again: the first window's reads no longer count.
	check("third window", snap, at(600*time.Millisecond), 0, 5)

	// A new view with the same readers and weights (a status text) keeps
	// the window.
	v.SetState("node1", func(s *topology.Server) { s.Reason = "recv queue 150 > max 100" })
	if v.Load() == snap {
		t.Fatal("SetState published no new view")
	}
	snap = v.Load()
	check("same readers, new view", snap, at(700*time.Millisecond), 0, 5)

	// A change of weight starts over: what was served since the last
	// turnover no longer counts either.
	reads("node2", 3)
	check("before the change", snap, at(720*time.Millisecond), 3, 5)
	v.SetState("node3", func(s *topology.Server) { s.ReaderWeight = 300 })
	snap = v.Load()
	check("weights changed", snap, at(750*time.Millisecond), 0, 0)
	reads("node2", 7)
	check("after the change", snap, at(800*time.Millisecond), 7, 0)
	check("next window", snap, at(1100*time.Millisecond), 7, 0)
	reads("node3", 4)

	// A pause of two windows or more: what was served before says
	// nothing of now.
	check("after a pause", snap, at(2*time.Second), 0, 0)
}
