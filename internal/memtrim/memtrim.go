// Package memtrim gives memory back to the operating system after large
// buffers were dropped. A proxy that relayed a few 30 MiB values holds
// buffers that size per connection while it handles them; the protocol
// code drops them once the connection is idle again, but the Go runtime
// keeps the freed pages (the next collection is paced by the peak heap,
// and its scavenger returns pages slowly), so the process stayed at
// hundreds of MiB of RSS, idle, for many minutes. Dropped counts what was
// let go, and Run returns it to the system (runtime/debug.FreeOSMemory:
// a collection plus an immediate scavenge) when enough has piled up, at
// most once per interval, so a steady stream of large values costs one
// collection per interval, not one per value.
package memtrim

import (
	"context"
	"runtime/debug"
	"sync/atomic"
	"time"
)

// Threshold is how many dropped bytes make a trim worth a collection.
const Threshold = 16 << 20

var dropped atomic.Int64

// Dropped records n bytes of buffers let go (0 is a no-op, so callers
// pass what a release returned).
func Dropped(n int) {
	if n > 0 {
		dropped.Add(int64(n))
	}
}

// Run trims every interval if at least Threshold bytes were dropped since
// the last trim, until ctx ends. It reports each trim to onTrim (if set)
// with the bytes dropped.
func Run(ctx context.Context, interval time.Duration, onTrim func(dropped int64)) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if dropped.Load() < Threshold {
			continue
		}
		n := dropped.Swap(0)
		debug.FreeOSMemory()
		if onTrim != nil {
			onTrim(n)
		}
	}
}
