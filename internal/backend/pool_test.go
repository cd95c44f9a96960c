package backend

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/galeon-db/galeon/internal/mysqlproto/prototest"
)

// testPool is a pool over a fake node that answers every command with OK:
// enough to exercise the pool without a database.
func testPool(t *testing.T, max int) (*Pool, func() int) {
	addr, accepted := prototest.FakeNode(t, "pw", 4096, prototest.OK)
	p := NewPool(ServerInfo{Name: "fake", Addr: addr}, Options{MaxConns: max, ConnectTimeout: time.Second, IdleTimeout: time.Minute, PingAfterIdle: time.Minute})
	t.Cleanup(func() { p.CloseIdle(true) })
	return p, accepted
}

var prof = Profile{User: "u", Password: "pw"}

func TestPoolReusesIdleConnections(t *testing.T) {
	p, accepted := testPool(t, 4)
	for i := 0; i < 20; i++ {
		c, err := p.Get(context.Background(), prof)
		if err != nil {
			t.Fatal(err)
		}
		p.Put(c, prof)
	}
	if n := accepted(); n != 1 {
		t.Errorf("20 sequential borrows opened %d connections, want 1", n)
	}
	st := p.Stats()
	if st.ConnUsed != 0 || st.ConnFree != 1 || st.ConnOK != 1 || st.MaxConnUsed != 1 {
		t.Errorf("stats %+v", st)
	}
}

// Many borrowers over few connections: every borrower is served, the
// limit holds, and nobody times out while connections come back.
func TestPoolHandsOffToWaitersInOrder(t *testing.T) {
	p, accepted := testPool(t, 3)
	var wg sync.WaitGroup
	var inUse, peak atomic.Int64
	errs := make(chan error, 200)
	for i := 0; i < 200; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			c, err := p.Get(ctx, prof)
			if err != nil {
				errs <- err
				return
			}
			n := inUse.Add(1)
			for m := peak.Load(); n > m && !peak.CompareAndSwap(m, n); m = peak.Load() {
			}
			time.Sleep(time.Millisecond)
			inUse.Add(-1)
			p.Put(c, prof)
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("borrow failed: %v", err)
	}
	if peak.Load() > 3 || accepted() > 3 {
		t.Errorf("peak %d connections in use, %d opened; limit 3", peak.Load(), accepted())
	}
}

func TestPoolTimesOutWhenFull(t *testing.T) {
	p, _ := testPool(t, 1)
	c, err := p.Get(context.Background(), prof)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := p.Get(ctx, prof); !errors.Is(err, ErrPoolFull) {
		t.Fatalf("got %v, want ErrPoolFull", err)
	}
	// The timed-out waiter must not have taken anything: the next borrow
	// after Put gets the connection at once.
	p.Put(c, prof)
	ctx2, cancel2 := context.WithTimeout(context.Background(), time.Second)
	defer cancel2()
	c2, err := p.Get(ctx2, prof)
	if err != nil {
		t.Fatal(err)
	}
	p.Put(c2, prof)
}

func TestFenceWritersClosesOnlyWriterConnections(t *testing.T) {
	p, _ := testPool(t, 4)
	w, _ := p.Get(context.Background(), prof)
	r, _ := p.Get(context.Background(), prof)
	p.MarkWriter(w, 7)
	if p.WriterInUse() != 1 {
		t.Fatalf("WriterInUse = %d", p.WriterInUse())
	}
	if n := p.FenceWriters(); n != 1 {
		t.Fatalf("fenced %d, want 1", n)
	}
	if !w.Fenced() || r.Fenced() {
		t.Fatalf("writer fenced %v, reader fenced %v", w.Fenced(), r.Fenced())
	}
	if err := w.Ping(); err == nil {
		t.Error("a fenced connection still works")
	}
	p.Put(w, prof) // closed, not pooled
	p.Put(r, prof)
	if p.WriterInUse() != 0 || p.Stats().ConnFree != 1 {
		t.Errorf("after release: writers in use %d, free %d", p.WriterInUse(), p.Stats().ConnFree)
	}
}

