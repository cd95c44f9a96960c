package control_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/galeon-db/galeon/internal/config"
	"github.com/galeon-db/galeon/internal/discovery"
	"github.com/galeon-db/galeon/internal/discovery/discoverytest"
	"github.com/galeon-db/galeon/internal/eventlog"
	"github.com/galeon-db/galeon/internal/lifecycle"
	"github.com/galeon-db/galeon/internal/sandbox"
	"github.com/galeon-db/galeon/internal/schemachange"
)

// TestSchemaChangeCostsNothing changes a table of a million rows
// (GALEON_DDL_ROWS) under write and read load through three proxies:
//
//   - a change that breaks row replication between the old and new table
//     (a column's type) is refused, with the reason, and nothing runs;
//   - ADD INDEX is rolled one node at a time (RSU): no client error, no
//     write committed on a node while it is being changed;
//   - ADD COLUMN at the end runs as TOI with ALGORITHM=INSTANT (MariaDB
//     makes it a metadata change), and rolled when asked;
//   - DROP INDEX (NOCOPY, not INSTANT) rolled, CREATE INDEX forced as TOI
//     for the figure: its write stall; a rebuild (ENGINE=InnoDB) rolled
//     although its definition does not change;
//   - a node killed while it runs a rolled change: the roll stops there,
//     and --resume finishes it once the node is back.
//
// Afterwards every node has the same definition and the same checksum,
// every acknowledged write is on every node, and no operation is left
// recorded.
func TestSchemaChangeCostsNothing(t *testing.T) {
	sb, store, ms := newControlRig(t, 3)
	w0, _, _ := agreement(ms)
	db, _ := sb.DB(w0)
	createLedger(t, db)
	rows := 1_000_000
	if v, err := strconv.Atoi(os.Getenv("GALEON_DDL_ROWS")); err == nil && v > 0 {
		rows = v
	}
	filled := time.Now()
	for n := 0; n < rows; n += 100_000 {
		if _, err := db.Exec(fmt.Sprintf("INSERT INTO app.ledger (node, proxy, at) SELECT 'fill', 'fill', NOW(6) FROM app.seq_1_to_%d", min(100_000, rows-n))); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("FIGURE filled app.ledger with %d rows in %s", rows, time.Since(filled).Round(time.Millisecond))
	l := startLedger(ms, 1, 1)
	m := startMeter(ms[0])
	waitFor(t, 10*time.Second, "writes acknowledged", func() bool { return ackCount(l) > 30 })

	var mu sync.Mutex
	var alone []window // when each node ran a change alone
	start := time.Now()
	// No client read timeout: the changes run for as long as they take.
	// The nodes are reached as on a cluster outside a sandbox: at the
	// addresses their agents registered, with an account given.
	nodeDB, closeAll := lifecycle.CachedNodeDB(lifecycle.DirectNodeDB(store, sb.Credentials.AdminUser, sb.Credentials.AdminPassword))
	defer closeAll()
	sc := lifecycle.SchemaChange{Store: store, By: "test", DrainTimeout: 5 * time.Second,
		DB: nodeDB,
		Progress: func(node, msg string) {
			t.Logf("[%5.1fs] %s: %s", time.Since(start).Seconds(), node, msg)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case strings.HasPrefix(msg, "running the change alone"):
				alone = append(alone, window{node: node, from: time.Now()})
			case strings.HasPrefix(msg, "catching up") && len(alone) > 0 && alone[len(alone)-1].node == node:
				alone[len(alone)-1].to = time.Now()
			}
		}}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()

	// Refused: a type change breaks row replication between old and new.
	p, err := sc.Prepare(ctx, "ALTER TABLE app.ledger MODIFY node BIGINT", "", schemachange.Auto)
	if err != nil {
		t.Fatal(err)
	}
	if !p.Plan.Refused || !strings.Contains(strings.Join(p.Plan.Unsafe, ";"), "changes column node") || !strings.Contains(p.Plan.Why, "--method toi") {
		t.Errorf("a type change: plan %+v, want refused with the reason and the options", p.Plan)
	}
	if _, err := sc.Run(ctx, p); err == nil {
		t.Error("a refused plan ran")
	}
	// A fourth proxy serves the admin interface with an account on the
	// nodes ([operations]): changes can be started from there.
	p4 := startProxyTuned(t, sb, func() (*discovery.Store, func()) { return discoverytest.ConnectCuttable(t, store) }, "proxy4", false, func(c *config.Config) {
		c.Admin.Listen, c.Admin.Password = "127.0.0.1:0", "admin-secret"
		c.Operations.NodeUser, c.Operations.NodePassword = sb.Credentials.AdminUser, sb.Credentials.AdminPassword
	})
	adm, err := sql.Open("mysql", "admin:admin-secret@tcp("+p4.admin+")/")
	if err != nil {
		t.Fatal(err)
	}
	defer adm.Close()
	adm.SetMaxOpenConns(1)
	// Refused there too, with the same reasons; nothing is planned.
	if _, err := adm.Exec("INSERT INTO operations (statement) VALUES ('ALTER TABLE app.ledger MODIFY node BIGINT')"); err == nil || !strings.Contains(err.Error(), "changes column node") {
		t.Errorf("a type change planned at the admin prompt: %v, want refused with the reason", err)
	}
	if _, err := adm.Exec("INSERT INTO operations (statement, node) VALUES ('ALTER TABLE app.ledger ADD INDEX x (at)', 'node1')"); err == nil || !strings.Contains(err.Error(), "node cannot be given") {
		t.Errorf("a plan with a column it cannot take: %v", err)
	}
	// A change that fails on the table fails on the probe, before any node.
	if _, err := sc.Prepare(ctx, "ALTER TABLE app.ledger DROP COLUMN nosuch", "", schemachange.Auto); err == nil || !strings.Contains(err.Error(), "empty copy") {
		t.Errorf("dropping a missing column: %v, want the probe's refusal", err)
	}

	type figure struct {
		what        string
		took, stall time.Duration
		errs        int
	}
	clientErrs := func() int {
		n := 0
		l.mu.Lock()
		for _, c := range l.errs {
			n += c
		}
		l.mu.Unlock()
		m.mu.Lock()
		for _, c := range m.errs {
			n += c
		}
		m.mu.Unlock()
		return n
	}
	toiErrs := 0
	var figures []figure
	run := func(stmt string, asked schemachange.Method, want schemachange.Method) {
		t.Helper()
		p, err := sc.Prepare(ctx, stmt, "", asked)
		if err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
		t.Logf("%s (%s): %s %s — %s", stmt, asked, p.Plan.Method, p.Plan.Algorithm, p.Plan.Why)
		if p.Plan.Method != want {
			t.Fatalf("%s: plan %+v, want %s", stmt, p.Plan, want)
		}
		errsBefore, began := clientErrs(), time.Now()
		if _, err := sc.Run(ctx, p); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
		ended := time.Now()
		// Done means done on every node: the next change must find one
		// definition everywhere (a TOI change ends on the writer first).
		var first string
		for _, n := range sb.Nodes {
			ndb, _ := sb.DB(n.Name)
			var name, def string
			if err := ndb.QueryRowContext(ctx, "SHOW CREATE TABLE app.ledger").Scan(&name, &def); err != nil {
				t.Fatalf("%s: reading %s's definition: %v", stmt, n.Name, err)
			}
			def = regexp.MustCompile(` AUTO_INCREMENT=\d+`).ReplaceAllString(def, "")
			if first == "" {
				first = def
			} else if def != first {
				t.Errorf("%s: ended while %s's definition still differs from %s's:\n%s\n%s", stmt, n.Name, sb.Nodes[0].Name, def, first)
			}
		}
		// Writes that end just after the change may still be its.
		waitFor(t, 5*time.Second, "a write after the change", func() bool { return m.count() > 0 && m.last().After(ended) })
		errs := clientErrs() - errsBefore
		figures = append(figures, figure{fmt.Sprintf("%s as %s%s", stmt, strings.ToUpper(string(want)), map[bool]string{true: " (" + p.Plan.Algorithm + ")"}[p.Plan.Algorithm != ""]),
			ended.Sub(began), m.worst(began, ended), errs})
		if want == schemachange.TOI {
			toiErrs += errs
		} else if errs > 0 {
			t.Errorf("%s rolled: clients saw %d errors", stmt, errs)
		}
	}
	run("ALTER TABLE app.ledger ADD INDEX by_node (node, proxy)", schemachange.Auto, schemachange.RSU)
	run("ALTER TABLE app.ledger ADD COLUMN note VARCHAR(20) NULL", schemachange.Auto, schemachange.TOI)
	run("ALTER TABLE app.ledger ADD COLUMN note2 INT NOT NULL DEFAULT 7", schemachange.RSU, schemachange.RSU)
	// DROP INDEX (NOCOPY, not INSTANT) through a proxy's admin interface,
	// as an operator at the admin prompt or on the dashboard does: planned
	// first (nothing runs), then confirmed; the proxy runs the roll.
	adminRun(t, ctx, adm, store, "ALTER TABLE ledger DROP INDEX by_node", "app", "rsu")
	run("CREATE INDEX by_proxy ON app.ledger (proxy, node)", schemachange.TOI, schemachange.TOI)
	// A rebuild leaves the definition as it was: it must still run on
	// every node (its definition cannot say it is done).
	run("ALTER TABLE app.ledger ENGINE=InnoDB", schemachange.Auto, schemachange.RSU)

	// A node killed while it runs a rolled change alone: the roll stops
	// and says where; once the node is back, --resume finishes it.
	p, err = sc.Prepare(ctx, "ALTER TABLE app.ledger ADD INDEX by_at_node (at, node)", "", schemachange.Auto)
	if err != nil || p.Plan.Method != schemachange.RSU {
		t.Fatalf("ADD INDEX: %+v %v, want RSU", p.Plan, err)
	}
	victim := make(chan string, 1)
	go killWhileAltering(t, sb, &mu, &alone, victim)
	_, err = sc.Run(ctx, p)
	killed := <-victim
	if err == nil || !strings.Contains(err.Error(), "stopped at "+killed) || !strings.Contains(err.Error(), "--resume") {
		t.Fatalf("the roll with %s killed: %v, want it stopped there, naming --resume", killed, err)
	}
	t.Logf("the roll with %s killed: %v", killed, err)
	if op, err := store.ReadOperation(ctx); err != nil || op == nil || op.Failed == "" || op.Current != killed {
		t.Fatalf("operation recorded after the kill: %+v %v, want it failed at %s", op, err, killed)
	}
	// Every proxy shows the stopped operation (admin table operations,
	// /metrics, events).
	waitFor(t, 10*time.Second, "every proxy shows the stopped operation", func() bool {
		for _, m := range ms {
			if op := m.p.Operation(); op == nil || op.Failed == "" || op.Current != killed {
				return false
			}
		}
		return true
	})
	if err := sb.StartNode(ctx, killed); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 3*time.Minute, killed+" back and every node Synced", func() bool {
		ns, err := store.Nodes(ctx)
		if err != nil || len(ns) != 3 {
			return false
		}
		for _, n := range ns {
			if !n.Synced {
				return false
			}
		}
		return true
	})
	began := time.Now()
	if _, err := sc.Resume(ctx); err != nil {
		t.Fatalf("resume: %v", err)
	}
	t.Logf("FIGURE the roll resumed after %s was killed mid-change: %s", killed, time.Since(began).Round(time.Millisecond))

	acks := l.finish()
	meterErrs := m.finish()
	for _, f := range figures {
		t.Logf("FIGURE %s on %d rows under load through 3 proxies: %s, worst write latency meanwhile %s, client errors %d", f.what, rows, f.took.Round(time.Millisecond), f.stall.Round(time.Millisecond), f.errs)
	}
	t.Logf("FIGURE acknowledged writes %d, reads %v, meter writes %d, client errors %v %v", len(acks), l.reads, m.count(), l.errs, meterErrs)
	// Errors only where TOI aborted writes in flight on its table (a
	// bare autocommit write is retried once by the node, a wrapped one
	// once by galeon: a second abort reaches the client either way).
	if n := clientErrs(); n != toiErrs {
		t.Errorf("clients saw %d errors, %d of them outside the TOI changes: %v %v", n, n-toiErrs, l.errs, meterErrs)
	}
	checkAcked(t, sb, []string{"node1", "node2", "node3"}, acks)

	db, _ = sb.DB(w0) // the sandbox closed its handles on the restart
	// No write committed on a node while it ran the change alone.
	mu.Lock()
	complete := 0
	for _, w := range alone {
		if w.to.IsZero() {
			continue // the node killed mid-change
		}
		complete++
		var n int
		if err := db.QueryRow("SELECT COUNT(*) FROM app.ledger WHERE node = ? AND at BETWEEN FROM_UNIXTIME(?) AND FROM_UNIXTIME(?)", w.node, float64(w.from.UnixMicro())/1e6, float64(w.to.UnixMicro())/1e6).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n > 0 {
			t.Errorf("%d writes committed on %s while it ran the change alone (%s – %s)", n, w.node, w.from.Format("15:04:05.000"), w.to.Format("15:04:05.000"))
		}
	}
	if complete != 12 {
		t.Errorf("changes run alone to the end: %d, want 12 (four rolled changes run here, three nodes each)", complete)
	}
	mu.Unlock()

	// One definition and one checksum on every node.
	defs, sums := map[string]string{}, map[string]int64{}
	for _, n := range sb.Nodes {
		ndb, _ := sb.DB(n.Name)
		defs[n.Name], sums[n.Name] = definitionAndChecksum(t, ndb)
	}
	for _, n := range sb.Nodes[1:] {
		if defs[n.Name] != defs[sb.Nodes[0].Name] {
			t.Errorf("%s's definition differs from %s's:\n%s\n%s", n.Name, sb.Nodes[0].Name, defs[n.Name], defs[sb.Nodes[0].Name])
		}
		if sums[n.Name] != sums[sb.Nodes[0].Name] {
			t.Errorf("checksums differ: %v", sums)
		}
	}
	for _, want := range []string{"`note` varchar(20)", "`note2` int(11) NOT NULL DEFAULT 7", "KEY `by_proxy`", "KEY `by_at_node`"} {
		if !strings.Contains(defs["node1"], want) {
			t.Errorf("the definition lacks %s:\n%s", want, defs["node1"])
		}
	}
	if strings.Contains(defs["node1"], "by_node") {
		t.Errorf("by_node was not dropped:\n%s", defs["node1"])
	}
	if op, err := store.ReadOperation(ctx); err != nil || op != nil {
		t.Errorf("operation left recorded: %+v %v", op, err)
	}
	waitFor(t, 10*time.Second, "no proxy shows an operation", func() bool {
		for _, m := range ms {
			if m.p.Operation() != nil {
				return false
			}
		}
		return true
	})
	for _, m := range ms {
		var steps, ended int
		for _, e := range m.p.Events() {
			if e.Kind == eventlog.Operation {
				steps++
				if strings.Contains(e.Detail, "ended") {
					ended++
				}
			}
		}
		// Five rolled changes (one stopped, then resumed: one
		// operation) last long enough to be seen start to end; a TOI
		// change of a few ms may be seen only as gone.
		if ended < 5 || steps < 5*3 {
			t.Errorf("%s recorded %d operation events, %d of them ends; want an end for each rolled change and each node's steps", m.name, steps, ended)
		}
	}

	// One operation at a time.
	if _, err := store.BeginOperation(ctx, discovery.Operation{ID: "other", Kind: "test", By: "test", Started: time.Now(), Updated: time.Now()}); err != nil {
		t.Fatal(err)
	}
	p, err = sc.Prepare(ctx, "ALTER TABLE app.ledger ADD INDEX at2 (at, id)", "", schemachange.Auto)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sc.Run(ctx, p); !errors.Is(err, discovery.ErrOperationRunning) || !strings.Contains(err.Error(), "other") {
		t.Errorf("a change while another operation runs: %v, want refused naming it", err)
	}
	if _, err := adm.Exec("INSERT INTO operations (statement, schema) VALUES ('ALTER TABLE ledger ADD INDEX at2 (at, id)', 'app')"); err != nil {
		t.Fatal(err)
	}
	id := plannedID(t, adm)
	if _, err := adm.Exec("UPDATE operations SET step = 'run' WHERE id = '" + id + "'"); err == nil || !strings.Contains(err.Error(), "other") {
		t.Errorf("a plan confirmed while another operation runs: %v, want refused naming it", err)
	}
	if _, err := adm.Exec("DELETE FROM operations WHERE id = 'other'"); err == nil || !strings.Contains(err.Error(), "not in this proxy") {
		t.Errorf("stopping an operation another runs, from this proxy: %v, want refused", err)
	}
	// Its runner dies (its record is no longer written): any proxy's
	// admin interface may abandon it, as the CLI may.
	dead, _ := json.Marshal(discovery.Operation{ID: "other", Kind: "test", By: "test", Started: time.Now().Add(-time.Minute), Updated: time.Now().Add(-time.Minute)})
	if _, err := store.Client.Put(ctx, store.Keys.Operation(), string(dead)); err != nil {
		t.Fatal(err)
	}
	if _, err := adm.Exec("DELETE FROM operations WHERE id = 'other'"); err != nil {
		t.Errorf("abandoning an operation whose runner died, from the admin interface: %v", err)
	}
	if op, err := store.ReadOperation(ctx); err != nil || op != nil {
		t.Errorf("after abandoning it: %+v %v, want none recorded", op, err)
	}
}

