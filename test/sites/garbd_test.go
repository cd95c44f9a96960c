package sites_test

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/galeon-db/galeon/internal/sandbox"
	"github.com/galeon-db/galeon/internal/sandbox/sandboxtest"
)

// cli runs `galeon sandbox ARGS --dir DIR` as a user would, and fails
// the test if it fails.
func cli(t *testing.T, sb *sandbox.Sandbox, args ...string) string {
	t.Helper()
	args = append(append([]string{"sandbox"}, args...), "--dir", sb.Dir)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, galeonBin, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("galeon %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// arbitratorRow returns the status of sb's arbitrator name.
func arbitratorRow(t *testing.T, sb *sandbox.Sandbox, name string) sandbox.NodeStatus {
	t.Helper()
	for _, s := range sb.Status(context.Background()) {
		if s.Name == name {
			if s.Role != "arbitrator" {
				t.Fatalf("%s has role %q, want arbitrator", name, s.Role)
			}
			return s
		}
	}
	t.Fatalf("sandbox status has no row for %s", name)
	return sandbox.NodeStatus{}
}

// TestRestartsCountTheArbitrator is issue 25's point 2 on 1+1+garbd: a
// data node killed and restarted, or started again with start-node or a
// partial start, comes back Synced in a component of 3 (the arbitrator
// counted), and the arbitrator itself can be killed, started and
// restarted by name, and is shown by sandbox status.
func TestRestartsCountTheArbitrator(t *testing.T) {
	sb := sandboxtest.New(t, sandbox.Options{Sites: "dc1:1,dc2:1,dc3:garbd", Control: sandbox.Control{AgentBinary: galeonBin}})
	ctx := context.Background()
	waitView(t, sb, "the cluster at start", allPrimary(sb, 3), time.Minute)
	whole := func(what string) {
		t.Helper()
		want := allPrimary(sb, 3)
		waitView(t, sb, what, want, time.Minute)
		for n, v := range observe(t, sb) {
			if v.state != "Synced" {
				t.Errorf("%s: %s is %q, want Synced", what, n, v.state)
			}
		}
	}

	// The repro, through the CLI: kill dc2-1, restart it.
	cli(t, sb, "kill", "dc2-1")
	start := time.Now()
	out := cli(t, sb, "restart", "dc2-1")
	t.Logf("sandbox restart dc2-1 after a kill: %.1fs\n%s", time.Since(start).Seconds(), out)
	whole("after restart of a killed dc2-1")

	// start-node after a kill, in process.
	if err := sb.Kill("dc2-1"); err != nil {
		t.Fatal(err)
	}
	start = time.Now()
	if err := sb.StartNode(ctx, "dc2-1"); err != nil {
		t.Fatalf("start-node dc2-1: %v", err)
	}
	t.Logf("start-node dc2-1 after a kill: %.1fs", time.Since(start).Seconds())
	whole("after start-node dc2-1")

	// A partial start: dc2-1 down, dc1-1 and the arbitrator running.
	cli(t, sb, "kill", "dc2-1")
	start = time.Now()
	cli(t, sb, "start")
	t.Logf("sandbox start with dc2-1 killed: %.1fs", time.Since(start).Seconds())
	whole("after a partial start")

	// A clean restart of a running node.
	start = time.Now()
	cli(t, sb, "restart", "dc1-1")
	t.Logf("sandbox restart dc1-1 (running): %.1fs", time.Since(start).Seconds())
	whole("after restart of dc1-1")

	// The arbitrator: status shows it in the component.
	if a := arbitratorRow(t, sb, "dc3-garbd"); a.Process != "running" || a.ClusterStatus != "Primary" || a.ClusterSize != "3" || a.Site != "dc3" {
		t.Errorf("arbitrator status %+v, want running, Primary of 3, in dc3", a)
	}
	text := cli(t, sb, "status")
	if !strings.Contains(text, "dc3-garbd") || !strings.Contains(text, "arbitrator") {
		t.Errorf("sandbox status does not show the arbitrator:\n%s", text)
	}
	cli(t, sb, "kill", "dc3-garbd")
	if a := arbitratorRow(t, sb, "dc3-garbd"); a.Process != "stopped" {
		t.Errorf("after kill the arbitrator is %q", a.Process)
	}
	// dc1-1 and dc2-1 keep quorum: 2 of 3 votes.
	waitView(t, sb, "without the arbitrator", allPrimary(sb, 2), time.Minute)
	if err := exec.Command(galeonBin, "sandbox", "running", "dc3-garbd", "--dir", sb.Dir).Run(); err == nil {
		t.Error("sandbox running dc3-garbd: exit 0 for a killed arbitrator")
	}
	start = time.Now()
	cli(t, sb, "start-node", "dc3-garbd")
	t.Logf("start-node dc3-garbd after a kill: %.1fs", time.Since(start).Seconds())
	whole("after start-node dc3-garbd")
	start = time.Now()
	cli(t, sb, "restart", "dc3-garbd")
	t.Logf("restart dc3-garbd: %.1fs", time.Since(start).Seconds())
	whole("after restart of dc3-garbd")
	if a := arbitratorRow(t, sb, "dc3-garbd"); a.Process != "running" || a.ClusterStatus != "Primary" || a.ClusterSize != "3" {
		t.Errorf("arbitrator status after restart %+v", a)
	}
	// Every data node stopped while the arbitrator runs: start brings
	// the whole cluster back, the arbitrator in it.
	cli(t, sb, "stop-node", "dc2-1")
	cli(t, sb, "stop-node", "dc1-1")
	start = time.Now()
	cli(t, sb, "start")
	t.Logf("sandbox start with both data nodes stopped and garbd running: %.1fs", time.Since(start).Seconds())
	whole("after a start of every data node")
	if a := arbitratorRow(t, sb, "dc3-garbd"); a.Process != "running" || a.ClusterStatus != "Primary" || a.ClusterSize != "3" {
		t.Errorf("arbitrator status after the start %+v", a)
	}
	// Data-only commands refuse the arbitrator with a reason.
	if _, err := sb.Position(ctx, "dc3-garbd"); err == nil || !strings.Contains(err.Error(), "arbitrator") {
		t.Errorf("position of the arbitrator: %v", err)
	}
}
