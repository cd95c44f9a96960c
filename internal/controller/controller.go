package controller

import (
	"context"
	"log/slog"
	"time"

	"github.com/galeon-db/galeon/internal/discovery"
)

// Proxy is what the controller needs of the proxy it runs in.
type Proxy interface {
	// PolicyWriter is the writer policy over this proxy's view.
	PolicyWriter(current string) string
	// ViewChanges signals every change of the proxy's view.
	ViewChanges() <-chan struct{}
	// Prefer sets an operator's switchover target.
	Prefer(node string)
	// SetController records that this proxy became (or stopped being)
	// the controller.
	SetController(on bool)
	// Settled says whether the proxy's view rests on evidence (every
	// node checked): a new controller decides nothing before.
	Settled() bool
	// RecordRecovery records what the controller sees or does about a
	// cluster that lost every node.
	RecordRecovery(detail string)
}

// Config sets up a controller.
type Config struct {
	// ID names this proxy (its proxy record and election value).
	ID string
	// TTL is how long a dead controller keeps the role (default 2s).
	TTL time.Duration
	// FenceTimeout bounds how long a fence waits for proxies to confirm
	// (the proxies' drain_grace and a margin).
	FenceTimeout time.Duration
	// RecoveryGrace is how long a cluster with no Primary component is
	// left alone before the controller bootstraps it (default 5s; a
	// negative value turns automatic recovery off).
	RecoveryGrace time.Duration
}

// Run campaigns for the controller role and, while elected, publishes the
// writer decisions; it campaigns again after losing the role, until ctx
// ends (when it resigns, so another proxy takes over at once).
func Run(ctx context.Context, store *discovery.Store, p Proxy, cfg Config, log *slog.Logger) {
	if cfg.TTL <= 0 {
		cfg.TTL = 2 * time.Second
	}
	if cfg.RecoveryGrace == 0 {
		cfg.RecoveryGrace = 5 * time.Second
	}
	changes := p.ViewChanges()
	for ctx.Err() == nil {
		lead, err := store.Campaign(ctx, cfg.ID, cfg.TTL)
		if err != nil {
			select {
			case <-ctx.Done():
			case <-time.After(500 * time.Millisecond):
			}
			continue
		}
		log.Info("elected controller", "proxy", cfg.ID)
		p.SetController(true)
		serve(ctx, store, lead, p, changes, cfg, log)
		p.SetController(false)
		if ctx.Err() != nil {
			rctx, cancel := context.WithTimeout(context.Background(), time.Second)
			lead.Resign(rctx)
			cancel()
			return
		}
		log.Warn("lost the controller role", "proxy", cfg.ID)
	}
}

// serve decides while lead holds.
func serve(ctx context.Context, store *discovery.Store, lead *discovery.Leadership, p Proxy, changes <-chan struct{}, cfg Config, log *slog.Logger) {
	tctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if cfg.RecoveryGrace > 0 {
		recovered := make(chan struct{})
		go func() { defer close(recovered); recoverCluster(tctx, store, lead, p, cfg, log) }()
		defer func() { cancel(); <-recovered }()
	}
	decisions := store.WatchWriter(tctx)
	proxies := store.WatchProxies(tctx)
	requests := store.WatchSwitchover(tctx)
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	var (
		cur        discovery.DecisionUpdate
		haveCur    bool
		live       []discovery.ProxyFacts
		haveLive   bool
		fenceSince time.Time
		settled    bool
	)
	for {
		select {
		case <-lead.Done():
			return
		case <-tctx.Done():
			return
		case u := <-decisions:
			if u.Revision >= cur.Revision {
				cur, haveCur = u, true
			}
		case l := <-proxies:
			live, haveLive = l, true
		case r := <-requests:
			if r.Valid {
				log.Info("switchover requested", "to", r.Node, "by", r.By)
				p.Prefer(r.Node)
				dctx, dcancel := context.WithTimeout(tctx, 2*time.Second)
				_ = store.DoneSwitchover(dctx)
				dcancel()
			}
		case <-changes:
		case <-tick.C:
		}
		if !haveCur || !haveLive || tctx.Err() != nil {
			continue
		}
		// At the start of a term the view may not be checked yet: an
		// unchecked node must not count as failed (the writer would move
		// for nothing). Once settled, it stays so for the term.
		if settled = settled || p.Settled(); !settled {
			continue
		}
		d := cur.Decision
		if !d.Fencing {
			fenceSince = time.Time{}
		} else if fenceSince.IsZero() {
			fenceSince = time.Now()
		}
		in := Input{Current: d, Have: cur.Present, Proxies: live, Controller: cfg.ID, Now: time.Now(),
			FenceExpired: d.Fencing && time.Since(fenceSince) > cfg.FenceTimeout}
		in.Want = p.PolicyWriter(Current(d, cur.Present, live))
		next, ok := Step(in)
		if !ok {
			continue
		}
		pctx, pcancel := context.WithTimeout(tctx, 2*time.Second)
		rev, err := lead.Publish(pctx, next)
		pcancel()
		if err != nil {
			log.Warn("publishing the writer decision failed", "err", err)
			continue
		}
		log.Info("published writer decision", "writer", next.Writer, "epoch", next.Epoch, "fencing", next.Fencing, "next", next.Next, "reason", next.Reason)
		// Decide on from what was published, not the watch's older view.
		cur = discovery.DecisionUpdate{Decision: next, Present: true, Revision: rev}
	}
}