// WaitWritersDone wakes when the last writer-role connection comes back,
// and gives up when its context ends.
func TestWaitWritersDone(t *testing.T) {
	p, _ := testPool(t, 4)
	w1, _ := p.Get(context.Background(), prof)
	w2, _ := p.Get(context.Background(), prof)
	p.MarkWriter(w1, 3)
	p.MarkWriter(w2, 3)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	if p.WaitWritersDone(ctx) {
		t.Fatal("WaitWritersDone reported done with two writers in use")
	}
	cancel()
	done := make(chan bool)
	go func() { done <- p.WaitWritersDone(context.Background()) }()
	p.Put(w1, prof)
	select {
	case <-done:
		t.Fatal("woke with one writer still in use")
	case <-time.After(20 * time.Millisecond):
	}
	p.Put(w2, prof)
	select {
	case ok := <-done:
		if !ok {
			t.Fatal("WaitWritersDone = false after the last writer came back")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("WaitWritersDone did not wake when the last writer came back")
	}
}

// A writer change does not wait for a parked connection (held by an idle
// session with no transaction), which cannot be taken back while the
// change drains the pool, and is fenced with the others.
func TestParkedWritersAreNotWaitedFor(t *testing.T) {
	p, _ := testPool(t, 4)
	busy, _ := p.Get(context.Background(), prof)
	idle, _ := p.Get(context.Background(), prof)
	p.MarkWriter(busy, 3)
	p.MarkWriter(idle, 3)
	p.Park(idle)
	p.Park(idle) // twice is once
	if p.WriterInUse() != 1 {
		t.Fatalf("WriterInUse = %d with one of two parked, want 1", p.WriterInUse())
	}
	if !p.Unpark(idle) || p.WriterInUse() != 2 {
		t.Fatalf("unparked outside a drain: writers in use %d, want 2", p.WriterInUse())
	}
	p.Park(idle)
	p.DrainWriters(true)
	if p.Unpark(idle) {
		t.Fatal("a parked connection was taken back during a drain")
	}
	done := make(chan bool)
	go func() { done <- p.WaitWritersDone(context.Background()) }()
	p.Put(busy, prof)
	select {
	case ok := <-done:
		if !ok {
			t.Fatal("WaitWritersDone = false")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the drain waited for the parked connection")
	}
	if n := p.FenceWriters(); n != 1 || !idle.Fenced() {
		t.Fatalf("fenced %d (parked fenced %v), want the parked one", n, idle.Fenced())
	}
	p.DrainWriters(false)
	p.Discard(idle)
	if p.WriterInUse() != 0 {
		t.Errorf("writers in use after all came back: %d", p.WriterInUse())
	}
	// A parked reader-role connection is not counted as a writer, can
	// be taken back during a writer drain, and is not busy for a drain
	// of the node (Stats: in use, parked).
	r, _ := p.Get(context.Background(), prof)
	p.Park(r)
	if st := p.Stats(); st.ConnUsed != 1 || st.ConnParked != 1 {
		t.Errorf("a parked reader connection: used %d parked %d, want 1 and 1", st.ConnUsed, st.ConnParked)
	}
	p.DrainWriters(true)
	if !p.Unpark(r) || p.WriterInUse() != 0 {
		t.Errorf("a reader connection parked: writers in use %d", p.WriterInUse())
	}
	p.DrainWriters(false)
	if st := p.Stats(); st.ConnParked != 0 {
		t.Errorf("unparked: parked %d", st.ConnParked)
	}
	p.Park(r)
	p.Put(r, prof)
	if st := p.Stats(); st.ConnUsed != 0 || st.ConnParked != 0 {
		t.Errorf("a parked connection put back: used %d parked %d, want 0 and 0", st.ConnUsed, st.ConnParked)
	}
	// A parked writer connection marked again (a write on it) is busy.
	w, _ := p.Get(context.Background(), prof)
	p.MarkWriter(w, 4)
	p.Park(w)
	p.MarkWriter(w, 4)
	if st := p.Stats(); st.ConnParked != 0 || p.WriterInUse() != 1 {
		t.Errorf("a parked writer marked again: parked %d, writers in use %d, want 0 and 1", st.ConnParked, p.WriterInUse())
	}
	p.Put(w, prof)
}

// A connection kept for its session (Keep) goes back to that session,
// not to another while the pool can open one; when it cannot, the one
// kept longest goes first; Unkeep makes it anyone's again.
func TestKeptConnectionsGoBackToTheirSession(t *testing.T) {
	ctx := context.Background()
	p, accepted := testPool(t, 3)
	var got []*Conn
	t.Cleanup(func() {
		for _, c := range got {
			c.Close() // the fake node's cleanup waits for every connection
		}
	})
	get := func() *Conn {
		t.Helper()
		c, err := p.Get(ctx, prof)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, c)
		return c
	}
	a := get()
	genA := p.Keep(a, prof)
	// Another session gets a new connection, not a's.
	b := get()
	if b == a {
		t.Fatal("a kept connection went to another session while the pool had room")
	}
	if p.TryIdle(prof) != nil {
		t.Fatal("TryIdle handed out a kept connection while the pool had room")
	}
	if !p.TakeBack(a, prof, genA) {
		t.Fatal("the session could not take its kept connection back")
	}
	genA = p.Keep(a, prof)
	genB := p.Keep(b, prof)
	c := get() // a third connection: room for it
	if c == a || c == b || accepted() != 3 {
		t.Fatalf("with room in the pool a kept connection was handed out (%d opened)", accepted())
	}
	// Full now: the connection kept longest (a's) goes to the next borrower.
	if d := p.TryIdle(prof); d != a {
		t.Fatalf("full pool: TryIdle gave %p, want a's kept connection %p", d, a)
	}
	if p.TakeBack(a, prof, genA) {
		t.Fatal("a connection another session took was taken back")
	}
	st := p.Stats()
	if st.ConnUsed != 2 || st.ConnFree != 1 {
		t.Errorf("stats %+v: want 2 used (a, c) and 1 free (b, kept)", st)
	}
	// b's session moves on: b is an idle connection like any other, and
	// no longer its session's.
	p.Unkeep(b, prof, genB)
	p.Put(c, prof)
	if e := get(); e != c {
		t.Fatalf("Get gave %p, want the most recently used idle connection %p", e, c)
	}
	if !p.TakeBack(b, prof, genB) {
		t.Fatal("an unkept connection nobody used since could not be taken back")
	}
	if accepted() != 3 {
		t.Errorf("%d connections opened, want 3", accepted())
	}
}

// A kept connection is anyone's once kept longer than KeepFor, and its
// session still takes it back if nobody did; Reclaim pings one idle past
// PingAfterIdle and closes it if the ping fails.
func TestKeptConnectionsExpireAndArePingedWhenIdle(t *testing.T) {
	ctx := context.Background()
	addr, accepted := prototest.FakeNode(t, "pw", 4096, prototest.OK)
	p := NewPool(ServerInfo{Name: "fake", Addr: addr}, Options{MaxConns: 4, ConnectTimeout: time.Second, IdleTimeout: time.Minute,
		PingAfterIdle: time.Nanosecond, KeepFor: time.Nanosecond})
	t.Cleanup(func() { p.CloseIdle(true) })
	a, err := p.Get(ctx, prof)
	if err != nil {
		t.Fatal(err)
	}
	gen := p.Keep(a, prof)
	// Kept past KeepFor: another borrower gets it rather than a new one.
	b, err := p.Get(ctx, prof)
	if err != nil {
		t.Fatal(err)
	}
	if b != a || accepted() != 1 {
		t.Fatalf("after KeepFor a new connection was opened (%d in all) instead of the expired kept one", accepted())
	}
	if p.Reclaim(a, prof, gen) {
		t.Fatal("a session took back a connection another session holds")
	}
	gen = p.Keep(a, prof)
	if !p.Reclaim(a, prof, gen) { // expired to the idle list, unused since, pinged
		t.Fatal("the session could not take back its own expired, unused connection")
	}
	gen = p.Keep(a, prof)
	a.Close() // the node side is gone: the ping fails
	if p.Reclaim(a, prof, gen) {
		t.Fatal("a connection whose ping failed was taken back")
	}
	if st := p.Stats(); st.ConnUsed != 0 || st.ConnFree != 0 {
		t.Errorf("stats %+v: the failed connection should be gone", st)
	}
}
