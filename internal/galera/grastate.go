package galera

import (
	"bufio"
	"os"
	"strconv"
	"strings"
)

// Grastate is what Galera records in a node's grastate.dat: the cluster
// state UUID, the last committed seqno (-1 while the node runs and after a
// crash, when only mariadbd --wsrep-recover knows the position) and
// whether this node may bootstrap a new cluster. The sandbox, the agent
// and (for recovery) the controller all read it through ReadGrastate.
type Grastate struct {
	UUID            string `json:"uuid"`
	Seqno           int64  `json:"seqno"`
	SafeToBootstrap bool   `json:"safe_to_bootstrap"`
}

// ReadGrastate parses a grastate.dat. A missing or unreadable file gives
// seqno -1 and the error.
func ReadGrastate(path string) (Grastate, error) {
	g := Grastate{Seqno: -1}
	f, err := os.Open(path)
	if err != nil {
		return g, err
	}
	defer f.Close()
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

// SetSafeToBootstrap rewrites the safe_to_bootstrap flag in place, keeping
// every other line as Galera wrote it.
func SetSafeToBootstrap(path string) error {
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
