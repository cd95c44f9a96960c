package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/galeon-db/galeon/internal/discovery"
	"github.com/galeon-db/galeon/internal/replica"
)

// Promote makes an asynchronous replica a writable primary of its own in
// the cluster's place (disaster recovery): the cluster is fenced — the
// controller names no writer, so no proxy that still sees the cluster
// writes there — and the replica's agent stops replicating and takes
// writes once it has what the cluster's agents last published (or
// CatchUp has passed).
type Promote struct {
	Store   *discovery.Store
	Replica string
	By      string
	// Force promotes while the cluster still runs (a planned move to the
	// disaster-recovery site): its writes stop first.
	Force bool
	// CatchUp bounds the replica's wait for the cluster's last published
	// position (default 30 s); Timeout the whole promotion (default
	// CatchUp + 1 min).
	CatchUp, Timeout time.Duration
	Progress         func(node, msg string)
}

// PromoteResult is what a promotion did.
type PromoteResult struct {
	Replica, Address string
	// Members are a DR cluster's nodes (every one takes writes).
	Members []string
	// SlavePos is what the replica had applied; ClusterPos the cluster's
	// last published position; Lost the cluster's transactions it lacked.
	SlavePos, ClusterPos string
	Lost                 int64
	// Fenced: every proxy's controller published no writer (false if no
	// proxy runs, or the fence was not seen in time).
	Fenced bool
	// ReadOnly names the old cluster's running nodes that their agents
	// made read-only (clients connected straight to them cannot write
	// either); NotReadOnly says, for each other running node, where it
	// stands ("node3: not read-only: why").
	ReadOnly    []string
	NotReadOnly []string
	Took        time.Duration
}

// fenceOfNodes is where the running nodes stand: read-only for the fence,
// and why not for the others (unknown until their agents say).
func fenceOfNodes(nodes []discovery.NodeFacts) (held, not []string, settled bool) {
	settled = true
	for _, n := range nodes {
		switch {
		case !n.Up || n.Left:
		case n.HoldsFence():
			held = append(held, n.Name)
		case n.ReadOnly && n.Fence != "":
			held = append(held, n.Name+" (the operator's read_only)")
		case n.Fence != "":
			not = append(not, n.Name+": "+n.Fence)
		default:
			not = append(not, n.Name+": not read-only: its agent has not applied the fence yet")
			settled = false
		}
	}
	return held, not, settled
}

// ClusterPosition is the furthest position in the cluster's domain the
// nodes' agents published, and that domain.
func ClusterPosition(nodes []discovery.NodeFacts) (pos string, domain uint32, err error) {
	var best replica.GTID
	found := false
	for _, n := range nodes {
		if n.GTIDDomain == nil {
			continue
		}
		if found && *n.GTIDDomain != domain {
			return "", 0, fmt.Errorf("the nodes' wsrep_gtid_domain_id differ (%d, %d): not one GTID stream", domain, *n.GTIDDomain)
		}
		domain, found = *n.GTIDDomain, true
		p, err := replica.ParsePosition(n.GTIDBinlogPos)
		if err != nil {
			continue
		}
		if g, ok := p[domain]; ok && g.Seqno > best.Seqno {
			best = g
		}
	}
	if !found {
		return "", 0, errors.New("no node's agent published the cluster's GTID domain (wsrep_gtid_mode and binary logs: a replication source)")
	}
	if best.Seqno == 0 {
		return "", domain, nil
	}
	return best.String(), domain, nil
}

