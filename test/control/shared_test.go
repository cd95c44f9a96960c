package control_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/galeon-db/galeon/internal/admin"
	"github.com/galeon-db/galeon/internal/eventlog"
	"github.com/galeon-db/galeon/internal/proxy"
	"github.com/galeon-db/galeon/internal/proxyadmin"
)

func table(t *testing.T, p *proxy.Proxy, name string) admin.Table {
	t.Helper()
	for _, tb := range proxyadmin.Tables(p, nil) {
		if tb.Name == name {
			return tb
		}
	}
	t.Fatalf("no admin table %s", name)
	return admin.Table{}
}

// adminUpdate applies UPDATE name SET col = v ... WHERE <first column> =
// key the way the admin SQL engine hands it to the table: as one row
// change.
func adminUpdate(t *testing.T, p *proxy.Proxy, name, key string, set map[string]any) error {
	t.Helper()
	tb := table(t, p, name)
	for _, r := range tb.Rows() {
		if r[0] != key {
			continue
		}
		next := slices.Clone(r)
		for col, v := range set {
			i := slices.IndexFunc(tb.Columns, func(c admin.Column) bool { return c.Name == col })
			if i < 0 {
				t.Fatalf("no column %s.%s", name, col)
			}
			next[i] = v
		}
		return tb.Apply([]admin.Change{{Old: r, New: next}})
	}
	t.Fatalf("no row %s in %s", key, name)
	return nil
}

func readerWeight(p *proxy.Proxy, node string) int {
	s, _ := p.View().Load().Server(node)
	return s.ReaderWeight
}

func hasEvent(p *proxy.Proxy, kind, substr string) bool {
	for _, e := range p.Events() {
		if e.Kind == kind && strings.Contains(e.Detail, substr) {
			return true
		}
	}
	return false
}

