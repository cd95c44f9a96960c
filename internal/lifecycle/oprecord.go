package lifecycle

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/galeon-db/galeon/internal/discovery"
)

// opRecord is an operation in progress and its record in etcd: every
// change is written at once, and a heartbeat rewrites it every
// heartbeatEvery while nothing else does, so that another galeon can
// tell a live operation from one whose process died (see live).
type opRecord struct {
	mu    sync.Mutex
	op    discovery.Operation
	store *discovery.Store
}

const (
	heartbeatEvery = 5 * time.Second
	// deadAfter: an operation not written for this long, and not
	// stopped, was left by a process that died.
	deadAfter = 30 * time.Second
)

// set changes the operation with f and writes it.
func (r *opRecord) set(ctx context.Context, f func(op *discovery.Operation)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	f(&r.op)
	r.op.Updated = time.Now()
	_ = r.store.UpdateOperation(context.WithoutCancel(ctx), r.op)
}

// get is a copy of the operation.
func (r *opRecord) get() discovery.Operation {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.op
}

// heartbeat rewrites the record until ctx ends.
func (r *opRecord) heartbeat(ctx context.Context) {
	t := time.NewTicker(heartbeatEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			r.set(ctx, func(*discovery.Operation) {})
		}
	}
}

// live refuses to take over an operation that another galeon is still
// running: not stopped, and written within deadAfter.
func live(op *discovery.Operation) error {
	if op.Failed == "" && time.Since(op.Updated) < deadAfter {
		return fmt.Errorf("%s %s is running (by %s, its record written %s ago): wait for it, or stop that galeon first", op.Kind, op.ID, op.By, time.Since(op.Updated).Round(time.Second))
	}
	return nil
}

// opDefaults fills an operation's unset settings: drain 10 s (as
// drain_grace), catching up 30 min (a node applies all the cluster wrote
// meanwhile), progress nowhere.
func opDefaults(drain, sync *time.Duration, progress *func(node, msg string)) {
	if *drain <= 0 {
		*drain = 10 * time.Second
	}
	if *sync <= 0 {
		*sync = 30 * time.Minute
	}
	if *progress == nil {
		*progress = func(string, string) {}
	}
}
