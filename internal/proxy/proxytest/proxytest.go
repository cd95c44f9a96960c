// Package proxytest runs a galeon proxy inside a test process, on a free
// loopback port, assembled as `galeon proxy` assembles it (package
// assemble), and stops it (waiting for every goroutine) when the test
// ends.
package proxytest

import (
	"context"
	"log/slog"
	"net"
	"testing"
	"time"

	"github.com/galeon-db/galeon/internal/assemble"
	"github.com/galeon-db/galeon/internal/config"
	"github.com/galeon-db/galeon/internal/proxy"
	"github.com/galeon-db/galeon/internal/sandbox"
)

// Start validates cfg, starts a proxy with it and returns the proxy and
// its client address: the data plane alone, even when cfg names a control
// plane (the test links it). log nil discards the proxy's log.
func Start(t testing.TB, cfg *config.Config, log *slog.Logger) (*proxy.Proxy, string) {
	t.Helper()
	p, addr, _ := StartStoppable(t, cfg, log)
	return p, addr
}

// StartStoppable is Start that also returns a function stopping the proxy
// before the test ends (as if its process died: clients are cut off).
func StartStoppable(t testing.TB, cfg *config.Config, log *slog.Logger) (*proxy.Proxy, string, func()) {
	t.Helper()
	a := StartWith(t, assemble.Options{Config: cfg, Log: log, DataPlaneOnly: true})
	return a.Proxy, a.Addr, func() { Halt(t, a) }
}

// StartWith assembles a proxy from o, listening on a free loopback port
// unless o.Listener is set, and halts it when the test ends.
func StartWith(t testing.TB, o assemble.Options) *assemble.Proxy {
	t.Helper()
	if o.Listener == nil {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		o.Listener = ln
	}
	a, err := assemble.Start(context.Background(), o)
	if err != nil {
		o.Listener.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() { Halt(t, a) })
	return a
}

// Halt stops a as if its process died, failing the test if that takes
// more than 10s.
func Halt(t testing.TB, a *assemble.Proxy) {
	done := make(chan struct{})
	go func() { a.Halt(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Errorf("proxy did not stop within 10s")
	}
}

// Config is the default configuration in front of a sandbox, listening
// on a free loopback port: node1 takes the writes, the other nodes the
// reads. Callers add users, accounts and whatever their test needs.
func Config(sb *sandbox.Sandbox) *config.Config {
	cfg := config.Defaults()
	cfg.Proxy.Listen = "127.0.0.1:0"
	for _, n := range sb.Nodes {
		s := config.Server{Name: n.Name, Address: n.Addr(), ReaderWeight: 100}
		if n.Name == "node1" {
			s.WriterWeight, s.ReaderWeight = 100, 0
		}
		cfg.Servers = append(cfg.Servers, s)
	}
	return &cfg
}
