package discovery

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// LeasedKey is one key kept under a lease of its own: if the process
// holding it dies, the lease expires and the key with it. Agents hold
// their node's registration this way, proxies their own record.
type LeasedKey struct {
	s     *Store
	key   string
	ttl   int64
	lease clientv3.LeaseID
	last  []byte
	stop  context.CancelFunc
	// lost is set when the keep-alive stream ends on its own: the lease
	// expired (etcd was unreachable longer than the TTL) and the key
	// with it.
	lost *atomic.Bool
}

// Lease grants a lease of ttl (at least etcd's minimum, about 2 s) for
// key and keeps it alive until Close. Nothing is written until Put.
func (s *Store) Lease(ctx context.Context, key string, ttl time.Duration) (*LeasedKey, error) {
	k := &LeasedKey{s: s, key: key, ttl: max(int64(ttl/time.Second), 2)}
	if err := k.grant(ctx); err != nil {
		return nil, err
	}
	return k, nil
}

func (k *LeasedKey) grant(ctx context.Context) error {
	if k.stop != nil {
		k.stop()
	}
	lg, err := k.s.Client.Grant(ctx, k.ttl)
	if err != nil {
		return fmt.Errorf("lease for %s: %w", k.key, err)
	}
	kctx, cancel := context.WithCancel(context.Background())
	ch, err := k.s.Client.KeepAlive(kctx, lg.ID)
	if err != nil {
		cancel()
		return fmt.Errorf("lease keep-alive for %s: %w", k.key, err)
	}
	lost := &atomic.Bool{}
	go func() {
		for range ch { // drain the acknowledgements; closed when kctx ends or the lease is lost
		}
		lost.Store(kctx.Err() == nil)
	}()
	k.lease, k.stop, k.last, k.lost = lg.ID, cancel, nil, lost
	return nil
}

// Put writes val under the lease unless sig (what identifies the value,
// timestamps aside) is the same as last time. A lease that expired
// meanwhile is granted anew and val written again, changed or not.
func (k *LeasedKey) Put(ctx context.Context, val, sig []byte) error {
	if k.lost.Load() {
		if err := k.grant(ctx); err != nil {
			return err
		}
	}
	if string(sig) == string(k.last) {
		return nil
	}
	_, err := k.s.Client.Put(ctx, k.key, string(val), clientv3.WithLease(k.lease))
	if err != nil && isLeaseGone(err) {
		if err = k.grant(ctx); err == nil {
			_, err = k.s.Client.Put(ctx, k.key, string(val), clientv3.WithLease(k.lease))
		}
	}
	if err != nil {
		return fmt.Errorf("publish %s: %w", k.key, err)
	}
	k.last = sig
	return nil
}

func isLeaseGone(err error) bool {
	return errors.Is(err, rpctypes.ErrLeaseNotFound) || errors.Is(err, rpctypes.ErrGRPCLeaseNotFound)
}

// Close removes the key at once (revoking the lease), as on a clean
// shutdown.
func (k *LeasedKey) Close(ctx context.Context) error {
	if k.stop != nil {
		k.stop()
	}
	_, err := k.s.Client.Revoke(ctx, k.lease)
	return err
}

// putStamped publishes v under k with its timestamp set to now, unless
// nothing but the timestamp changed since the last Put (stamp sets the
// value's timestamp field).
func putStamped[T any](ctx context.Context, k *LeasedKey, v T, stamp func(*T, time.Time)) error {
	cmp := v
	stamp(&cmp, time.Time{})
	sig, _ := json.Marshal(cmp)
	stamp(&v, time.Now().UTC())
	val, _ := json.Marshal(v)
	return k.Put(ctx, val, sig)
}
