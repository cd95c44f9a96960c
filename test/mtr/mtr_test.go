// Package mtr_test runs MariaDB's own main test suite (mariadb-test-run
// --extern, from Debian's mariadb-test package) for the fixed list of
// tests in tests.txt against node1 of a real 3-node Galera sandbox:
// directly, then through galeon with the user pinned to the writer, then
// through galeon with the default read/write split (writes to node1,
// reads over node2 and node3). Every listed test that passes directly
// must pass through galeon in both modes: the suite is the judge of
// whether a session through galeon is the session the client set up.
package mtr_test

import (
	"bufio"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/galeon-db/galeon/internal/config"
	"github.com/galeon-db/galeon/internal/proxy"
	"github.com/galeon-db/galeon/internal/proxy/proxytest"
	"github.com/galeon-db/galeon/internal/sandbox"
	"github.com/galeon-db/galeon/internal/sandbox/sandboxtest"
)

// A run mode: how mariadb-test-run reaches node1.
const (
	direct       = "direct"
	writerPinned = "writer-pinned" // through galeon, root's default_hostgroup = "writer"
	split        = "split"         // through galeon, reads over node2 and node3
)

var modes = []string{direct, writerPinned, split}

func TestMainSuite(t *testing.T) {
	list := readList(t, "tests.txt")
	if _, err := os.Stat(filepath.Join(mtrHome, "mariadb-test-run.pl")); err != nil {
		t.Fatalf("MariaDB's test suite is not installed (%v): `make deps` installs Debian's mariadb-test package", err)
	}
	start := time.Now()
	work, err := os.MkdirTemp("", "galeon-mtr-")
	if err != nil {
		t.Fatal(err)
	}
	// The nodes run as mysql and read the tests' data files (LOAD DATA
	// INFILE of mtr's std_data copy in the vardir) through this path.
	if err := os.Chmod(work, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("mariadb-test-run's output, .reject files and logs are kept in %s", work)
			return
		}
		os.RemoveAll(work)
	})

	sb := sandboxtest.New(t, sandbox.Options{})
	prepare(t, sb)
	base := takeBaseline(t, sb)
	node1, err := sb.Node("node1")
	if err != nil {
		t.Fatal(err)
	}

	results := map[string]map[string]outcome{}
	for _, mode := range modes {
		began := time.Now()
		tests := list.tests(mode)
		reset(t, sb, base)
		if mode == split && os.Getenv("HACK_SYNCWAIT") != "" {
			for _, n := range []string{"node2", "node3"} {
				mustExec(t, adminDB(t, sb, n), "SET GLOBAL wsrep_sync_wait = 1")
			}
		}
		dir := filepath.Join(work, mode)
		addr := node1.Addr()
		var p *proxy.Proxy
		stop := func() {}
		if mode != direct {
			p, addr, stop = proxytest.StartStoppable(t, proxyConfig(sb, mode), nil)
			waitRouting(t, p)
		}
		_, port, err := net.SplitHostPort(addr)
		if err != nil {
			t.Fatal(err)
		}
		res := runMTR(t, dir, port, tests)
		stop()
		results[mode] = res
		t.Logf("%-13s %3d of %d pass (%s)", mode, passes(res, tests), len(tests), time.Since(began).Round(time.Second))
	}

	// A listed test that fails directly is not galeon's: it is reported,
	// and too many of them mean the list no longer fits this server.
	want := results[direct]
	all := list.tests(direct)
	var failsDirectly []string
	for _, name := range all {
		if !want[name].passed() {
			failsDirectly = append(failsDirectly, name)
			t.Logf("%s fails directly (%s), so it is not required through galeon:\n%s", name, want[name].status, head(want[name].report, 20))
		}
	}
	if len(failsDirectly)*20 > len(all) {
		t.Errorf("%d of %d listed tests fail directly (%v): the list no longer fits this MariaDB or sandbox; choose it again (README.md)",
			len(failsDirectly), len(all), failsDirectly)
	}

	for _, mode := range modes[1:] {
		tests := list.tests(mode)
		identical := 0
		for _, name := range tests {
			d, g := want[name], results[mode][name]
			if sameOutput(d, g) {
				identical++
			}
			if d.passed() && !g.passed() {
				t.Errorf("%s: passes directly, %s through galeon (%s):\n%s", name, g.status, mode, head(g.report, 40))
			}
			if g.status == "estimates" {
				t.Logf("%s (%s): passes: %s", name, mode, g.report)
			}
		}
		t.Logf("%-13s %3d of %d outputs byte-identical to the direct run's", mode, identical, len(tests))
	}
	t.Logf("%d tests (%d also split), 3 runs, %s in all", len(all), len(list.tests(split)), time.Since(start).Round(time.Second))
}

