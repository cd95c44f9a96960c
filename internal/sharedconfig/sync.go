package sharedconfig

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"sync"
	"time"

	"github.com/galeon-db/galeon/internal/config"
	"github.com/galeon-db/galeon/internal/discovery"
	"github.com/galeon-db/galeon/internal/mysqlproto"
)

// Sync keeps one proxy's runtime configuration and the cluster's shared
// document in step.
type Sync struct {
	store *discovery.Store
	key   Key
	name  string
	log   *slog.Logger

	monitorUser, monitorPassword string

	mu sync.Mutex
	// current is the document this proxy runs with (applied or
	// published by it), the base of its next change.
	current []byte
	p       Proxy
}

// Proxy is what a Sync keeps in step: a running proxy's shared settings
// (implemented by *proxy.Proxy; the interface keeps the agents and the
// lifecycle commands, which use this package, from linking the proxy).
type Proxy interface {
	ApplyRuntime(config.Runtime) error
	ExportRuntime() config.Runtime
	OnSharedChange(func() error)
	RecordRejected(detail string)
	RecordConfigApplied(detail string)
}

// Bootstrap runs before the proxy is built: it merges the cluster's
// shared configuration into cfg — so a proxy whose file has little more
// than the discovery endpoint comes up with every user and rule — or,
// for the first proxy of a cluster, publishes cfg's. A document that
// cannot be used (corrupt, sealed with another key) is an error naming
// the key and what to do; the proxy does not start on half a config.
func Bootstrap(ctx context.Context, store *discovery.Store, cfg *config.Config, key Key, name string, log *slog.Logger) (*Sync, error) {
	s := &Sync{store: store, key: key, name: name, log: log}
	val, ok, err := store.GetConfig(ctx)
	if err != nil {
		return nil, fmt.Errorf("read the shared configuration from etcd: %w", err)
	}
	if !ok {
		val, err = Encode(FromConfig(cfg), cfg.Galera.MonitorUser, cfg.Galera.MonitorPassword, key, name)
		if err != nil {
			return nil, err
		}
		created, current, err := store.SwapConfig(ctx, nil, val)
		if err != nil {
			return nil, err
		}
		if created {
			log.Info("published this proxy's configuration as the cluster's shared configuration", "key", store.Keys.RuntimeConfig())
			s.current, s.monitorUser, s.monitorPassword = val, cfg.Galera.MonitorUser, cfg.Galera.MonitorPassword
			return s, nil
		}
		val = current // another proxy was first
	}
	d, err := Decode(store.Keys.RuntimeConfig(), val, key)
	if err != nil {
		return nil, err
	}
	Merge(cfg, d)
	s.current, s.monitorUser, s.monitorPassword = val, cfg.Galera.MonitorUser, cfg.Galera.MonitorPassword
	log.Info("running with the cluster's shared configuration", "updated_by", d.UpdatedBy, "updated_at", d.UpdatedAt, "users", len(d.Runtime.Users), "query_rules", len(d.Runtime.QueryRules))
	return s, nil
}

// Run applies every new document to p and publishes the changes made
// through p's admin interface, until ctx ends.
func (s *Sync) Run(ctx context.Context, p Proxy) {
	s.mu.Lock()
	s.p = p
	s.mu.Unlock()
	p.OnSharedChange(func() error { return s.publish(ctx) })
	reported := ""
	// The document Bootstrap merged set up the proxy's file settings;
	// applying it once more hands the proxy what a file cannot hold
	// (weights of nodes it has not discovered yet, drains).
	s.mu.Lock()
	first := s.current
	s.mu.Unlock()
	if err := s.apply(first); err != nil {
		reported = err.Error()
		p.RecordRejected(reported)
	}
	for val := range s.store.WatchConfig(ctx) {
		if val == nil {
			continue // deleted: keep running with what we have
		}
		s.mu.Lock()
		same := bytes.Equal(val, s.current)
		s.mu.Unlock()
		if same {
			continue
		}
		if err := s.apply(val); err != nil {
			if msg := err.Error(); msg != reported {
				reported = msg
				p.RecordRejected(msg)
				s.log.Warn("shared configuration rejected", "err", err)
			}
			continue
		}
		reported = ""
	}
}

