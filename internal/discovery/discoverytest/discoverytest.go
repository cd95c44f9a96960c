// Package discoverytest runs a real etcd, embedded in the test process,
// for tests of the control plane: no mock, the same server galeon embeds.
package discoverytest

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/galeon-db/galeon/internal/discovery"
)

// Cluster is the cluster name the stores of this package use.
const Cluster = "test"

// FreeAddr returns a loopback address with a port free right now, never
// the same twice in a process. The port is below the kernel's ephemeral
// range (32768 and up on Linux), where the port an OS hands out for ":0"
// lies: between this check and the test's own listen, any process's
// outgoing connection could take such a port (it happened once, with a
// CI run beside the unit tests); one below is taken only by an explicit
// bind. Sandboxes' slots start at 20000 (sandboxtest), so 12000-19999.
func FreeAddr(t testing.TB) string {
	t.Helper()
	freeMu.Lock()
	defer freeMu.Unlock()
	for range 1000 {
		port := 12000 + rand.IntN(8000)
		if freeGiven[port] {
			continue
		}
		ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err != nil {
			continue
		}
		ln.Close()
		freeGiven[port] = true
		return ln.Addr().String()
	}
	t.Fatal("no free loopback port between 12000 and 19999")
	return ""
}

var (
	freeMu    sync.Mutex
	freeGiven = map[int]bool{}
)

// Quiet is a logger that drops everything.
func Quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// Open starts an embedded etcd on free loopback ports, with its data in a
// test directory, and stops it when the test ends.
func Open(t testing.TB) *discovery.Store {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := discovery.Open(ctx, discovery.Config{Endpoints: discovery.Embedded, Cluster: Cluster, DataDir: t.TempDir(),
		ClientListen: FreeAddr(t), PeerListen: FreeAddr(t)}, Quiet())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// Connect opens a second client to the etcd of s, as another process
// (an agent, another proxy) would. Close it to make that process die.
func Connect(t testing.TB, s *discovery.Store) *discovery.Store {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	eps := make([]string, len(s.Endpoints))
	for i, e := range s.Endpoints {
		eps[i] = "etcd://" + strings.TrimPrefix(e, "http://")
	}
	c, err := discovery.Open(ctx, discovery.Config{Endpoints: strings.Join(eps, ","), Cluster: Cluster}, Quiet())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// WaitNodes reads snapshots from ch until one satisfies ok, and fails the
// test after timeout.
func WaitNodes(t testing.TB, ch <-chan discovery.NodeSet, timeout time.Duration, what string, ok func(discovery.NodeSet) bool) discovery.NodeSet {
	t.Helper()
	deadline := time.After(timeout)
	for {
		select {
		case ns := <-ch:
			if ok(ns) {
				return ns
			}
		case <-deadline:
			t.Fatalf("timed out after %s waiting for: %s", timeout, what)
		}
	}
}

// ConnectCuttable opens a client to the etcd of s through a loopback
// relay that cut severs at once, for good: to etcd, the process behind
// the client has died (kill -9) or is partitioned away — its leases
// expire, nothing it tries to write arrives.
func ConnectCuttable(t testing.TB, s *discovery.Store) (*discovery.Store, func()) {
	t.Helper()
	target := strings.TrimPrefix(s.Endpoints[0], "http://")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	cut := false
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			up, err := net.Dial("tcp", target)
			mu.Lock()
			if err != nil || cut {
				mu.Unlock()
				c.Close()
				if up != nil {
					up.Close()
				}
				continue
			}
			conns = append(conns, c, up)
			mu.Unlock()
			go func() { _, _ = io.Copy(up, c); up.Close() }()
			go func() { _, _ = io.Copy(c, up); c.Close() }()
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := discovery.Open(ctx, discovery.Config{Endpoints: "etcd://" + ln.Addr().String(), Cluster: Cluster}, Quiet())
	if err != nil {
		t.Fatal(err)
	}
	sever := func() {
		mu.Lock()
		defer mu.Unlock()
		if cut {
			return
		}
		cut = true
		ln.Close()
		for _, c := range conns {
			c.Close()
		}
	}
	t.Cleanup(func() { sever(); c.Close() })
	return c, sever
}
