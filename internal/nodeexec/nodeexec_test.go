package nodeexec

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/galeon-db/galeon/internal/galera"
)

func grastate(t *testing.T, seqno string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "grastate.dat")
	body := "# GALERA saved state\nversion: 2.1\nuuid:    5ee99582-bb8d-11ee-8e3c-3ff8fa3ba4d6\nseqno:   " + seqno + "\nsafe_to_bootstrap: 0\n"
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestPositionAfterACleanStopComesFromGrastate(t *testing.T) {
	c := Commands{RunningCmd: "false", RecoverCmd: "exit 1", Grastate: grastate(t, "42")}
	g, err := c.Position(context.Background(), "node1")
	if err != nil || g.Seqno != 42 || g.UUID != "5ee99582-bb8d-11ee-8e3c-3ff8fa3ba4d6" {
		t.Fatalf("Position = %+v, %v; want grastate's seqno 42 without running the recover command", g, err)
	}
}

func TestPositionAfterACrashComesFromTheRecoverCommand(t *testing.T) {
	c := Commands{RunningCmd: "false", Grastate: grastate(t, "-1"),
		RecoverCmd: `echo "WSREP: Recovered position: 00000000-0000-0000-0000-000000000000:-1"; echo "--wsrep_start_position=5ee99582-bb8d-11ee-8e3c-3ff8fa3ba4d6:1234" # {node}`}
	g, err := c.Position(context.Background(), "node1")
	if err != nil || g.Seqno != 1234 {
		t.Fatalf("Position = %+v, %v; want the last position printed, 1234", g, err)
	}
	c.RecoverCmd = "echo nothing useful; echo for {node}"
	if _, err := c.Position(context.Background(), "node7"); err == nil || !strings.Contains(err.Error(), "for node7") {
		t.Errorf("unparsable recovery output: %v, want an error quoting it", err)
	}
}

func TestBootstrapMarksTheNodeSafeFirst(t *testing.T) {
	path := grastate(t, "42")
	c := Commands{RunningCmd: "false", BootstrapCmd: "grep -q 'safe_to_bootstrap: 1' " + path, Grastate: path}
	if err := c.BootstrapNode(context.Background(), "node1"); err != nil {
		t.Fatalf("bootstrap ran before grastate.dat was marked: %v", err)
	}
	c.BootstrapCmd = "echo cannot start {node} >&2; exit 3"
	if err := c.BootstrapNode(context.Background(), "node1"); err == nil || !strings.Contains(err.Error(), "cannot start node1") {
		t.Errorf("a failing command: %v, want its exit status and output", err)
	}
	// A running server is never bootstrapped, nor its position recovered.
	c.RunningCmd = "true"
	if err := c.BootstrapNode(context.Background(), "node1"); err == nil {
		t.Error("bootstrapped a running node")
	}
	if _, err := c.Position(context.Background(), "node1"); err == nil {
		t.Error("recovered the position of a running node")
	}
}

func TestRunningIsTheCommandsExitStatus(t *testing.T) {
	if !(Commands{RunningCmd: "true"}).Running("n") || (Commands{RunningCmd: "false"}).Running("n") {
		t.Error("Running does not follow the exit status")
	}
	if err := (Commands{}).Validate(); err == nil || !strings.Contains(err.Error(), "running") {
		t.Errorf("Validate of nothing: %v", err)
	}
	if err := Systemd("mariadb", "/var/lib/mysql/grastate.dat").Validate(); err != nil {
		t.Errorf("systemd defaults: %v", err)
	}
}

// A recover command whose server never exits must not hold the agent
// beyond its deadline: the whole process group is killed, including a
// grandchild that keeps the output pipe open.
func TestAHungCommandEndsWithItsDeadline(t *testing.T) {
	c := Commands{RunningCmd: "false", Grastate: grastate(t, "-1"), RecoverCmd: "sleep 60 & wait"}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := c.Position(ctx, "node1")
	if err == nil {
		t.Fatal("Position of a hung recover command succeeded")
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Fatalf("Position returned after %s, want soon after its 300ms deadline", took)
	}
}

// A start command that leaves a server running in the background, with
// the output still open, returns when the command itself is done.
func TestABackgroundedServerDoesNotHoldTheCommand(t *testing.T) {
	c := Commands{StartCmd: "sleep 3 & echo started {node}"}
	start := time.Now()
	out, err := c.output(context.Background(), c.StartCmd, "node1")
	if err != nil || !strings.Contains(out, "started node1") {
		t.Fatalf("output = %q, %v", out, err)
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Fatalf("returned after %s: held by the background process (sleep 3)", took)
	}
}

// The control plane's donors reach the start and restart commands.
func TestDonorsReachTheCommands(t *testing.T) {
	c := Commands{StartCmd: `echo "donors=[$GALEON_SST_DONORS]"`}
	ctx := galera.WithDonors(context.Background(), []string{"node3", "node2"})
	if out, err := c.output(ctx, c.StartCmd, "node1"); err != nil || !strings.Contains(out, "donors=[node3,node2]") {
		t.Errorf("with donors: %q, %v", out, err)
	}
	if out, err := c.output(context.Background(), c.StartCmd, "node1"); err != nil || !strings.Contains(out, "donors=[]") {
		t.Errorf("without donors: %q, %v", out, err)
	}
}

func TestReadOnlyCommandGetsTheValue(t *testing.T) {
	out := filepath.Join(t.TempDir(), "ro")
	c := Commands{ReadOnlyCmd: "echo {node}={value} >> " + out}
	for _, on := range []bool{true, false} {
		if err := c.SetReadOnly(context.Background(), "node2", on); err != nil {
			t.Fatal(err)
		}
	}
	if b, _ := os.ReadFile(out); string(b) != "node2=ON\nnode2=OFF\n" {
		t.Errorf("the command ran as %q", b)
	}
	if err := (Commands{}).SetReadOnly(context.Background(), "node2", true); err == nil || !strings.Contains(err.Error(), "--read-only-cmd") {
		t.Errorf("without a command: %v", err)
	}
	if (Commands{}).CanSetReadOnly() || !c.CanSetReadOnly() {
		t.Error("CanSetReadOnly does not follow ReadOnlyCmd")
	}
	if got := Systemd("mariadb", "/var/lib/mysql/grastate.dat").ReadOnlyCmd; !strings.Contains(got, "SET GLOBAL read_only = {value}") || !strings.Contains(got, "lock_wait_timeout") {
		t.Errorf("systemd's read-only command: %q", got)
	}
}
