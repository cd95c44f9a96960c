package proxyadmin

import (
	"context"
	"strings"
	"testing"

	"github.com/galeon-db/galeon/internal/admin"
	"github.com/galeon-db/galeon/internal/config"
	"github.com/galeon-db/galeon/internal/proxy"
)

// fakeOps records what the operations table asks of it.
type fakeOps struct {
	plans []Planned
	calls []string
}

func (f *fakeOps) Plan(_ context.Context, stmt, schema, method string) (Planned, error) {
	f.calls = append(f.calls, "plan "+stmt+" | "+schema+" | "+method)
	p := Planned{ID: "plan-1", Kind: "schema-change", Method: "rsu", Statement: stmt, Schema: schema, Why: "rolled"}
	f.plans = append(f.plans, p)
	return p, nil
}
func (f *fakeOps) Planned() []Planned { return f.plans }
func (f *fakeOps) Run(_ context.Context, id string) error {
	f.calls = append(f.calls, "run "+id)
	return nil
}
func (f *fakeOps) Cancel(_ context.Context, id string) error {
	f.calls = append(f.calls, "cancel "+id)
	return nil
}

func TestOperationsTable(t *testing.T) {
	p, err := proxy.New(&config.Config{}, nil)
	if err != nil {
		t.Skip("a proxy without configuration:", err)
	}
	ops := &fakeOps{}
	tb := operations(p, ops)
	col := func(name string) int {
		for i, c := range tb.Columns {
			if c.Name == name {
				return i
			}
		}
		t.Fatalf("no column %s", name)
		return -1
	}
	row := func(set map[string]any) []any {
		r := make([]any, len(tb.Columns))
		for k, v := range set {
			r[col(k)] = v
		}
		return r
	}
	for _, c := range []struct {
		what string
		ch   admin.Change
		call string
		err  string
	}{
		{"plan", admin.Change{New: row(map[string]any{"statement": "ALTER TABLE t ADD INDEX k (a)", "schema": "app"})}, "plan ALTER TABLE t ADD INDEX k (a) | app | auto", ""},
		{"plan with a method and kind", admin.Change{New: row(map[string]any{"statement": "ALTER TABLE app.t ENGINE=InnoDB", "method": "rsu", "kind": "schema-change"})}, "plan ALTER TABLE app.t ENGINE=InnoDB |  | rsu", ""},
		{"no statement", admin.Change{New: row(map[string]any{"schema": "app"})}, "", "statement is required"},
		{"another kind", admin.Change{New: row(map[string]any{"statement": "x", "kind": "backup"})}, "", "are schema changes"},
		{"a column it sets itself", admin.Change{New: row(map[string]any{"statement": "x", "step": "run"})}, "", "step cannot be given"},
	} {
		ops.calls = nil
		err := tb.Apply([]admin.Change{c.ch})
		if (err == nil) != (c.err == "") || err != nil && !strings.Contains(err.Error(), c.err) || c.call != "" && (len(ops.calls) != 1 || ops.calls[0] != c.call) {
			t.Errorf("%s: %v, calls %q; want %q %q", c.what, err, ops.calls, c.call, c.err)
		}
	}

	rows := tb.Rows()
	if len(rows) != 2 || rows[0][col("step")] != "planned" || rows[0][col("detail")] != "rolled" || rows[0][col("id")] != "plan-1" {
		t.Fatalf("rows with two plans: %v", rows)
	}
	planned := rows[0]
	run := append([]any(nil), planned...)
	run[col("step")] = "run"
	ops.calls = nil
	if err := tb.Apply([]admin.Change{{Old: planned, New: run}}); err != nil || len(ops.calls) != 1 || ops.calls[0] != "run plan-1" {
		t.Errorf("step = 'run': %v %q", err, ops.calls)
	}
	other := append([]any(nil), planned...)
	other[col("step")] = "go"
	if err := tb.Apply([]admin.Change{{Old: planned, New: other}}); err == nil || !strings.Contains(err.Error(), "only be set to 'run'") {
		t.Errorf("step = 'go': %v", err)
	}
	other = append([]any(nil), planned...)
	other[col("method")] = "toi"
	if err := tb.Apply([]admin.Change{{Old: planned, New: other}}); err == nil || !strings.Contains(err.Error(), "only step can be set") {
		t.Errorf("method = 'toi': %v", err)
	}
	ops.calls = nil
	if err := tb.Apply([]admin.Change{{Old: planned}}); err != nil || len(ops.calls) != 1 || ops.calls[0] != "cancel plan-1" {
		t.Errorf("DELETE: %v %q", err, ops.calls)
	}
	if err := tb.Apply([]admin.Change{{Old: planned}, {Old: rows[1]}}); err == nil || !strings.Contains(err.Error(), "one operation at a time") {
		t.Errorf("two rows at once: %v", err)
	}
	if err := operations(p, nil).Apply([]admin.Change{{Old: planned}}); err == nil || !strings.Contains(err.Error(), "[operations] node_user") {
		t.Errorf("without operations: %v, want what the proxy needs", err)
	}
}
