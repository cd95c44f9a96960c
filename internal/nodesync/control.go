package nodesync

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/galeon-db/galeon/internal/controller"
	"github.com/galeon-db/galeon/internal/discovery"
	"github.com/galeon-db/galeon/internal/proxy"
	"github.com/galeon-db/galeon/internal/sharedconfig"
)

// Options name a proxy in the control plane.
type Options struct {
	// Name is the proxy's name: its record's key and its election value.
	Name string
	// MySQL and Admin are the addresses it serves (shown to operators).
	MySQL, Admin string
	// TTL is the lease of the proxy's record and controller term
	// (default 2s).
	TTL time.Duration
	// FenceTimeout bounds the wait for proxies to confirm a fence.
	FenceTimeout time.Duration
	// RecoveryGrace: see controller.Config.
	RecoveryGrace time.Duration
	// Probe is how often the proxy checks that etcd answers (default
	// 500ms); after two failures in a row it decides alone (degraded).
	Probe time.Duration
	// Shared, if set, keeps the proxy's runtime configuration in step
	// with the cluster's shared one.
	Shared *sharedconfig.Sync
}

// Run joins p to the cluster's control plane until ctx ends: it follows
// the registered nodes (Follow), follows the controller's writer
// decisions, publishes the proxy's own record, watches whether etcd
// answers, and campaigns for the controller role. It returns when every
// goroutine it started has stopped.
func Run(ctx context.Context, store *discovery.Store, p *proxy.Proxy, opts Options, log *slog.Logger) {
	if opts.TTL <= 0 {
		opts.TTL = 2 * time.Second
	}
	if opts.Probe <= 0 {
		opts.Probe = 500 * time.Millisecond
	}
	p.FollowController(func(node string) error {
		// The controller answers at once, unless a fence is under way:
		// then after it (at most drain_grace).
		rctx, cancel := context.WithTimeout(ctx, opts.FenceTimeout+3*time.Second)
		defer cancel()
		return store.RequestSwitchover(rctx, node, opts.Name)
	})
	var wg sync.WaitGroup
	for _, f := range []func(){
		func() { Follow(ctx, store, p) },
		func() { followDecisions(ctx, store, p) },
		func() { followPeers(ctx, store, p, opts.Name) },
		func() { followOperation(ctx, store, p) },
		func() { followReplicas(ctx, store, p) },
		func() { probe(ctx, store, p, opts.Probe) },
		func() { publishRecord(ctx, store, p, opts, log) },
		func() {
			if opts.Shared != nil {
				opts.Shared.Run(ctx, p)
			}
		},
		func() {
			controller.Run(ctx, store, p, controller.Config{ID: opts.Name, TTL: opts.TTL, FenceTimeout: opts.FenceTimeout, RecoveryGrace: opts.RecoveryGrace}, log)
		},
	} {
		wg.Add(1)
		go func() { defer wg.Done(); f() }()
	}
	wg.Wait()
}

func toProxy(d discovery.WriterDecision) proxy.Decision {
	return proxy.Decision{Writer: d.Writer, Epoch: d.Epoch, Fencing: d.Fencing, Next: d.Next, OldFailed: d.OldFailed, Controller: d.Controller, Reason: d.Reason, Fenced: d.Fenced}
}

// apply hands a read or watched decision to the proxy; a rejected value
// is an event, never applied.
func apply(p *proxy.Proxy, u discovery.DecisionUpdate, reported *string) {
	if u.Rejected != nil {
		if msg := u.Rejected.Error(); msg != *reported {
			*reported = msg
			p.RecordRejected(msg)
		}
		return
	}
	*reported = ""
	if u.Present {
		p.ApplyDecision(toProxy(u.Decision), u.Revision)
	}
}

func followDecisions(ctx context.Context, store *discovery.Store, p *proxy.Proxy) {
	var reported string
	for u := range store.WatchWriter(ctx) {
		apply(p, u, &reported)
	}
}

