package admin

import (
	"context"
	"net"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestServeShutdownNoLeaks opens every kind of connection, cancels the
// context and checks that Serve returns, the connections are closed and
// no goroutine is left behind.
func TestServeShutdownNoLeaks(t *testing.T) {
	before := runtime.NumGoroutine()

	fs := newFakeServers()
	s := NewServer(Config{SQLListen: "127.0.0.1:0", HTTPListen: "127.0.0.1:0", User: testUser, Password: testPassword, Logger: testLogger(t)},
		[]Table{fs.table()}, testMetrics)
	if s.SQLAddr() != nil || s.HTTPAddr() != nil {
		t.Error("addresses before Listen")
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx) }()
	deadline := time.Now().Add(5 * time.Second)
	for s.SQLAddr() == nil || s.HTTPAddr() == nil {
		if time.Now().After(deadline) {
			t.Fatal("Serve did not listen")
		}
		time.Sleep(time.Millisecond)
	}

	// An authenticated idle session, a connection stuck before the
	// handshake response, and an idle HTTP keep-alive connection.
	idle := dialRaw(t, s)
	if err := idle.login(0, false); err != nil {
		t.Fatal(err)
	}
	half := dialRaw(t, s)
	tr := &http.Transport{}
	client := &http.Client{Transport: tr}
	resp, _ := httpGet(t, client, "http://"+s.HTTPAddr().String()+"/api/health", "", "")
	if resp.StatusCode != 200 {
		t.Fatal(resp.Status)
	}

	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Serve: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Serve did not return after cancel")
	}
	idle.expectClosed(2 * time.Second)
	half.expectClosed(2 * time.Second)
	if _, err := net.DialTimeout("tcp", s.SQLAddr().String(), time.Second); err == nil {
		t.Error("SQL listener still open")
	}
	tr.CloseIdleConnections()

	deadline = time.Now().Add(5 * time.Second)
	for {
		n := runtime.NumGoroutine()
		if n <= before {
			break
		}
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			t.Fatalf("%d goroutines before, %d after:\n%s", before, n, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(10 * time.Millisecond)
	}

	if err := s.Serve(context.Background()); err == nil {
		t.Error("second Serve succeeded")
	}
}

func TestListenErrors(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	s := NewServer(Config{SQLListen: busy.Addr().String(), HTTPListen: "127.0.0.1:0", Logger: testLogger(t)}, nil, nil)
	if err := s.Serve(context.Background()); err == nil || !strings.Contains(err.Error(), "SQL listener") {
		t.Errorf("busy SQL port: %v", err)
	}
	s = NewServer(Config{SQLListen: "127.0.0.1:0", HTTPListen: busy.Addr().String(), Logger: testLogger(t)}, nil, nil)
	if err := s.Listen(); err == nil || !strings.Contains(err.Error(), "HTTP listener") {
		t.Errorf("busy HTTP port: %v", err)
	}
	if s.SQLAddr() != nil {
		t.Error("SQL listener left open after HTTP listen failed")
	}
}

func TestConfigDefaults(t *testing.T) {
	c := Config{}.withDefaults()
	if c.SQLListen != "127.0.0.1:6032" || c.HTTPListen != "127.0.0.1:6080" || c.User != "admin" || c.Logger == nil {
		t.Errorf("defaults: %+v", c)
	}
}

// TestTablePanicIsContained checks that a panicking table function
// produces an error for the operator, not a crashed proxy.
func TestTablePanicIsContained(t *testing.T) {
	boom := Table{
		Name:    "boom",
		Columns: []Column{{Name: "a", Kind: Int}},
		Rows:    func() [][]any { panic("rows exploded") },
	}
	bang := Table{
		Name:    "bang",
		Columns: []Column{{Name: "a", Kind: Int}},
		Rows:    func() [][]any { return [][]any{{1}} },
		Accepts: OpUpdate,
		Apply:   func([]Change) error { panic("update exploded") },
	}
	s := startServer(t, Config{}, []Table{boom, bang}, nil)
	rc := dialRaw(t, s)
	if err := rc.login(0, false); err != nil {
		t.Fatal(err)
	}
	out := rc.query("SELECT * FROM boom")
	expectErr(t, out[0], 1105, "rows exploded")
	out = rc.query("UPDATE bang SET a = 2")
	expectErr(t, out[0], 1105, "update exploded")
	// The write lock and the SQLite connection were released: a second
	// update gets the same error rather than hanging.
	out = rc.query("UPDATE bang SET a = 3")
	expectErr(t, out[0], 1105, "update exploded")
	out = rc.query("SELECT 1")
	if len(out) < 3 {
		t.Errorf("session unusable after panic: %q", out)
	}
}
