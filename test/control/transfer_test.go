package control_test

import (
	"context"
	"testing"
	"time"

	"github.com/galeon-db/galeon/internal/discovery"
	"github.com/galeon-db/galeon/internal/discovery/discoverytest"
	"github.com/galeon-db/galeon/internal/proxyadmin"
	"github.com/galeon-db/galeon/internal/sandbox"
	"github.com/galeon-db/galeon/internal/sandbox/sandboxtest"
	"github.com/galeon-db/galeon/internal/transfer"
)

// TestStateTransferProgress has a node rejoin by a full state transfer
// (its state forgotten, as after a lost data directory) and follows it as
// operators would: the joiner's agent reports an SST with the bytes
// received so far, set against the donor's data size (then an IST of what
// was committed meanwhile), and the proxy's admin table state_transfers
// shows it; once the node is Synced no transfer is left.
func TestStateTransferProgress(t *testing.T) {
	sb := sandboxtest.New(t, sandbox.Options{Nodes: 3})
	store := discoverytest.Open(t)
	for _, n := range sb.Nodes {
		runAgent(t, sb, store, n)
	}
	m := startProxy(t, sb, store, "proxy1", true)
	waitFor(t, 30*time.Second, "the proxy has a writer", func() bool { _, _, ok := agreement([]*member{m}); return ok })
	// Some data, so that the copy itself takes a moment: 64 MiB.
	db, _ := sb.DB("node1")
	if _, err := db.Exec("CREATE TABLE app.blob (id INT PRIMARY KEY, b LONGBLOB)"); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 8; i++ {
		if _, err := db.Exec("INSERT INTO app.blob SELECT seq + ?, REPEAT('x', 1048576) FROM app.seq_1_to_8", i*8); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if err := sb.StopNode(ctx, "node3"); err != nil {
		t.Fatal(err)
	}
	if err := sb.ForgetState("node3"); err != nil {
		t.Fatal(err)
	}
	started := make(chan error, 1)
	go func() { started <- sb.StartNode(ctx, "node3") }()
	var seen []transfer.Progress
	var tableRows int
	var table func() [][]any
	for _, tb := range proxyadmin.Tables(m.p, nil) {
		if tb.Name == "state_transfers" {
			table = tb.Rows
		}
	}
	for done := false; !done; {
		select {
		case err := <-started:
			if err != nil {
				t.Fatal(err)
			}
			done = true
		case <-time.After(50 * time.Millisecond):
		}
		nodes, err := store.Nodes(ctx)
		if err != nil {
			continue
		}
		for _, p := range transfer.Estimate(nodes) {
			if p.Node == "node3" {
				seen = append(seen, p)
			}
		}
		tableRows += len(table())
	}
	if len(seen) == 0 {
		t.Fatal("node3's agent never reported its state transfer")
	}
	// An SST, then (the write-sets committed meanwhile) possibly an IST.
	var best transfer.Progress
	var kinds []string
	for _, p := range seen {
		if len(kinds) == 0 || kinds[len(kinds)-1] != p.Kind {
			kinds = append(kinds, p.Kind)
		}
		if p.Kind == "SST" && p.Done >= best.Done {
			best = p
		}
	}
	if kinds[0] != "SST" || len(kinds) > 2 || len(kinds) == 2 && kinds[1] != "IST" {
		t.Errorf("node3 rejoined without its state: transfers %v reported, want an SST (then an IST)", kinds)
	}
	t.Logf("FIGURE SST of node3 followed in %d samples; furthest: %s", len(seen), best)
	if best.Done <= 0 || best.Total <= 0 || best.Percent <= 0 || best.Percent > 99 {
		t.Errorf("progress never measured: furthest sample %+v (want bytes received against the donor's size)", best)
	}
	if tableRows == 0 {
		t.Error("the proxy's admin table state_transfers never showed the transfer")
	}
	wctx, wcancel := context.WithCancel(ctx)
	defer wcancel()
	discoverytest.WaitNodes(t, store.WatchNodes(wctx), 30*time.Second, "node3 Synced with no transfer left", func(ns discovery.NodeSet) bool {
		n := ns.Nodes["node3"]
		return n.Synced && n.Transfer == nil
	})
}
