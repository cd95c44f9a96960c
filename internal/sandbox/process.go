package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// mysqlIDs returns the uid and gid of the `mysql` account that Debian's
// mariadb-server package creates.
func mysqlIDs() (uint32, uint32, error) {
	u, err := user.Lookup("mysql")
	if err != nil {
		return 0, 0, fmt.Errorf("user mysql not found (%v): install mariadb-server (`make deps`)", err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return uint32(uid), uint32(gid), nil
}

func chownMysql(paths ...string) error {
	uid, gid, err := mysqlIDs()
	if err != nil {
		return err
	}
	for _, p := range paths {
		if err := os.Lchown(p, int(uid), int(gid)); err != nil {
			return err
		}
	}
	return nil
}

func chownMysqlTree(root string) error {
	uid, gid, err := mysqlIDs()
	if err != nil {
		return err
	}
	return filepath.Walk(root, func(p string, _ os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, int(uid), int(gid))
	})
}

// children tracks the mariadbd processes this process started, so it can
// reap them (a killed child would otherwise linger as a zombie and still
// look alive) and wait for their exit without polling.
var children = struct {
	sync.Mutex
	done map[int]chan struct{}
	// exit is how each child ended (kept for start-up failure messages).
	exit map[int]string
}{done: map[int]chan struct{}{}, exit: map[int]string{}}

// startProcess starts mariadbd for node n as user mysql, detached in its
// own session so it outlives the CLI. With killWithParent (tests), the
// kernel kills it if this process dies, so a crashed test run leaves no
// database behind.
func (s *State) startProcess(n Node, extraArgs []string, killWithParent bool) (int, error) {
	uid, gid, err := mysqlIDs()
	if err != nil {
		return 0, err
	}
	out, err := os.OpenFile(s.stdoutLog(n), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return 0, err
	}
	defer out.Close()
	args := append([]string{"--defaults-file=" + s.cnfPath(n)}, extraArgs...)
	cmd := exec.Command(mariadbdPath(), args...)
	cmd.Dir = s.nodeDir(n)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.Env = []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "HOME=" + s.nodeDir(n), "TMPDIR=" + s.nodeDir(n)}
	attr := &syscall.SysProcAttr{Setsid: true, Credential: &syscall.Credential{Uid: uid, Gid: gid}}
	if killWithParent {
		attr.Pdeathsig = syscall.SIGKILL
	}
	cmd.SysProcAttr = attr
	if err := s.startCmd(n.Site, cmd); err != nil {
		return 0, fmt.Errorf("start %s: %w", n.Name, err)
	}
	pid := trackChild(cmd)
	// mariadbd writes its own pid file later; record ours now so that a
	// node that dies during start-up can still be found and cleaned up.
	if err := os.WriteFile(s.pidPath(n), []byte(strconv.Itoa(pid)+"\n"), 0o644); err != nil {
		return pid, err
	}
	return pid, chownMysql(s.pidPath(n))
}

// trackChild reaps the started cmd when it exits and records how it
// ended in children; it returns its PID.
func trackChild(cmd *exec.Cmd) int {
	pid := cmd.Process.Pid
	done := make(chan struct{})
	children.Lock()
	children.done[pid] = done
	delete(children.exit, pid) // a reused PID must not inherit an old exit
	children.Unlock()
	go func() {
		err := cmd.Wait()
		children.Lock()
		if children.done[pid] == done { // not a newer child with a reused PID
			delete(children.done, pid)
		}
		if err != nil {
			children.exit[pid] = err.Error()
		} else {
			children.exit[pid] = "exit status 0"
		}
		children.Unlock()
		close(done)
	}()
	return pid
}

