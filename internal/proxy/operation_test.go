package proxy

import (
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/galeon-db/galeon/internal/config"
	"github.com/galeon-db/galeon/internal/eventlog"
)

// The operation's steps are events; its progress detail is not (it
// changes every few seconds); an end is recorded even when the next
// operation replaces it without a gap.
func TestOperationEvents(t *testing.T) {
	cfg := config.Defaults()
	cfg.Servers = []config.Server{{Name: "n1", Address: "127.0.0.1:1", WriterWeight: 1, ReaderWeight: 1}}
	p, err := New(&cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	a := &Operation{ID: "a", Kind: "backup", Current: "n2", Step: "copying", Total: 1}
	p.SetOperation(a)
	for _, d := range []string{"10%", "20%", "30%"} {
		c := *a
		c.Detail = d
		p.SetOperation(&c)
	}
	b := &Operation{ID: "b", Kind: "schema-change", Current: "n2", Step: "draining", Total: 3}
	p.SetOperation(b)
	c := *b
	c.Failed = "node died"
	p.SetOperation(&c)
	p.SetOperation(nil)
	var got []string // oldest first (Events lists the newest first)
	for _, e := range p.Events() {
		if e.Kind == eventlog.Operation {
			got = append([]string{e.Detail}, got...)
		}
	}
	want := []string{"backup a by", "backup a: n2 copying", "backup a ended", "schema-change b by", "schema-change b: n2 draining", "schema-change b stopped: node died", "schema-change b ended"}
	if len(got) != len(want) {
		t.Fatalf("events %q, want %d like %q", got, len(want), want)
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("event %d: %q, want %q…", i, got[i], want[i])
		}
	}
	if p.Operation() != nil {
		t.Error("an operation is left")
	}
}