// plannedID is the one plan awaiting confirmation at the admin prompt adm.
func plannedID(t *testing.T, adm *sql.DB) string {
	t.Helper()
	var id, method, why string
	if err := adm.QueryRow("SELECT id, method, detail FROM operations WHERE step = 'planned'").Scan(&id, &method, &why); err != nil {
		t.Fatalf("the plan: %v", err)
	}
	t.Logf("planned at the admin prompt: %s %s — %s", id, method, why)
	return id
}

// adminRun plans stmt at the admin prompt adm, checks the plan's method,
// confirms it, and waits until the proxy has run it to the end.
func adminRun(t *testing.T, ctx context.Context, adm *sql.DB, store *discovery.Store, stmt, schema, want string) {
	t.Helper()
	if _, err := adm.Exec("INSERT INTO operations (statement, schema) VALUES ('" + stmt + "', '" + schema + "')"); err != nil {
		t.Fatalf("plan %s: %v", stmt, err)
	}
	id := plannedID(t, adm)
	var method string
	if err := adm.QueryRow("SELECT method FROM operations WHERE id = '" + id + "'").Scan(&method); err != nil || method != want {
		t.Fatalf("plan %s: method %q %v, want %s", stmt, method, err, want)
	}
	if op, err := store.ReadOperation(ctx); err != nil || op != nil {
		t.Fatalf("a plan recorded an operation (%+v %v): planning runs nothing", op, err)
	}
	began := time.Now()
	if _, err := adm.Exec("UPDATE operations SET step = 'run' WHERE id = '" + id + "'"); err != nil {
		t.Fatalf("run %s: %v", id, err)
	}
	op, err := store.ReadOperation(ctx)
	if err != nil || op == nil || op.By != "proxy4 (admin)" {
		t.Fatalf("after the confirmation the operation is %+v %v, want it recorded by proxy4 (admin)", op, err)
	}
	waitFor(t, 5*time.Minute, stmt+" run by the proxy", func() bool {
		o, err := store.ReadOperation(ctx)
		if err == nil && o != nil && o.Failed != "" {
			t.Fatalf("%s stopped: %s", stmt, o.Failed)
		}
		return err == nil && o == nil
	})
	var n int
	if err := adm.QueryRow("SELECT COUNT(*) FROM operations").Scan(&n); err != nil || n != 0 {
		t.Errorf("operations after the change: %d rows %v, want none", n, err)
	}
	t.Logf("FIGURE %s run from a proxy's admin interface (%s): %s", stmt, want, time.Since(began).Round(time.Millisecond))
}

