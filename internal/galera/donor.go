package galera

import (
	"context"
	"sort"
)

// DonorCandidate is a node that might serve a joiner's state transfer,
// as its agent reports it.
type DonorCandidate struct {
	Name string
	// Synced: the node is Synced in a Primary component (a Donor, a
	// Joiner or a desynced node cannot serve another joiner).
	Synced bool
	// CachedDownto is the lowest seqno its gcache still holds
	// (wsrep_local_cached_downto; 0 when unknown).
	CachedDownto int64
	RecvQueue    int
	Segment      int
	Site         string // its data centre, as its agent publishes it ("" unknown)
}

// Joiner is the node about to join: its last committed seqno (-1: none,
// it needs a full snapshot) and its segment.
type Joiner struct {
	Name    string
	Seqno   int64
	Segment int
	Site    string
}

// ChooseDonors returns the nodes to offer a joiner as wsrep_sst_donor,
// best first. It is a pure function of its arguments:
//
//   - Only Synced nodes can serve, and never the joiner itself.
//   - Never the writer while another node can serve: a blocking snapshot
//     (rsync, mysqldump) on the writer stops every write, and the proxies
//     would drain it and move the writer.
//   - A node whose gcache still holds the joiner's next write-set first:
//     it serves by IST, incrementally, without a snapshot.
//   - Then a node of the joiner's own segment, then of its own site
//     (multi-DC: no snapshot across the WAN, also where segments are not
//     set up), then the least loaded (shortest receive queue), then by
//     name, so every caller offers the same list.
//
// The writer is offered only when no other node can serve; the list is
// empty when no node can.
func ChooseDonors(j Joiner, cands []DonorCandidate, writer string) []string {
	ist := func(c DonorCandidate) bool {
		return j.Seqno >= 0 && c.CachedDownto > 0 && c.CachedDownto <= j.Seqno+1
	}
	var ok []DonorCandidate
	for _, c := range cands {
		if c.Synced && c.Name != j.Name {
			ok = append(ok, c)
		}
	}
	sort.Slice(ok, func(a, b int) bool {
		x, y := ok[a], ok[b]
		if (x.Name == writer) != (y.Name == writer) {
			return y.Name == writer
		}
		if ist(x) != ist(y) {
			return ist(x)
		}
		if (x.Segment == j.Segment) != (y.Segment == j.Segment) {
			return x.Segment == j.Segment
		}
		if j.Site != "" && (x.Site == j.Site) != (y.Site == j.Site) {
			return x.Site == j.Site
		}
		if x.RecvQueue != y.RecvQueue {
			return x.RecvQueue < y.RecvQueue
		}
		return x.Name < y.Name
	})
	out := make([]string, 0, len(ok))
	for _, c := range ok {
		if c.Name != writer || len(ok) == 1 {
			out = append(out, c.Name)
		}
	}
	return out
}

type donorsKey struct{}

// WithDonors returns ctx carrying the donors a joining node is to offer
// (wsrep_sst_donor), best first: how an agent tells whatever starts the
// node (the sandbox, a shell command) the control plane's choice.
func WithDonors(ctx context.Context, donors []string) context.Context {
	return context.WithValue(ctx, donorsKey{}, donors)
}

// DonorsFrom returns the donors ctx carries, or nil (Galera chooses).
func DonorsFrom(ctx context.Context) []string {
	d, _ := ctx.Value(donorsKey{}).([]string)
	return d
}
