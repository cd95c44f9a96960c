package controller

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/galeon-db/galeon/internal/discovery"
)

// Proxy is what the controller needs of the proxy it runs in.
type Proxy interface {
	// PolicyWriter is the writer policy over this proxy's view, given
	// the current writer and an operator's target ("" for none).
	PolicyWriter(current, preferred string) string
	// Failed says whether this proxy's monitor sees node failed
	// (unreachable, out of the Primary component), not merely draining.
	Failed(node string) bool
	// Probe checks node at once, out of the monitor's rhythm: nil when
	// it answers as a writer must (a switchover's target is checked so,
	// not on a verdict up to an interval old).
	Probe(ctx context.Context, node string) error
	// HeldBy names a node that counts node in the Primary component
	// while this proxy cannot reach node ("" for none).
	HeldBy(node string) string
	// Knows says whether node is in this proxy's view at all.
	Knows(node string) bool
	// ViewChanges signals every change of the proxy's view.
	ViewChanges() <-chan struct{}
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
	promotions := store.WatchPromotion(tctx)
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	var (
		cur        discovery.DecisionUpdate
		haveCur    bool
		live       []discovery.ProxyFacts
		haveLive   bool
		fenceSince time.Time
		settled    bool
		// request is an operator's switchover waiting for an answer.
		request *discovery.SwitchoverRequest
		// termStart: when this term began; waitedAbsent: the wait for
		// a writer not in this proxy's view was logged.
		termStart    = time.Now()
		waitedAbsent bool
		// cutLogged: the writer kept while this controller is cut off
		// from it (see CutOff), logged once.
		cutLogged string
		// vetoes: when a node the policy chose first failed the check
		// before it is named.
		vetoes = map[string]time.Time{}
		// fence: why the cluster has no writer at all (a replica was
		// promoted in its place); havePromotion: read once.
		fence         string
		havePromotion bool
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
			request = nil
			if r.Valid && r.State == discovery.SwitchoverPending {
				log.Info("switchover requested", "to", r.Node, "by", r.By)
				request = &r
			}
		case pr := <-promotions:
			fence, havePromotion = "", true
			if pr != nil {
				fence = pr.Fence()
			}
		case <-changes:
		case <-tick.C:
		}
		if !haveCur || !haveLive || !havePromotion || tctx.Err() != nil {
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
		limit := cfg.FenceTimeout
		if d.OldFailed {
			// A failed writer has nothing to finish: a proxy that does
			// not confirm within a lease is cut off and its record gone.
			limit = min(limit, cfg.TTL+time.Second)
		}
		in := Input{Current: d, Have: cur.Present, Proxies: live, Controller: cfg.ID, Now: time.Now(),
			FenceExpired: d.Fencing && time.Since(fenceSince) > limit}
		current := Current(d, cur.Present, live)
		if current != "" && !p.Knows(current) && seenOnline(live, current) && time.Since(termStart) < absentGrace {
			// A new controller that has not learnt of the writer yet
			// (its agent re-registers after etcd came back) while other
			// proxies see it ONLINE: absence here is no failure.
			if !waitedAbsent {
				log.Info("the writer is not in this controller's view yet, but other proxies see it ONLINE: waiting before deciding", "writer", current)
				waitedAbsent = true
			}
			continue
		}
		old := d.Writer
		if d.Fencing {
			old = d.Old
		}
		in.OldFailed = old != "" && p.Failed(old)
		in.Want = p.PolicyWriter(current, d.Target)
		if why := CutOff(current, p.Failed(current), p.HeldBy(current), live, cfg.ID); why != "" && !d.Fencing {
			// This controller is cut off from the writer; the cluster is
			// not: moving the role would stop the writes of every proxy
			// that reaches it, for this proxy's clients alone.
			if cutLogged != current {
				log.Warn("keeping the writer this controller cannot reach", "writer", current, "why", why)
				cutLogged = current
			}
			in.Want, in.OldFailed = current, false
		} else if why == "" {
			cutLogged = ""
		}
		if fence != "" {
			// A promoted replica took the cluster's place: no writer
			// here, whatever the policy or an operator's switchover
			// would choose.
			in.Want, in.OldFailed, in.Fenced = "", false, fence
			if request != nil {
				log.Warn("switchover ignored: the cluster is fenced", "to", request.Node, "why", fence)
				request = nil
			}
		}
		if request != nil && !d.Fencing {
			in.Target, in.Want = answer(tctx, lead, p, *request, current, log)
			request = nil
			if in.Target == "" {
				continue
			}
		}
		next, ok := Step(in)
		if !ok {
			continue
		}
		if named := next.Writer; named != "" && (!cur.Present || d.Fencing || named != d.Writer) {
			// The view can be an interval old: a node killed a moment
			// ago still looks fit. Check the one about to be named at
			// once (one round trip), for a bounded time.
			pctx, pcancel := context.WithTimeout(tctx, time.Second)
			err := p.Probe(pctx, named)
			pcancel()
			if err != nil && vetoing(vetoes, named, time.Now()) {
				log.Warn("not naming the writer the policy chose: it fails a check now", "node", named, "err", err)
				continue
			}
		}
		clear(vetoes)
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

// absentGrace bounds how long a new controller waits to learn of a
// writer that other proxies see ONLINE (agents re-register within a
// second or two of etcd's return).
const absentGrace = 15 * time.Second

// seenOnline says whether a live proxy's monitor sees node ONLINE.
func seenOnline(live []discovery.ProxyFacts, node string) bool {
	for _, p := range live {
		if slices.Contains(p.Online, node) {
			return true
		}
	}
	return false
}

// vetoLimit bounds how long a node the policy keeps choosing is kept
// from the writer role by failed checks alone: past it, the monitor's
// verdict stands (a check that fails for a reason the monitor does not
// see must not stop failovers for good).
const vetoLimit = 2 * time.Second

// vetoing says whether a failed check of node still keeps it from being
// named, recording when the first one was.
func vetoing(vetoes map[string]time.Time, node string, now time.Time) bool {
	first, ok := vetoes[node]
	if !ok {
		vetoes[node] = now
		return true
	}
	return now.Sub(first) < vetoLimit
}

// requestLife is how long a switchover request waits for a controller.
const requestLife = 30 * time.Second

// answer checks an operator's switchover request and records the
// answer in the request's key: it returns the target and the policy's
// choice with it preferred when the writer is to move, "" otherwise.
func answer(ctx context.Context, lead *discovery.Leadership, p Proxy, r discovery.SwitchoverRequest, current string, log *slog.Logger) (target, want string) {
	pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	fit := p.Probe(pctx, r.Node)
	cancel()
	if age := time.Since(r.At); age > requestLife {
		fit = fmt.Errorf("the request is %s old (made while no controller could answer): request it again", age.Round(time.Second))
	}
	want = p.PolicyWriter(current, r.Node)
	accept, noop, why := Answer(r.Node, current, want, fit)
	if !accept {
		log.Warn("switchover refused", "to", r.Node, "by", r.By, "why", why)
	} else {
		log.Info("switchover accepted", "to", r.Node, "by", r.By)
	}
	actx, acancel := context.WithTimeout(ctx, 2*time.Second)
	if err := lead.AnswerSwitchover(actx, r, accept, why); err != nil {
		log.Warn("answering the switchover request failed", "err", err)
	}
	acancel()
	if !accept || noop {
		return "", ""
	}
	return r.Node, want
}
