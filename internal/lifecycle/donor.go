// Package lifecycle carries out the cluster operations that change its
// membership, from what the control plane knows, through the nodes'
// agents:
//
//   - donors: which donors a joining node is offered (galera.ChooseDonors
//     over the agents' facts and the published writer);
//   - membership: adding and removing a node (Membership);
//   - rolling restarts, one node at a time, drained first (Rolling);
//   - stopping and starting the whole cluster, and recovery after a full
//     outage: PlanRecovery (pure, table-tested) picks the node to
//     bootstrap from the agents' positions; ForceRecovery, WaitRecovered
//     and StartCluster carry it out;
//   - ThroughAgents: a node command (start, stop, restart) sent to a
//     node's agent through the control plane.
package lifecycle

import (
	"context"
	"time"

	"github.com/galeon-db/galeon/internal/discovery"
	"github.com/galeon-db/galeon/internal/galera"
)

// Donors returns the donors to offer joiner (at seqno, -1 for none), best
// first, from the registered nodes and the published writer: never the
// writer while another node can serve, IST-capable nodes first. It
// returns nil (Galera chooses) when the control plane cannot be read.
func Donors(ctx context.Context, store *discovery.Store, joiner string, seqno int64) ([]string, error) {
	nodes, err := store.Nodes(ctx)
	if err != nil {
		return nil, err
	}
	u, err := store.ReadDecision(ctx)
	if err != nil {
		return nil, err
	}
	writer := u.Decision.Writer
	if u.Decision.Fencing {
		writer = u.Decision.Next
	}
	j := galera.Joiner{Name: joiner, Seqno: seqno}
	cands := make([]galera.DonorCandidate, 0, len(nodes))
	for _, n := range nodes {
		if n.Name == joiner {
			j.Segment, j.Site = n.Segment, n.Site
			continue
		}
		cands = append(cands, galera.DonorCandidate{Name: n.Name, Synced: n.Synced, CachedDownto: n.CachedDownto,
			RecvQueue: n.RecvQueue, Segment: n.Segment, Site: n.Site})
	}
	return galera.ChooseDonors(j, cands, writer), nil
}

// SandboxDonors adapts Donors to a sandbox's joiners (see
// sandbox.Control.Donors); report hears why the choice fell back to
// Galera's own (report must not be nil).
func SandboxDonors(ctx context.Context, store *discovery.Store, report func(string)) func(joiner string, seqno int64) []string {
	return func(joiner string, seqno int64) []string {
		// Agents that have just started may not have registered yet
		// (they retry every second until etcd answers): wait a little for
		// a candidate rather than let Galera pick, perhaps the writer.
		deadline := time.Now().Add(5 * time.Second)
		for {
			d, err := Donors(ctx, store, joiner, seqno)
			switch {
			case err != nil:
				report("control plane unreadable, Galera chooses the donor: " + err.Error())
				return nil
			case len(d) > 0:
				return d
			case time.Now().After(deadline) || ctx.Err() != nil:
				report("no registered node can serve yet, Galera chooses the donor")
				return nil
			}
			time.Sleep(250 * time.Millisecond)
		}
	}
}
