package sandbox

import (
	"bufio"
	"os"
	"strconv"
	"strings"
)

// GraState is what Galera records in grastate.dat: the cluster state UUID,
// the last committed seqno (-1 after a crash or while running) and whether
// this node may bootstrap a new cluster.
type GraState struct {
	UUID            string
	Seqno           int64
	SafeToBootstrap bool
}

func readGraState(path string) (GraState, error) {
	f, err := os.Open(path)
	if err != nil {
		return GraState{Seqno: -1}, err
	}
	defer f.Close()
	g := GraState{Seqno: -1}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		v = strings.TrimSpace(v)
		switch strings.TrimSpace(k) {
		case "uuid":
			g.UUID = v
		case "seqno":
			g.Seqno, _ = strconv.ParseInt(v, 10, 64)
		case "safe_to_bootstrap":
			g.SafeToBootstrap = v == "1"
		}
	}
	return g, sc.Err()
}

// setSafeToBootstrap rewrites the safe_to_bootstrap flag in place, keeping
// every other line as Galera wrote it.
func setSafeToBootstrap(path string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	lines := strings.Split(string(b), "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, "safe_to_bootstrap:") {
			lines[i] = "safe_to_bootstrap: 1"
		}
	}
	return os.WriteFile(path, []byte(strings.Join(lines, "\n")), 0o660)
}

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
