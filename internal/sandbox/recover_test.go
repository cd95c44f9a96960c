package sandbox

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// fakeRecovery starts a shell standing in for mariadbd --wsrep-recover: it
// appends script's output to node1's error log, as mariadbd does.
func fakeRecovery(t *testing.T, script string) (*Sandbox, Node, int, *[]string) {
	t.Helper()
	dir := t.TempDir()
	n := Node{Index: 1, Name: "node1"}
	if err := os.MkdirAll(filepath.Join(dir, n.Name), 0o755); err != nil {
		t.Fatal(err)
	}
	var progress []string
	sb := &Sandbox{State: State{Name: "t", Dir: dir}, ctl: Control{Progress: func(_, msg string) { progress = append(progress, msg) }}}
	sb.ctl.setDefaults()
	cmd := exec.Command("/bin/sh", "-c", "{ "+script+"; } >> "+sb.errLog(n))
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := trackChild(cmd)
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	return sb, n, pid, &progress
}

func shorten(t *testing.T, timeout, grace time.Duration) {
	oldTimeout, oldGrace := recoverTimeout, recoverExitGrace
	recoverTimeout, recoverExitGrace = timeout, grace
	t.Cleanup(func() { recoverTimeout, recoverExitGrace = oldTimeout, oldGrace })
}

const recoveredLine = "2026-11-23 10:28:55 0 [Note] WSREP: Recovered position: a88509ae-e728-11f1-9cfb-c24335b7dbeb:130"

func TestRecoveryThatExitsGivesItsPosition(t *testing.T) {
	shorten(t, 10*time.Second, 5*time.Second)
	sb, n, pid, _ := fakeRecovery(t, "echo '"+recoveredLine+"'")
	g, err := sb.followRecovery(context.Background(), n, pid, 0)
	if err != nil || g.Seqno != 130 || g.UUID != "a88509ae-e728-11f1-9cfb-c24335b7dbeb" {
		t.Fatalf("followRecovery = %+v, %v; want a88509ae-…:130", g, err)
	}
}

// CI saw mariadbd --wsrep-recover print the position and then not exit
// for minutes: the position counts, and the process is killed.
func TestRecoveryStuckAfterThePositionIsKilled(t *testing.T) {
	shorten(t, time.Minute, 300*time.Millisecond)
	sb, n, pid, progress := fakeRecovery(t, "echo '"+recoveredLine+"'; exec sleep 60")
	start := time.Now()
	g, err := sb.followRecovery(context.Background(), n, pid, 0)
	if err != nil || g.Seqno != 130 {
		t.Fatalf("followRecovery = %+v, %v; want seqno 130", g, err)
	}
	if took := time.Since(start); took > 20*time.Second {
		t.Fatalf("returned after %s; the stuck process should be killed after the grace of %s", took, recoverExitGrace)
	}
	if processIs(pid, "sleep") {
		t.Fatalf("pid %d still runs", pid)
	}
	if len(*progress) != 1 || !strings.Contains((*progress)[0], "had not exited") {
		t.Fatalf("progress = %q; want one line saying the process was killed", *progress)
	}
}

func TestRecoveryWithoutPositionTimesOut(t *testing.T) {
	shorten(t, 300*time.Millisecond, time.Minute)
	sb, n, pid, _ := fakeRecovery(t, "echo 'InnoDB: Starting crash recovery'; exec sleep 60")
	g, err := sb.followRecovery(context.Background(), n, pid, 0)
	if err == nil || !strings.Contains(err.Error(), "did not finish") || g.Seqno != -1 {
		t.Fatalf("followRecovery = %+v, %v; want a 'did not finish' error", g, err)
	}
	if processIs(pid, "sleep") {
		t.Fatalf("pid %d still runs after the timeout", pid)
	}
}

func TestRecoveryWithoutPositionThatExits(t *testing.T) {
	shorten(t, 10*time.Second, 5*time.Second)
	sb, n, pid, _ := fakeRecovery(t, "echo '[ERROR] Aborting'")
	if g, err := sb.followRecovery(context.Background(), n, pid, 0); err != nil || g.Seqno != -1 {
		t.Fatalf("followRecovery = %+v, %v; want no position and no error (the caller reports the log)", g, err)
	}
}