// TestSharedConfig: proxies whose files hold no users get them from the
// cluster's shared configuration; a change made through one proxy's admin
// interface is in effect on every proxy, survives into a proxy started
// later with empty state; passwords never reach etcd in clear text; a
// corrupt value in etcd is rejected with an event and never applied.
func TestSharedConfig(t *testing.T) {
	sb, store, ms := newControlRig(t, 3)
	checkScaling(t, sb, store, ms)
	// proxy2 and proxy3 had no [[users]]: the app account works there.
	for _, m := range ms {
		var one int
		if err := m.db.QueryRow("SELECT 1").Scan(&one); err != nil {
			t.Fatalf("%s: login with the shared account: %v", m.name, err)
		}
	}

	// A weight changed on proxy1 is in effect on proxies 2 and 3.
	changed := time.Now()
	if err := adminUpdate(t, ms[0].p, "servers", "node3", map[string]any{"reader_weight": int64(0)}); err != nil {
		t.Fatalf("UPDATE servers SET reader_weight = 0 WHERE name = 'node3': %v", err)
	}
	at := waitFor(t, 5*time.Second, "node3 reader_weight 0 on every proxy", func() bool {
		for _, m := range ms {
			if readerWeight(m.p, "node3") != 0 {
				return false
			}
		}
		return true
	})
	t.Logf("FIGURE admin change on proxy1 -> in effect on all 3 proxies: %d ms", at.Sub(changed).Milliseconds())

	// A query rule added on proxy2 reaches proxy1 and proxy3.
	// INSERT INTO query_rules (match, destination) VALUES (...)
	if err := table(t, ms[1].p, "query_rules").Apply([]admin.Change{{New: []any{nil, "^SELECT .* FOR UPDATE", nil, nil, "writer"}}}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 5*time.Second, "the rule on every proxy", func() bool {
		for _, m := range ms {
			if len(m.p.ExportRuntime().QueryRules) != 1 {
				return false
			}
		}
		return true
	})

	// Secrets are sealed: the app password is nowhere in etcd's value.
	raw, ok, err := store.GetConfig(context.Background())
	if err != nil || !ok {
		t.Fatalf("shared configuration not in etcd: %v", err)
	}
	for _, secret := range []string{sb.Credentials.AppPassword, sb.Credentials.MonitorPassword} {
		if strings.Contains(string(raw), secret) {
			t.Errorf("a password is stored in clear text in %s", store.Keys.RuntimeConfig())
		}
	}

	// A proxy started later with empty local state comes up with it all.
	ms[2].stop()
	p4 := startProxy(t, sb, store, "proxy4", false)
	waitFor(t, 5*time.Second, "proxy4 took the shared configuration", func() bool { return hasEvent(p4.p, eventlog.Config, "applied") })
	rt := p4.p.ExportRuntime()
	if w, ok := rt.Weights["node3"]; len(rt.Users) != 1 || len(rt.QueryRules) != 1 || !ok || w.Reader != 0 {
		t.Errorf("proxy4 started with users %d, rules %d, node3 weights %+v; want the shared 1, 1 and reader 0", len(rt.Users), len(rt.QueryRules), rt.Weights["node3"])
	}
	waitFor(t, 20*time.Second, "proxy4 routes with node3 at reader weight 0", func() bool {
		return online(p4.p, "node3") && readerWeight(p4.p, "node3") == 0
	})

	// A corrupt value is rejected with an event on every proxy and never
	// applied; the proxies keep their configuration.
	live := []*member{ms[0], ms[1], p4}
	if _, err := store.Client.Put(context.Background(), store.Keys.RuntimeConfig(), `{"format":1,"users":"not a list"}`); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 5*time.Second, "a rejected event on every proxy", func() bool {
		for _, m := range live {
			if !hasEvent(m.p, eventlog.Rejected, store.Keys.RuntimeConfig()) {
				return false
			}
		}
		return true
	})
	for _, m := range live {
		if rt := m.p.ExportRuntime(); len(rt.Users) != 1 || readerWeight(m.p, "node3") != 0 {
			t.Errorf("%s changed after a corrupt value: users %d, node3 reader weight %d", m.name, len(rt.Users), readerWeight(m.p, "node3"))
		}
	}
	// The same for a corrupt writer decision: rejected, and the
	// controller publishes a valid one over it.
	w, epoch, _ := agreement(live)
	if _, err := store.Client.Put(context.Background(), store.Keys.Writer(), `{"writer":"node 1; DROP","epoch":0}`); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 5*time.Second, "a valid decision again, every proxy on "+w, func() bool {
		d, ok, _ := readDecision(store)
		nw, ne, agree := agreement(live)
		return ok && d.Writer == w && agree && nw == w && ne >= epoch
	})
	for _, m := range live {
		if !hasEvent(m.p, eventlog.Rejected, store.Keys.Writer()) {
			t.Errorf("%s recorded no rejected event for the corrupt decision", m.name)
		}
	}

	// The good value back (a proxy would refuse to start on the corrupt
	// one, naming the key).
	if _, err := store.Client.Put(context.Background(), store.Keys.RuntimeConfig(), string(raw)); err != nil {
		t.Fatal(err)
	}
	// Every proxy stops; a new one starts alone and becomes controller
	// with a view not checked yet: it must not move the writer.
	before, ok, _ := readDecision(store)
	if !ok {
		t.Fatal("no published decision")
	}
	for _, m := range live {
		m.stop()
	}
	p5 := startProxy(t, sb, store, "proxy5", false)
	waitFor(t, 20*time.Second, "proxy5 routes writes to "+before.Writer, func() bool {
		w, ok := p5.p.View().Load().Writer()
		return ok && w.Name == before.Writer && p5.p.IsController()
	})
	if after, _, _ := readDecision(store); after.Writer != before.Writer || after.Epoch != before.Epoch {
		t.Errorf("a controller starting with an unchecked view moved the writer: %s epoch %d -> %s epoch %d", before.Writer, before.Epoch, after.Writer, after.Epoch)
	}
}
