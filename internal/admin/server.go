package admin

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/galeon-db/galeon/internal/dashboard"
	"github.com/galeon-db/galeon/internal/mysqlproto"
)

// Server serves the admin tables over the MySQL protocol and HTTP.
type Server struct {
	cfg     Config
	eng     *engine
	metrics http.Handler
	ui      http.Handler
	log     *slog.Logger

	cred  mysqlproto.Credential // the admin account
	decoy mysqlproto.Credential // checked for unknown users, matches nothing

	// handshakeTimeout bounds the connection phase; a field so tests
	// can shorten it.
	handshakeTimeout time.Duration

	nextConnID atomic.Uint32
	wg         sync.WaitGroup // every goroutine Serve starts

	mu      sync.Mutex
	sqlLn   net.Listener
	httpLn  net.Listener
	conns   map[net.Conn]struct{} // open SQL connections, closed on shutdown
	closing bool
	served  bool
}

// NewServer returns a server for tables and metrics (metrics may be nil).
// It panics if the tables are inconsistent (duplicate or invalid names, a
// column without a kind, no Rows function): that is a bug in the caller,
// found at startup rather than by an operator.
func NewServer(cfg Config, tables []Table, metrics http.Handler) *Server {
	cfg = cfg.withDefaults()
	cat, err := newCatalog(tables)
	if err != nil {
		panic(err)
	}
	var junk [32]byte
	_, _ = rand.Read(junk[:])
	return &Server{
		cfg:     cfg,
		eng:     newEngine(cat, serverVersion, maxPacketSize, cfg.TLS != nil),
		metrics: metrics,
		ui:      http.StripPrefix("/ui", dashboard.Handler()),
		log:     cfg.Logger.With("component", "admin"),
		cred:    mysqlproto.NewCredential(cfg.Password),
		decoy:   mysqlproto.NewCredential(hex.EncodeToString(junk[:])),
		conns:   make(map[net.Conn]struct{}),

		handshakeTimeout: handshakeTimeout,
	}
}

// Listen binds both addresses. Serve calls it if needed; calling it first
// reports a busy port before anything else starts and makes SQLAddr and
// HTTPAddr available (useful with ":0").
func (s *Server) Listen() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sqlLn != nil {
		return nil
	}
	if s.closing {
		return errors.New("admin: server already stopped")
	}
	sqlLn, err := net.Listen("tcp", s.cfg.SQLListen)
	if err != nil {
		return fmt.Errorf("admin: SQL listener: %w", err)
	}
	httpLn, err := net.Listen("tcp", s.cfg.HTTPListen)
	if err != nil {
		sqlLn.Close()
		return fmt.Errorf("admin: HTTP listener: %w", err)
	}
	s.sqlLn, s.httpLn = sqlLn, httpLn
	return nil
}

// SQLAddr returns the SQL listener's address, or nil before Listen.
func (s *Server) SQLAddr() net.Addr {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sqlLn == nil {
		return nil
	}
	return s.sqlLn.Addr()
}

// HTTPAddr returns the HTTP listener's address, or nil before Listen.
func (s *Server) HTTPAddr() net.Addr {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.httpLn == nil {
		return nil
	}
	return s.httpLn.Addr()
}

// Serve listens on both endpoints (see Listen) and serves until ctx is
// done. It then closes the listeners and every open connection and
// returns only after all goroutines it started have ended, so a caller
// that waits for Serve leaks nothing. The result is nil after a normal
// shutdown, or the error that stopped an endpoint early. A Server serves
// once.
func (s *Server) Serve(ctx context.Context) error {
	if err := s.Listen(); err != nil {
		return err
	}
	s.mu.Lock()
	if s.served {
		s.mu.Unlock()
		return errors.New("admin: Serve called twice")
	}
	s.served = true
	sqlLn, httpLn := s.sqlLn, s.httpLn
	s.mu.Unlock()

	hs := &http.Server{
		Handler:           s.httpHandler(),
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelDebug),
		BaseContext:       func(net.Listener) context.Context { return ctx },
	}
	if s.cfg.TLS != nil {
		hs.TLSConfig = s.cfg.TLS.Clone()
		httpLn = tls.NewListener(httpLn, hs.TLSConfig)
	}

	errc := make(chan error, 2)
	s.wg.Add(2)
	go func() {
		defer s.wg.Done()
		errc <- s.acceptSQL(sqlLn)
	}()
	go func() {
		defer s.wg.Done()
		err := hs.Serve(httpLn)
		if errors.Is(err, http.ErrServerClosed) {
			err = nil
		}
		errc <- err
	}()
	s.log.Info("admin interface listening", "sql", sqlLn.Addr().String(), "http", httpLn.Addr().String())

	var err error
	select {
	case <-ctx.Done():
	case err = <-errc:
		if err != nil {
			s.log.Error("admin endpoint failed", "err", err)
		}
	}
	s.shutdown(sqlLn, hs)
	s.wg.Wait()
	s.eng.store.close()
	return err
}

// shutdown stops accepting, closes the SQL connections (sessions hold no
// state worth draining) and gives HTTP requests a moment to finish.
func (s *Server) shutdown(sqlLn net.Listener, hs *http.Server) {
	s.mu.Lock()
	s.closing = true
	conns := make([]net.Conn, 0, len(s.conns))
	for c := range s.conns {
		conns = append(conns, c)
	}
	s.mu.Unlock()
	sqlLn.Close()
	for _, c := range conns {
		c.Close()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if hs.Shutdown(ctx) != nil {
		hs.Close()
	}
}

// acceptSQL accepts SQL connections until the listener is closed. Other
// accept errors (out of file descriptors) are retried with backoff, as
// net/http does, rather than taking the admin interface down.
func (s *Server) acceptSQL(ln net.Listener) error {
	var delay time.Duration
	for {
		nc, err := ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return nil
			}
			delay = min(max(2*delay, 5*time.Millisecond), time.Second)
			s.log.Warn("admin accept failed", "err", err, "retry_in", delay)
			time.Sleep(delay)
			continue
		}
		delay = 0
		if !s.track(nc) {
			nc.Close()
			return nil
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			defer s.untrack(nc)
			defer nc.Close()
			s.serveSQL(nc)
		}()
	}
}

// track registers an open connection unless the server is shutting down.
func (s *Server) track(c net.Conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing {
		return false
	}
	s.conns[c] = struct{}{}
	return true
}

func (s *Server) untrack(c net.Conn) {
	s.mu.Lock()
	delete(s.conns, c)
	s.mu.Unlock()
}