// Run carries out the promotion.
func (p Promote) Run(ctx context.Context) (PromoteResult, error) {
	start := time.Now()
	if p.CatchUp <= 0 {
		p.CatchUp = 30 * time.Second
	}
	if p.Timeout <= 0 {
		p.Timeout = p.CatchUp + time.Minute
	}
	progress := p.Progress
	if progress == nil {
		progress = func(string, string) {}
	}
	res := PromoteResult{Replica: p.Replica}
	rs, err := p.Store.Replicas(ctx)
	if err != nil {
		return res, err
	}
	i := slices.IndexFunc(rs, func(r discovery.ReplicaFacts) bool { return r.Name == p.Replica })
	if i < 0 {
		return res, fmt.Errorf("no replica %s is registered: its agent (galeon agent --replica %s) must run beside it to promote it", p.Replica, p.Replica)
	}
	r := rs[i]
	if !r.Up {
		return res, fmt.Errorf("replica %s: its agent cannot reach it (%s)", p.Replica, r.Error)
	}
	res.Address, res.Members = r.Address, r.Members
	nodes, err := p.Store.Nodes(ctx)
	if err != nil {
		return res, err
	}
	var running []string
	for _, n := range nodes {
		if n.Up && n.Synced && !n.Left {
			running = append(running, n.Name)
		}
	}
	if len(running) > 0 && !p.Force {
		return res, fmt.Errorf("the cluster runs (%s Synced in a Primary component): promoting %s would make a second primary. For a planned move to it, --force fences the cluster in every proxy first, and the replica takes writes once it has applied the cluster's last position", strings.Join(running, ", "), p.Replica)
	}
	pos, domain, err := ClusterPosition(nodes)
	if err != nil {
		return res, err
	}
	res.ClusterPos = pos
	pr := discovery.Promotion{Replica: p.Replica, Address: r.Address, ClusterPos: pos, Domain: domain,
		CatchUpUntil: time.Now().Add(p.CatchUp).UTC(), Planned: len(running) > 0, By: p.By, At: time.Now().UTC()}
	if err := p.Store.BeginPromotion(ctx, pr); err != nil {
		return res, err
	}
	progress(p.Replica, fmt.Sprintf("promotion recorded: the cluster is fenced (no writer); the replica takes writes once it has the cluster's last position (%s; at most %s from now)", orNone(pos), p.CatchUp))

	wctx, cancel := context.WithTimeout(ctx, p.Timeout)
	defer cancel()
	said := ""
	err = until(wctx, p.Timeout, p.Replica+" promoted by its agent", func() bool {
		rs, err := p.Store.Replicas(wctx)
		if err != nil {
			return false
		}
		for _, x := range rs {
			if x.Name != p.Replica {
				continue
			}
			if now := x.State + ": " + x.Why; now != said {
				progress(p.Replica, now)
				said = now
			}
			r = x
			return x.Promoted
		}
		return false
	})
	if err != nil {
		return res, fmt.Errorf("%w (the promotion stays recorded and the cluster fenced; its agent goes on when it can: galeon replica list)", err)
	}
	res.SlavePos, res.Lost = r.SlavePos, r.Lost

	// Every proxy that still follows the control plane stops writing to
	// the old cluster: the controller publishes no writer.
	ps, _ := p.Store.Proxies(ctx)
	if len(ps) > 0 {
		ferr := until(wctx, 15*time.Second, "the fence published to every proxy", func() bool {
			u, err := p.Store.ReadDecision(wctx)
			if err != nil || !u.Present || u.Decision.Writer != "" || u.Decision.Fencing {
				return false
			}
			ps, err := p.Store.Proxies(wctx)
			if err != nil {
				return false
			}
			for _, x := range ps {
				if x.Applied < u.Decision.Epoch {
					return false
				}
			}
			return true
		})
		res.Fenced = ferr == nil
		if ferr != nil {
			progress(p.Replica, "the fence is recorded, but not every proxy confirmed it yet: "+ferr.Error())
		}
	}
	// The nodes' agents make the running nodes read-only (in the
	// cluster's place, nothing may write to them); a few seconds at most.
	_ = until(wctx, 5*time.Second, "the nodes' agents to apply the fence", func() bool {
		nodes, err := p.Store.Nodes(wctx)
		if err != nil {
			return false
		}
		var settled bool
		res.ReadOnly, res.NotReadOnly, settled = fenceOfNodes(nodes)
		return settled
	})
	if len(res.ReadOnly) > 0 {
		progress(p.Replica, "read-only now (clients connected straight to them cannot write either): "+strings.Join(res.ReadOnly, ", "))
	}
	for _, why := range res.NotReadOnly {
		progress(p.Replica, why)
	}
	res.Took = time.Since(start)
	return res, nil
}

// Unfence removes a promotion: the controller may name a writer in the
// old cluster again. Whatever the promoted replica took since is not in
// the cluster. The fence is lifted in two steps: the record says it is
// being lifted, and the nodes' agents make their nodes writable again and
// remove their marks (discovery.FenceMark); then the record goes, and the
// controller names a writer — which is then writable. A node whose mark
// is still there after 10 s is named in stillReadOnly (its agent down, or
// failing to lift it); its agent lifts it when it can, fence or no fence.
func Unfence(ctx context.Context, store *discovery.Store) (pr *discovery.Promotion, stillReadOnly []string, err error) {
	pr, err = store.LiftPromotion(ctx)
	if err != nil {
		return nil, nil, err
	}
	_ = until(ctx, 10*time.Second, "the nodes' agents to lift the fence", func() bool {
		marked, err := store.FenceMarked(ctx)
		if err != nil {
			return false
		}
		nodes, _ := store.Nodes(ctx)
		stillReadOnly = stillReadOnly[:0]
		for _, name := range marked {
			why := "its agent is not running: start it, or SET GLOBAL read_only = OFF there"
			for _, n := range nodes {
				if n.Name == name && n.Fence != "" {
					why = n.Fence
				}
			}
			stillReadOnly = append(stillReadOnly, name+" ("+why+")")
		}
		return len(stillReadOnly) == 0
	})
	// The record goes even if the wait was cut short (an interrupted
	// command): left "lifting", it would fence with no read_only.
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	return pr, stillReadOnly, store.ClearPromotion(cctx)
}
