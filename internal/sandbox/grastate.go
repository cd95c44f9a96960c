package sandbox

import "github.com/galeon-db/galeon/internal/galera"

// GraState is a node's grastate.dat (see galera.Grastate).
type GraState = galera.Grastate

func readGraState(path string) (GraState, error) { return galera.ReadGrastate(path) }

func setSafeToBootstrap(path string) error { return galera.SetSafeToBootstrap(path) }

// chooseBootstrap picks the node to bootstrap a stopped cluster from: the
// highest seqno wins (it has every committed transaction); on a tie the
// node Galera marked safe_to_bootstrap wins, then the lowest index. Picking
// anything but the most advanced node would throw committed data away.
func chooseBootstrap(nodes []Node, states map[string]GraState) Node {
	best := nodes[0]
	for _, n := range nodes[1:] {
		a, b := states[n.Name], states[best.Name]
		switch {
		case a.Seqno > b.Seqno:
			best = n
		case a.Seqno == b.Seqno && a.SafeToBootstrap && !b.SafeToBootstrap:
			best = n
		}
	}
	return best
}
