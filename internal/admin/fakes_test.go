package admin

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeServers is an updatable table shaped like the proxy's backend list.
// Update, Insert and Delete are atomic: they validate every change on a
// copy and swap it in only if all are valid.
type fakeServers struct {
	mu   sync.Mutex
	rows [][]any // hostgroup, hostname, port, weight, status, comment, max_lag
}

var serverColumns = []Column{
	{Name: "hostgroup", Kind: Int},
	{Name: "hostname", Kind: Text},
	{Name: "port", Kind: Int},
	{Name: "weight", Kind: Int},
	{Name: "status", Kind: Text},
	{Name: "comment", Kind: Text, Nullable: true},
	{Name: "max_lag", Kind: Float, Nullable: true},
}

func newFakeServers() *fakeServers {
	return &fakeServers{rows: [][]any{
		{int64(10), "db1", int64(3306), int64(100), "ONLINE", "primary", 1.5},
		{int64(10), "db2", int64(3306), int64(50), "ONLINE", nil, nil},
		{int64(20), "db3", int64(3307), int64(1), "OFFLINE_SOFT", "it's \"quoted\"\tand tabbed", 0.25},
	}}
}

func (f *fakeServers) snapshot() [][]any {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([][]any, len(f.rows))
	for i, r := range f.rows {
		out[i] = slices.Clone(r)
	}
	return out
}

func validStatus(v any) error {
	switch v {
	case "ONLINE", "OFFLINE_SOFT", "OFFLINE_HARD":
		return nil
	}
	return fmt.Errorf("status must be ONLINE, OFFLINE_SOFT or OFFLINE_HARD, not %v", v)
}

// apply validates every change on a copy and swaps it in only if all are
// valid. Rows are identified by hostname.
func (f *fakeServers) apply(changes []Change) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	next := make([][]any, 0, len(f.rows))
	for _, r := range f.rows {
		next = append(next, slices.Clone(r))
	}
	find := func(host any) int {
		return slices.IndexFunc(next, func(r []any) bool { return r[1] == host })
	}
	for _, ch := range changes {
		if ch.Op() == OpInsert {
			ch.New = slices.Clone(ch.New)
			for i, def := range []any{int64(0), nil, int64(3306), int64(1), "ONLINE", nil, nil} {
				if ch.New[i] == nil {
					ch.New[i] = def
				}
			}
		}
		if ch.New != nil {
			if ch.New[1] == nil {
				return errors.New("hostname is required")
			}
			if err := validStatus(ch.New[4]); err != nil {
				return err
			}
			if w, ok := ch.New[3].(int64); ok && w < 0 {
				return errors.New("weight must not be negative")
			}
		}
		switch ch.Op() {
		case OpInsert:
			next = append(next, ch.New)
		case OpUpdate:
			i := find(ch.Old[1])
			if i < 0 {
				return fmt.Errorf("no server %v", ch.Old[1])
			}
			next[i] = slices.Clone(ch.New)
		case OpDelete:
			i := find(ch.Old[1])
			if i < 0 {
				return fmt.Errorf("no server %v", ch.Old[1])
			}
			next = slices.Delete(next, i, i+1)
		}
	}
	f.rows = next
	return nil
}

func (f *fakeServers) table() Table {
	return Table{
		Name:    "servers",
		Columns: serverColumns,
		Rows:    f.snapshot,
		Accepts: OpUpdate | OpInsert | OpDelete,
		Apply:   f.apply,
	}
}

// statsTable is read-only and returns loosely typed values (int, uint,
// bool) to exercise normalisation.
func statsTable() Table {
	return Table{
		Name: "stats",
		Columns: []Column{
			{Name: "name", Kind: Text},
			{Name: "value", Kind: Int},
			{Name: "ratio", Kind: Float},
		},
		Rows: func() [][]any {
			return [][]any{
				{"queries", 42, 0.5},
				{"errors", uint32(3), float32(0.25)},
				{"up", true, nil},
				{"short row"},
			}
		},
	}
}

// newTestEngine builds an engine over the fake tables, for tests that do
// not need the network.
func newTestEngine(t testing.TB) (*engine, *fakeServers) {
	t.Helper()
	fs := newFakeServers()
	cat, err := newCatalog([]Table{fs.table(), statsTable()})
	if err != nil {
		t.Fatal(err)
	}
	eng := newEngine(cat, serverVersion, maxPacketSize, false)
	t.Cleanup(eng.store.close)
	return eng, fs
}

// run splits and executes a query on eng and returns the last result.
func run(eng *engine, sql string) (*result, error) {
	stmts, err := splitQuery(sql)
	if err != nil {
		return nil, err
	}
	var res *result
	for _, st := range stmts {
		if res, err = eng.exec(&session{user: "admin", host: "127.0.0.1", connID: 7, db: "main"}, st, sql); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// testLogger discards logs unless -v, where they go to the test log.
func testLogger(t testing.TB) *slog.Logger {
	if testing.Verbose() {
		return slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

const (
	testUser     = "admin"
	testPassword = "s3cret"
)

// startServer runs a Server on loopback ports until the test ends and
// checks that Serve returns promptly and cleanly.
// Options run before Serve.
func startServer(t *testing.T, cfg Config, tables []Table, metrics http.Handler, opts ...func(*Server)) *Server {
	t.Helper()
	cfg.SQLListen, cfg.HTTPListen = "127.0.0.1:0", "127.0.0.1:0"
	if cfg.User == "" {
		cfg.User, cfg.Password = testUser, testPassword
	}
	cfg.Logger = testLogger(t)
	s := NewServer(cfg, tables, metrics)
	for _, o := range opts {
		o(s)
	}
	if err := s.Listen(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Serve: %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Error("Serve did not return after cancel")
		}
	})
	return s
}
