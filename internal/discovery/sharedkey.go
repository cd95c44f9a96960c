package discovery

import (
	"context"
	"fmt"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// RuntimeConfig is the key of the cluster's shared runtime configuration
// (one document, so that a change applies all at once).
func (k Keys) RuntimeConfig() string { return k.Config() + "runtime" }

// GetConfig reads the shared configuration document.
func (s *Store) GetConfig(ctx context.Context) (value []byte, ok bool, err error) {
	resp, err := s.Client.Get(ctx, s.Keys.RuntimeConfig())
	if err != nil || len(resp.Kvs) == 0 {
		return nil, false, err
	}
	return resp.Kvs[0].Value, true, nil
}

// SwapConfig writes next only if the document is still prev (nil: only
// if there is none), so that two proxies changing the configuration at
// once cannot silently undo each other. When the swap fails it returns
// the document as it is.
func (s *Store) SwapConfig(ctx context.Context, prev, next []byte) (ok bool, current []byte, err error) {
	key := s.Keys.RuntimeConfig()
	cmp := clientv3.Compare(clientv3.Value(key), "=", string(prev))
	if prev == nil {
		cmp = clientv3.Compare(clientv3.CreateRevision(key), "=", 0)
	}
	resp, err := s.Client.Txn(ctx).If(cmp).Then(clientv3.OpPut(key, string(next))).Else(clientv3.OpGet(key)).Commit()
	if err != nil {
		return false, nil, fmt.Errorf("write %s: %w", key, err)
	}
	if resp.Succeeded {
		return true, next, nil
	}
	if kvs := resp.Responses[0].GetResponseRange().Kvs; len(kvs) > 0 {
		current = kvs[0].Value
	}
	return false, current, nil
}

// WatchConfig sends the shared configuration document after each change
// (nil when there is none).
func (s *Store) WatchConfig(ctx context.Context) <-chan []byte {
	key := s.Keys.RuntimeConfig()
	return watchDecoded(ctx, s, key, func(raw map[string][]byte, _ int64) []byte { return raw[key] })
}
