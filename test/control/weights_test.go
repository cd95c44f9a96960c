package control_test

import (
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/galeon-db/galeon/internal/admin"
	"github.com/galeon-db/galeon/internal/mysqlproto"
)

// TestNoWriterWeightRefused: with three proxies sharing one runtime
// configuration, UPDATE servers SET writer_weight = 0 on every node
// (through one proxy's admin interface) is refused with a MySQL error
// that says what would happen and what to do; nothing changes on any
// proxy and writes go on everywhere. A weight change that leaves a node
// able to take writes is shared as before.
func TestNoWriterWeightRefused(t *testing.T) {
	_, _, ms := newControlRig(t, 3)
	writerWeights := func(i int) map[string]int {
		out := map[string]int{}
		for _, s := range ms[i].p.View().Load().Servers {
			out[s.Name] = s.WriterWeight
		}
		return out
	}
	before := writerWeights(0)

	// UPDATE servers SET writer_weight = 0 (every row), on proxy2.
	tb := table(t, ms[1].p, "servers")
	col := slices.IndexFunc(tb.Columns, func(c admin.Column) bool { return c.Name == "writer_weight" })
	var changes []admin.Change
	for _, r := range tb.Rows() {
		next := slices.Clone(r)
		next[col] = int64(0)
		changes = append(changes, admin.Change{Old: r, New: next})
	}
	err := tb.Apply(changes)
	var se *mysqlproto.SQLError
	if !errors.As(err, &se) || se.Code != 4025 || !strings.Contains(se.Message, "no node would have writer_weight > 0") ||
		!strings.Contains(se.Message, "Nothing was changed") || !strings.Contains(se.Message, "drain") {
		t.Fatalf("UPDATE servers SET writer_weight = 0 on every node: %v, want 4025 saying no node would have a writer weight, what to do instead", err)
	}
	t.Logf("refused: %v", err)

	// Nothing changed anywhere; every proxy writes.
	for i, m := range ms {
		if got := writerWeights(i); !maps.Equal(got, before) {
			t.Errorf("%s: writer weights %v after the refused change, want %v", m.name, got, before)
		}
		if _, err := m.db.Exec("CREATE TABLE IF NOT EXISTS app.weights_probe (id INT PRIMARY KEY)"); err != nil {
			t.Errorf("%s: a write after the refused change: %v", m.name, err)
		}
	}

	// Taking the weight of one node away is accepted and shared.
	w, _, _ := agreement(ms)
	if err := adminUpdate(t, ms[1].p, "servers", w, map[string]any{"writer_weight": int64(0)}); err != nil {
		t.Fatalf("UPDATE servers SET writer_weight = 0 WHERE name = '%s' (the others keep theirs): %v", w, err)
	}
	waitFor(t, 10*time.Second, "every proxy has "+w+" at writer weight 0 and another writer", func() bool {
		for i := range ms {
			if writerWeights(i)[w] != 0 {
				return false
			}
		}
		nw, _, ok := agreement(ms)
		return ok && nw != w
	})
}