func mariadbdPath() string {
	for _, p := range []string{"/usr/sbin/mariadbd", "/usr/sbin/mysqld"} {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return "mariadbd"
}

// pid returns the PID of node n's server if it is running, else 0. A PID
// counts only if that process is a mariadbd started with this node's option
// file: a stale pid file must never make us signal somebody else's process.
func (s *State) pid(n Node) int {
	b, err := os.ReadFile(s.pidPath(n))
	if err != nil {
		return 0
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 0 {
		return 0
	}
	if !stillRunning(pid, "--defaults-file="+s.cnfPath(n)) {
		return 0
	}
	return pid
}

// processIs reports whether pid is alive (not a zombie) and its command
// line contains marker. A live process's command line can read back empty
// for a moment (while the kernel swaps its memory map during exec): an
// empty read is retried briefly before it counts as "not that process".
func processIs(pid int, marker string) bool {
	for attempt := 0; ; attempt++ {
		stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			return false
		}
		if i := bytes.LastIndexByte(stat, ')'); i > 0 && i+2 < len(stat) && stat[i+2] == 'Z' {
			return false
		}
		cmdline, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
		if err != nil {
			return false
		}
		if len(cmdline) > 0 || attempt == 10 {
			return bytes.Contains(cmdline, []byte(marker))
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// stillRunning reports whether pid, started with marker, still runs. For a
// child of this process the answer comes from its reaper rather than from
// /proc: CI saw a node reported as "exited during start-up" while its
// process was still there in state R, because its command line could not
// be read at that instant.
func stillRunning(pid int, marker string) bool {
	children.Lock()
	done, child := children.done[pid]
	children.Unlock()
	if child {
		select {
		case <-done:
			return false
		default:
			return true
		}
	}
	return processIs(pid, marker)
}

// processState returns the one-letter state of pid from /proc (R, S, T for
// stopped, ...), or "" if it does not exist.
func processState(pid int) string {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return ""
	}
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 || i+2 >= len(stat) {
		return ""
	}
	return string(stat[i+2])
}

// waitExit waits until pid has exited, or ctx ends.
func waitExit(ctx context.Context, pid int, marker string) error {
	children.Lock()
	done := children.done[pid]
	children.Unlock()
	if done != nil {
		select {
		case <-done:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	t := time.NewTicker(50 * time.Millisecond)
	defer t.Stop()
	for processIs(pid, marker) {
		select {
		case <-t.C:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// signal sends sig to node n's server. It fails if the node is not running.
func (s *State) signal(n Node, sig syscall.Signal) (int, error) {
	pid := s.pid(n)
	if pid == 0 {
		return 0, fmt.Errorf("%s is not running", n.Name)
	}
	if err := syscall.Kill(pid, sig); err != nil {
		return pid, fmt.Errorf("signal %s (pid %d): %w", n.Name, pid, err)
	}
	return pid, nil
}

// stopProcess shuts node n down cleanly (SIGTERM, which lets Galera leave
// the group gracefully), escalating to SIGKILL after timeout. A paused
// node is resumed first, or it could never act on SIGTERM.
func (s *State) stopProcess(ctx context.Context, n Node, timeout time.Duration) error {
	pid := s.pid(n)
	if pid == 0 {
		return nil
	}
	marker := "--defaults-file=" + s.cnfPath(n)
	_ = syscall.Kill(pid, syscall.SIGCONT)
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil && !errors.Is(err, syscall.ESRCH) {
		return err
	}
	wctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if err := waitExit(wctx, pid, marker); err == nil {
		return s.sweep(ctx, n)
	}
	_ = syscall.Kill(pid, syscall.SIGKILL)
	kctx, kcancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer kcancel()
	if err := waitExit(kctx, pid, marker); err != nil {
		return fmt.Errorf("%s (pid %d) did not exit after SIGKILL", n.Name, pid)
	}
	_ = s.sweep(kctx, n)
	return fmt.Errorf("%s did not shut down within %s and was killed", n.Name, timeout)
}

// sweep stops, by PID, every process still running from node n's
// directory: the SST script and rsync daemon a joiner spawns outlive a
// mariadbd that died, and a sandbox must leave nothing behind. Matching on
// the node's own directory (unique per sandbox) never touches anything
// this sandbox did not start.
func (s *State) sweep(ctx context.Context, n Node) error {
	marker := []byte(s.nodeDir(n) + "/")
	find := func() []int {
		var pids []int
		entries, _ := os.ReadDir("/proc")
		for _, e := range entries {
			pid, err := strconv.Atoi(e.Name())
			if err != nil || pid == os.Getpid() {
				continue
			}
			cmdline, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
			if err == nil && bytes.Contains(cmdline, marker) && processState(pid) != "Z" {
				pids = append(pids, pid)
			}
		}
		return pids
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	for {
		pids := find()
		if len(pids) == 0 {
			return nil
		}
		for _, pid := range pids {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s: processes %v did not exit after SIGKILL", n.Name, pids)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// exitReport says how a process this one started ended, or what /proc
// says of it, for start-up failure messages.
func exitReport(pid int) string {
	children.Lock()
	e, ok := children.exit[pid]
	children.Unlock()
	if ok {
		return "pid " + strconv.Itoa(pid) + ": " + e
	}
	if st := processState(pid); st != "" {
		return "pid " + strconv.Itoa(pid) + " still exists in state " + st
	}
	return "pid " + strconv.Itoa(pid) + " gone"
}
