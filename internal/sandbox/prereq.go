package sandbox

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
)

// checkPrerequisites names every missing package at once, so the user runs
// one install command instead of discovering them one failure at a time.
func checkPrerequisites(sstMethod string) error {
	var missing []string
	need := func(ok bool, pkg string) {
		if !ok {
			missing = append(missing, pkg)
		}
	}
	_, err := os.Stat(mariadbdPath())
	need(err == nil, "mariadb-server")
	need(lookPath("mariadb-install-db"), "mariadb-server")
	need(lookPath("mariadb"), "mariadb-client")
	_, err = os.Stat(GaleraLibrary)
	need(err == nil, "galera-4")
	switch sstMethod {
	case "rsync":
		need(lookPath("rsync"), "rsync")
	case "mariabackup":
		need(lookPath("mariadb-backup") || lookPath("mariabackup"), "mariadb-backup")
		need(lookPath("socat"), "socat")
	default:
		return fmt.Errorf("sst method %q is not supported: use rsync or mariabackup", sstMethod)
	}
	if _, _, err := mysqlIDs(); err != nil {
		need(false, "mariadb-server")
	}
	if len(missing) == 0 {
		return nil
	}
	return fmt.Errorf("missing packages: %s; install them with `apt-get install -y %s` (or run `make deps`)",
		strings.Join(dedupe(missing), ", "), strings.Join(dedupe(missing), " "))
}

func lookPath(name string) bool {
	_, err := exec.LookPath(name)
	return err == nil
}

func dedupe(xs []string) []string {
	seen := map[string]bool{}
	out := xs[:0]
	for _, x := range xs {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}

// checkPortsFree fails naming the first port that something else already
// listens on. It binds each port briefly on 127.0.0.1, which is exactly
// what the node would do.
func checkPortsFree(nodes []Node) error {
	for _, n := range nodes {
		for _, p := range n.Ports() {
			l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p.Port))
			if err != nil {
				return fmt.Errorf("port %d (%s) is already in use: choose another --base-port, or stop what listens there (`ss -ltnp 'sport = :%d'`)", p.Port, p.What, p.Port)
			}
			l.Close()
		}
	}
	return nil
}