// window is when a node ran a change alone.
type window struct {
	node     string
	from, to time.Time
}

// killWhileAltering waits until a node runs a rolled change alone and its
// server executes the ALTER, kills it (kill -9) and sends its name.
func killWhileAltering(t *testing.T, sb *sandbox.Sandbox, mu *sync.Mutex, alone *[]window, victim chan<- string) {
	defer close(victim)
	mu.Lock()
	seen := len(*alone)
	mu.Unlock()
	deadline := time.Now().Add(5 * time.Minute)
	for time.Now().Before(deadline) {
		mu.Lock()
		node := ""
		if len(*alone) > seen {
			node = (*alone)[len(*alone)-1].node
		}
		mu.Unlock()
		if node != "" {
			db, _ := sb.DB(node)
			var n int
			if db.QueryRow("SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE INFO LIKE 'ALTER TABLE%by_at_node%'").Scan(&n) == nil && n > 0 {
				if err := sb.Kill(node); err != nil {
					t.Errorf("kill %s: %v", node, err)
				}
				victim <- node
				return
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Errorf("no node ran the ALTER within 5 minutes")
}

var autoIncrementOption = regexp.MustCompile(` AUTO_INCREMENT=\d+`)

// definitionAndChecksum reads app.ledger's definition and checksum after
// the node applied everything committed before (wsrep_sync_wait).
func definitionAndChecksum(t *testing.T, db *sql.DB) (string, int64) {
	t.Helper()
	conn, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(context.Background(), "SET SESSION wsrep_sync_wait = 1"); err != nil {
		t.Fatal(err)
	}
	defer conn.ExecContext(context.Background(), "SET SESSION wsrep_sync_wait = 0") //nolint:errcheck
	var name, def string
	var sum sql.NullInt64
	if err := conn.QueryRowContext(context.Background(), "SHOW CREATE TABLE app.ledger").Scan(&name, &def); err != nil {
		t.Fatal(err)
	}
	if err := conn.QueryRowContext(context.Background(), "CHECKSUM TABLE app.ledger").Scan(&name, &sum); err != nil {
		t.Fatal(err)
	}
	return autoIncrementOption.ReplaceAllString(def, ""), sum.Int64
}

// meter writes through one proxy in a loop and keeps each write's start
// and latency: the write stall a change causes is the worst latency in
// its window.
type meter struct {
	mu   sync.Mutex
	at   []time.Time
	took []time.Duration
	errs map[string]int
	stop chan struct{}
	done chan struct{}
}

func startMeter(m *member) *meter {
	mt := &meter{errs: map[string]int{}, stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(mt.done)
		for i := 0; i < 1_000_000; i++ {
			select {
			case <-mt.stop:
				return
			default:
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			began := time.Now()
			_, err := m.db.ExecContext(ctx, "INSERT INTO app.ledger (node, proxy, at) VALUES (@@wsrep_node_name, 'meter', NOW(6))")
			took := time.Since(began)
			cancel()
			mt.mu.Lock()
			if err != nil {
				mt.errs[err.Error()]++
			} else {
				mt.at, mt.took = append(mt.at, began), append(mt.took, took)
			}
			mt.mu.Unlock()
			time.Sleep(5 * time.Millisecond)
		}
	}()
	return mt
}

// worst is the longest write that overlapped [from, to].
func (mt *meter) worst(from, to time.Time) time.Duration {
	mt.mu.Lock()
	defer mt.mu.Unlock()
	var w time.Duration
	for i, at := range mt.at {
		if at.Before(to) && at.Add(mt.took[i]).After(from) {
			w = max(w, mt.took[i])
		}
	}
	return w
}

// last is when the newest write began.
func (mt *meter) last() time.Time {
	mt.mu.Lock()
	defer mt.mu.Unlock()
	return mt.at[len(mt.at)-1]
}

func (mt *meter) count() int {
	mt.mu.Lock()
	defer mt.mu.Unlock()
	return len(mt.at)
}

func (mt *meter) finish() map[string]int {
	close(mt.stop)
	<-mt.done
	mt.mu.Lock()
	defer mt.mu.Unlock()
	return mt.errs
}
