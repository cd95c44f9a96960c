package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// startBackground re-runs this command detached (own session, output to
// logFile), records its PID in pidFile, and returns once it accepts
// connections on addr, or fails quoting the end of its log.
func startBackground(args []string, addr, pidFile, logFile string) (int, error) {
	if pid := readPid(pidFile); pid != 0 && alive(pid) {
		return pid, fmt.Errorf("already running as pid %d (%s); stop it with `galeon proxy stop --pid-file %s`", pid, pidFile, pidFile)
	}
	self, err := os.Executable()
	if err != nil {
		return 0, err
	}
	out, err := os.OpenFile(logFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return 0, err
	}
	defer out.Close()
	cmd := exec.Command(self, args...)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	pid := cmd.Process.Pid
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	if err := os.WriteFile(pidFile, []byte(strconv.Itoa(pid)+"\n"), 0o644); err != nil {
		return pid, err
	}
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case err := <-exited:
			os.Remove(pidFile)
			return 0, fmt.Errorf("exited during start-up (%v); last lines of %s:\n  %s", err, logFile, strings.Join(tail(logFile, 8), "\n  "))
		default:
		}
		if c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond); err == nil {
			c.Close()
			return pid, nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	_ = syscall.Kill(pid, syscall.SIGTERM)
	return 0, fmt.Errorf("not listening on %s after 15s; see %s", addr, logFile)
}

// stopBackground stops the process recorded in pidFile (SIGTERM, then
// SIGKILL after 10 s) and removes the file.
func stopBackground(ctx context.Context, pidFile string) error {
	pid := readPid(pidFile)
	if pid == 0 || !alive(pid) {
		os.Remove(pidFile)
		return errors.New("not running (no live process in " + pidFile + ")")
	}
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
		return err
	}
	deadline := time.Now().Add(10 * time.Second)
	for alive(pid) {
		if time.Now().After(deadline) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			break
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
	return os.Remove(pidFile)
}

func readPid(path string) int {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return pid
}

// alive reports whether pid runs and is a galeon process (a stale pid file
// must not make us signal somebody else's process).
func alive(pid int) bool {
	cmdline, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	if err != nil {
		return false
	}
	stat, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if i := strings.LastIndexByte(string(stat), ')'); i > 0 && i+2 < len(stat) && stat[i+2] == 'Z' {
		return false
	}
	return strings.Contains(string(cmdline), "galeon")
}

func tail(path string, n int) []string {
	b, err := os.ReadFile(path)
	if err != nil {
		return []string{err.Error()}
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	return lines[max(0, len(lines)-n):]
}