// probe reads the decision every interval with a linearizable read: two
// failures in a row make the proxy degraded (it decides alone), the
// first success ends that. The read also catches up a decision that a
// broken watch missed.
func probe(ctx context.Context, store *discovery.Store, p *proxy.Proxy, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	failures := 0
	var reported string
	for {
		rctx, cancel := context.WithTimeout(ctx, every*2)
		u, err := store.ReadDecision(rctx)
		cancel()
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			if failures++; failures >= 2 {
				p.SetDegraded(true, err.Error())
			}
		} else {
			failures = 0
			p.SetDegraded(false, "")
			apply(p, u, &reported)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// publishRecord keeps the proxy's record current under its lease, after
// every change of its view (the controller waits on it to end a fence),
// and removes it on a clean stop.
func publishRecord(ctx context.Context, store *discovery.Store, p *proxy.Proxy, opts Options, log *slog.Logger) {
	changes := p.ViewChanges()
	t := time.NewTicker(time.Second)
	defer t.Stop()
	facts := func() discovery.ProxyFacts {
		w, epoch, switching, online := p.RoutingState()
		return discovery.ProxyFacts{Name: opts.Name, MySQL: opts.MySQL, Admin: opts.Admin, Writer: w, Epoch: epoch,
			Applied: p.Applied(), Seen: p.SeenEpoch(), Switching: switching, Degraded: p.Degraded(), Controller: p.IsController(), Online: online, Reached: p.Reached(), InUse: p.InUse()}
	}
	var rec *discovery.ProxyRecord
	defer func() {
		if rec != nil {
			cctx, cancel := context.WithTimeout(context.Background(), time.Second)
			_ = rec.Close(cctx)
			cancel()
		}
	}()
	for {
		uctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		var err error
		if rec == nil {
			rec, err = store.RegisterProxy(uctx, facts(), opts.TTL)
		} else {
			err = rec.Update(uctx, facts())
		}
		cancel()
		if err != nil && ctx.Err() == nil {
			log.Debug("proxy record not published", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-changes:
		case <-t.C:
		}
	}
}

// followPeers keeps the proxy's list of the cluster's proxies and its
// controller current, for the admin table proxies.
func followPeers(ctx context.Context, store *discovery.Store, p *proxy.Proxy, name string) {
	for facts := range store.WatchProxies(ctx) {
		peers := make([]proxy.Peer, 0, len(facts))
		leader := ""
		for _, f := range facts {
			if f.Controller {
				leader = f.Name
			}
			peers = append(peers, proxy.Peer{Name: f.Name, MySQL: f.MySQL, Admin: f.Admin, Writer: f.Writer, Epoch: f.Epoch,
				Applied: f.Applied, Switching: f.Switching, Degraded: f.Degraded, Online: f.Online, UpdatedAt: f.UpdatedAt})
		}
		p.SetPeers(peers, leader, name)
	}
}

// followOperation keeps the proxy's copy of the operator's operation in
// progress (a schema change), for its admin table, metrics and events.
func followOperation(ctx context.Context, store *discovery.Store, p *proxy.Proxy) {
	for op := range store.WatchOperation(ctx) {
		if op == nil {
			p.SetOperation(nil)
			continue
		}
		p.SetOperation(&proxy.Operation{ID: op.ID, Kind: op.Kind, By: op.By, Statement: op.Statement, Schema: op.Schema, Method: op.Method,
			Current: op.Current, Step: op.Step, Detail: op.Detail, Failed: op.Failed, Done: len(op.Done), Total: len(op.Order),
			Started: op.Started, Updated: op.Updated})
	}
}

// followReplicas keeps the proxy's copy of the asynchronous replicas, for
// its admin table, metrics and events.
func followReplicas(ctx context.Context, store *discovery.Store, p *proxy.Proxy) {
	for rs := range store.WatchReplicas(ctx) {
		out := make([]proxy.Replica, 0, len(rs))
		for _, r := range rs {
			secs := int64(-1)
			if r.BehindSeconds != nil {
				secs = *r.BehindSeconds
			}
			out = append(out, proxy.Replica{Name: r.Name, Address: r.Address, SourceNode: r.SourceNode, Up: r.Up,
				IORunning: r.IORunning, SQLRunning: r.SQLRunning, Error: r.Error, IOError: r.IOError, SQLError: r.SQLError,
				Behind: r.Behind, BehindSeconds: secs, State: r.State, Why: r.Why, Repoints: r.Repoints, RepointTook: r.RepointTook, LastRepoint: r.LastRepoint, Updated: r.UpdatedAt})
			if a := r.Archive; a != nil {
				out[len(out)-1].Archive = &proxy.Archive{Dir: a.Dir, Files: a.Files, Bytes: a.Bytes, BehindBytes: a.BehindBytes,
					LagSeconds: a.LagSeconds, Streaming: a.Streaming, Error: a.Error}
			}
		}
		p.SetReplicas(out)
	}
}
