package discovery

import (
	"context"
	"encoding/json"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// watchDecoded follows every key under prefix and sends decode's view of
// all of them, first as they are now and then after every change, until
// ctx ends. A slow receiver gets only the latest. When the watch breaks
// (etcd restarted, unreachable, no leader), it reads the keys again and
// resumes, so a receiver always ends up with the current state.
func watchDecoded[T any](ctx context.Context, s *Store, prefix string, decode func(raw map[string][]byte, rev int64) T) <-chan T {
	out := make(chan T, 1)
	go func() {
		defer close(out)
		for delay := 100 * time.Millisecond; ctx.Err() == nil; delay = min(2*delay, 2*time.Second) {
			if watchOnce(ctx, s, prefix, decode, out) {
				delay = 100 * time.Millisecond
			}
			select {
			case <-ctx.Done():
			case <-time.After(delay):
			}
		}
	}()
	return out
}

// watchOnce reads the keys and follows changes until the watch ends; ok
// says whether it got as far as watching.
func watchOnce[T any](ctx context.Context, s *Store, prefix string, decode func(map[string][]byte, int64) T, out chan T) (ok bool) {
	resp, err := s.Client.Get(ctx, prefix, clientv3.WithPrefix())
	if err != nil {
		return false
	}
	raw := map[string][]byte{}
	for _, kv := range resp.Kvs {
		raw[string(kv.Key)] = kv.Value
	}
	send := func(rev int64) bool {
		v := decode(raw, rev)
		select { // keep only the latest for a slow receiver
		case <-out:
		default:
		}
		select {
		case out <- v:
			return true
		case <-ctx.Done():
			return false
		}
	}
	if !send(resp.Header.Revision) {
		return true
	}
	wctx, cancel := context.WithCancel(clientv3.WithRequireLeader(ctx))
	defer cancel()
	wch := s.Client.Watch(wctx, prefix, clientv3.WithPrefix(), clientv3.WithRev(resp.Header.Revision+1))
	for {
		// The watch channel is not closed on cancellation while the
		// client is reconnecting (etcd unreachable): ctx is checked too,
		// so that a stopping process never waits for etcd.
		var wr clientv3.WatchResponse
		var open bool
		select {
		case <-ctx.Done():
			return true
		case wr, open = <-wch:
		}
		if !open || wr.Err() != nil {
			return true
		}
		for _, ev := range wr.Events {
			if ev.Type == clientv3.EventTypeDelete {
				delete(raw, string(ev.Kv.Key))
			} else {
				raw[string(ev.Kv.Key)] = ev.Kv.Value
			}
		}
		if !send(wr.Header.Revision) {
			return true
		}
	}
}

// watchJSON follows one key holding a JSON value: nil while it is absent,
// bad's value when it does not decode.
func watchJSON[T any](ctx context.Context, s *Store, key string, bad func(error) *T) <-chan *T {
	return watchDecoded(ctx, s, key, func(raw map[string][]byte, _ int64) *T {
		v, ok := raw[key]
		if !ok {
			return nil
		}
		var out T
		if err := json.Unmarshal(v, &out); err != nil {
			return bad(err)
		}
		return &out
	})
}
