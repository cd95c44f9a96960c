// Package proxytest runs a galeon proxy inside a test process, on a free
// loopback port, and stops it (waiting for every goroutine) when the test
// ends.
package proxytest

import (
	"context"
	"io"
	"log/slog"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/galeon-db/galeon/internal/config"
	"github.com/galeon-db/galeon/internal/proxy"
)

// Start validates cfg, starts a proxy with it and returns the proxy and
// its client address. log nil discards the proxy's log.
func Start(t testing.TB, cfg *config.Config, log *slog.Logger) (*proxy.Proxy, string) {
	t.Helper()
	p, addr, _ := StartStoppable(t, cfg, log)
	return p, addr
}

// StartStoppable is Start that also returns a function stopping the proxy
// before the test ends (as if its process died: clients are cut off).
func StartStoppable(t testing.TB, cfg *config.Config, log *slog.Logger) (*proxy.Proxy, string, func()) {
	t.Helper()
	if problems := cfg.Validate(); len(problems) > 0 {
		t.Fatalf("proxy config invalid: %v", problems)
	}
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	p, err := proxy.New(cfg, log)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.ServeListener(ctx, ln) }()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cancel()
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				t.Errorf("proxy did not stop within 10s")
			}
		})
	}
	t.Cleanup(stop)
	return p, ln.Addr().String(), stop
}
