package memtrim

import (
	"context"
	"testing"
	"time"
)

// TestTrimsOnlyWhenEnoughWasDropped: small drops pile up without a trim;
// once they pass Threshold, the next tick trims and starts the count anew.
func TestTrimsOnlyWhenEnoughWasDropped(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	trims := make(chan int64, 4)
	go Run(ctx, 10*time.Millisecond, func(n int64) { trims <- n })
	Dropped(Threshold / 2)
	Dropped(0)
	Dropped(-5)
	select {
	case n := <-trims:
		t.Fatalf("trimmed after %d bytes, below the threshold", n)
	case <-time.After(100 * time.Millisecond):
	}
	Dropped(Threshold / 2)
	select {
	case n := <-trims:
		if n != Threshold {
			t.Errorf("trim reported %d bytes, want %d", n, Threshold)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no trim after Threshold bytes were dropped")
	}
	if d := dropped.Load(); d != 0 {
		t.Errorf("%d bytes still counted after the trim", d)
	}
}
