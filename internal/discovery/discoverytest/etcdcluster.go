package discoverytest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/galeon-db/galeon/internal/discovery"
)

// EtcdBinary is Debian's etcd-server daemon (make deps installs it).
const EtcdBinary = "/usr/bin/etcd"

// EtcdMember is one member of an external etcd cluster run by a test: a
// real etcd process on loopback, stopped by its PID.
type EtcdMember struct {
	Name, Client, Peer string
	args               []string
	log                string
	cmd                *exec.Cmd
	done               chan struct{}
}

// StartEtcdCluster runs an n-member etcd cluster of Debian's etcd-server on
// free loopback ports, waits until it answers, and stops it when the test
// ends. It returns the endpoints as galeon takes them (etcd://...).
func StartEtcdCluster(t testing.TB, n int) (string, []*EtcdMember) {
	t.Helper()
	addrs := make([][2]string, n)
	for i := range addrs {
		addrs[i] = [2]string{FreeAddr(t), FreeAddr(t)}
	}
	return StartEtcdAt(t, addrs)
}

// StartEtcdAt is StartEtcdCluster with one member per pair of client and
// peer addresses given (e.g. on a multi-site sandbox's bridge, where
// proxies inside the sites reach it).
func StartEtcdAt(t testing.TB, addrs [][2]string) (string, []*EtcdMember) {
	t.Helper()
	if _, err := os.Stat(EtcdBinary); err != nil {
		t.Fatalf("%s not found: install Debian's etcd-server (`make deps`)", EtcdBinary)
	}
	var ms []*EtcdMember
	var initial, eps []string
	for i, a := range addrs {
		m := &EtcdMember{Name: fmt.Sprintf("etcd%d", i+1), Client: a[0], Peer: a[1]}
		ms = append(ms, m)
		initial = append(initial, m.Name+"=http://"+m.Peer)
		eps = append(eps, "etcd://"+m.Client)
	}
	for _, m := range ms {
		dir := t.TempDir()
		m.log = filepath.Join(dir, "etcd.log")
		m.args = []string{"--name", m.Name, "--data-dir", filepath.Join(dir, "data"),
			"--listen-client-urls", "http://" + m.Client, "--advertise-client-urls", "http://" + m.Client,
			"--listen-peer-urls", "http://" + m.Peer, "--initial-advertise-peer-urls", "http://" + m.Peer,
			"--initial-cluster", strings.Join(initial, ","), "--initial-cluster-state", "new",
			"--initial-cluster-token", "galeon-test", "--heartbeat-interval", "100", "--election-timeout", "1000",
			"--log-level", "warn"}
		m.Start(t)
		t.Cleanup(func() { m.Stop(t) })
	}
	endpoints := strings.Join(eps, ",")
	deadline := time.Now().Add(30 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		s, err := discovery.Open(ctx, discovery.Config{Endpoints: endpoints, Cluster: Cluster, DialTimeout: 2 * time.Second}, Quiet())
		cancel()
		if err == nil {
			s.Close()
			return endpoints, ms
		}
		if time.Now().After(deadline) {
			t.Fatalf("etcd cluster %s not answering after 30s: %v", endpoints, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Start runs the member (again: its data directory makes it rejoin).
func (m *EtcdMember) Start(t testing.TB) {
	t.Helper()
	out, err := os.OpenFile(m.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	m.cmd = exec.Command(EtcdBinary, m.args...)
	m.cmd.Stdout, m.cmd.Stderr = out, out
	m.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := m.cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", m.Name, err)
	}
	m.done = make(chan struct{})
	go func(cmd *exec.Cmd, done chan struct{}) { _ = cmd.Wait(); close(done) }(m.cmd, m.done)
}

// Stop stops the member (SIGTERM, SIGKILL after 5 s) and waits for it.
func (m *EtcdMember) Stop(t testing.TB) {
	if m.cmd == nil {
		return
	}
	select {
	case <-m.done:
		return
	default:
	}
	_ = m.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-m.done:
	case <-time.After(5 * time.Second):
		_ = m.cmd.Process.Kill()
		<-m.done
	}
}