// apply makes val the proxy's configuration.
func (s *Sync) apply(val []byte) error {
	d, err := Decode(s.store.Keys.RuntimeConfig(), val, s.key)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.p.ApplyRuntime(d.Runtime); err != nil {
		return fmt.Errorf("%s: %v", s.store.Keys.RuntimeConfig(), err)
	}
	s.current = val
	if d.MonitorUser != s.monitorUser || d.MonitorPassword != s.monitorPassword {
		s.log.Warn("the shared monitor account changed: restart this proxy to use it")
	}
	s.p.RecordConfigApplied(fmt.Sprintf("shared configuration from %s (%s) applied", d.UpdatedBy, d.UpdatedAt.Format(time.RFC3339)))
	return nil
}

// errConflict: another proxy changed the configuration first.
var errConflict = errors.New("conflict")

// publish shares the proxy's configuration after an admin change. If
// another proxy changed the document meanwhile, this change is undone
// (the proxy takes the other one) and the admin statement fails saying
// so: nothing is lost silently.
func (s *Sync) publish(ctx context.Context) error {
	s.mu.Lock()
	prev, p := s.current, s.p
	next, err := Encode(p.ExportRuntime(), s.monitorUser, s.monitorPassword, s.key, s.name)
	s.mu.Unlock()
	if err != nil {
		return err
	}
	pctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	ok, current, err := s.store.SwapConfig(pctx, prev, next)
	switch {
	case err != nil:
		// Not shared: undo it here too, so that proxies never differ.
		if prev != nil {
			_ = s.apply(prev)
		}
		return mysqlproto.NewSQLError(mysqlproto.ErGaleonNoBackend, "the change was not applied: the shared configuration in etcd cannot be written (%v); retry when etcd answers", err)
	case !ok:
		if current != nil {
			_ = s.apply(current)
		}
		return mysqlproto.NewSQLError(mysqlproto.ErGaleonNoBackend, "the change was not applied: another proxy changed the shared configuration at the same time (%v); look again and retry", errConflict)
	}
	s.mu.Lock()
	s.current = next
	s.mu.Unlock()
	return nil
}

// SetDrained puts node under an operator drain on every proxy (on) or
// ends it, by changing the shared document alone — no key is needed, the
// sealed secrets are carried over as they are. by names who asked.
func SetDrained(ctx context.Context, store *discovery.Store, node string, on bool, by string) error {
	for attempt := 0; attempt < 5; attempt++ {
		prev, ok, err := store.GetConfig(ctx)
		if err != nil {
			return err
		}
		if !ok {
			return errors.New("no shared configuration in etcd: is a proxy of the cluster running?")
		}
		var d Doc
		if err := json.Unmarshal(prev, &d); err != nil {
			return fmt.Errorf("%s: %v", store.Keys.RuntimeConfig(), err)
		}
		drained := d.Drained[:0:0]
		for _, n := range d.Drained {
			if n != node {
				drained = append(drained, n)
			}
		}
		if on {
			drained = append(drained, node)
		}
		sort.Strings(drained)
		d.Drained, d.UpdatedBy, d.UpdatedAt = drained, by, time.Now().UTC()
		next, _ := json.Marshal(d)
		swapped, _, err := store.SwapConfig(ctx, prev, next)
		if err != nil {
			return err
		}
		if swapped {
			return nil
		}
	}
	return errors.New("the shared configuration kept changing: retry")
}

// Drained lists the nodes under an operator drain in the shared
// configuration (none when there is no shared configuration).
func Drained(ctx context.Context, store *discovery.Store) ([]string, error) {
	raw, ok, err := store.GetConfig(ctx)
	if err != nil || !ok {
		return nil, err
	}
	var d Doc
	if err := json.Unmarshal(raw, &d); err != nil {
		return nil, fmt.Errorf("%s: %v", store.Keys.RuntimeConfig(), err)
	}
	return d.Drained, nil
}