// proxyConfig is galeon in front of the sandbox: node1 the writer and
// node2 and node3 the readers, with the Galera monitor, and root (empty
// password, logging into the nodes as root) pinned to the writer in the
// writer-pinned mode.
func proxyConfig(sb *sandbox.Sandbox, mode string) *config.Config {
	cfg := proxytest.Config(sb)
	c := sb.Credentials
	cfg.Galera.MonitorUser, cfg.Galera.MonitorPassword = c.MonitorUser, c.MonitorPassword
	u := config.User{Name: "root"}
	if mode == writerPinned {
		u.DefaultHostgroup = config.HostgroupWriter
	}
	cfg.Users = []config.User{u}
	return cfg
}

// waitRouting waits until the proxy's monitor has node1 as the writer and
// all three nodes ONLINE, so that the split mode really reads from node2
// and node3.
func waitRouting(t *testing.T, p *proxy.Proxy) {
	t.Helper()
	changes := p.ViewChanges()
	deadline := time.NewTimer(30 * time.Second)
	defer deadline.Stop()
	for {
		w, _, switching, online := p.RoutingState()
		if w == "node1" && !switching && len(online) == 3 {
			return
		}
		select {
		case <-changes:
		case <-deadline.C:
			t.Fatalf("galeon did not route to the sandbox within 30s: writer %q, online %v", w, online)
		}
	}
}

// testList is tests.txt: the tests, in order, and those that are not
// run in the split mode.
type testList struct {
	names      []string
	pinnedOnly map[string]bool
}

// tests are the tests a mode runs.
func (l testList) tests(mode string) []string {
	if mode != split {
		return l.names
	}
	var out []string
	for _, n := range l.names {
		if !l.pinnedOnly[n] {
			out = append(out, n)
		}
	}
	return out
}

// readList reads file: a test name per line, optionally followed by the
// word "pinned-only" (a test the split mode cannot pass for a reason
// that is Galera's, not galeon's, e.g. rows in MyISAM tables, which
// Galera does not replicate, read on another node); '#' starts a
// comment.
func readList(t *testing.T, file string) testList {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	l := testList{pinnedOnly: map[string]bool{}}
	seen := map[string]bool{}
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line, _, _ := strings.Cut(sc.Text(), "#")
		fields := strings.Fields(line)
		switch {
		case len(fields) == 0:
			continue
		case len(fields) > 2 || len(fields) == 2 && fields[1] != "pinned-only":
			t.Fatalf("%s:%d: want a test name, optionally followed by pinned-only: %q", file, n, line)
		case seen[fields[0]]:
			t.Fatalf("%s:%d: %s is listed twice", file, n, fields[0])
		}
		seen[fields[0]] = true
		l.names = append(l.names, fields[0])
		if len(fields) == 2 {
			l.pinnedOnly[fields[0]] = true
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(l.names) == 0 {
		t.Fatalf("%s lists no test", file)
	}
	return l
}

// passes counts the tests that passed (row estimates aside).
func passes(res map[string]outcome, tests []string) int {
	n := 0
	for _, name := range tests {
		if res[name].passed() {
			n++
		}
	}
	return n
}
