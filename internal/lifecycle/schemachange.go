package lifecycle

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/galeon-db/galeon/internal/discovery"
	"github.com/galeon-db/galeon/internal/schemachange"
	"github.com/galeon-db/galeon/internal/sharedconfig"
)

// NodeDB returns an administrative connection pool to one node's server.
// Its statements must be allowed to run for minutes (an ALTER, a backup's
// locks): no client read timeout, only the context.
type NodeDB func(ctx context.Context, node string) (*sql.DB, error)

// DirectNodeDB opens pools to the nodes at the MySQL addresses their
// agents registered, as user (no client read timeout: statements run as
// long as their context allows). For clusters outside a sandbox: the
// operator's machine reaches the nodes with an account that may run DDL
// and SET GLOBAL.
func DirectNodeDB(store *discovery.Store, user, password string) func(node string) (*sql.DB, error) {
	return func(node string) (*sql.DB, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		nodes, err := store.Nodes(ctx)
		if err != nil {
			return nil, err
		}
		for _, n := range nodes {
			if n.Name == node {
				return AddrDB(user, password)(n.Address)
			}
		}
		return nil, fmt.Errorf("no node %s is registered", node)
	}
}

// AddrDB opens a pool to the server at a MySQL address as user, as
// DirectNodeDB does (for replicas, which are not nodes).
func AddrDB(user, password string) func(addr string) (*sql.DB, error) {
	return func(addr string) (*sql.DB, error) {
		cfg := mysql.NewConfig()
		cfg.User, cfg.Passwd, cfg.Net, cfg.Addr = user, password, "tcp", addr
		cfg.Timeout, cfg.WriteTimeout = 5*time.Second, 30*time.Second
		c, err := mysql.NewConnector(cfg)
		if err != nil {
			return nil, err
		}
		return sql.OpenDB(c), nil
	}
}

// CachedNodeDB makes a NodeDB that opens one pool per node with open and
// keeps it; closeAll closes them.
func CachedNodeDB(open func(node string) (*sql.DB, error)) (db NodeDB, closeAll func()) {
	var mu sync.Mutex
	pools := map[string]*sql.DB{}
	return func(_ context.Context, node string) (*sql.DB, error) {
			mu.Lock()
			defer mu.Unlock()
			if p := pools[node]; p != nil {
				return p, nil
			}
			p, err := open(node)
			if err == nil {
				pools[node] = p
			}
			return p, err
		}, func() {
			mu.Lock()
			defer mu.Unlock()
			for _, p := range pools {
				p.Close()
			}
		}
}

// SchemaChange runs a schema change on a cluster so that clients notice
// as little as possible (see schemachange.Decide): as TOI on the writer
// when MariaDB makes it as a metadata change only, or rolled one node at a
// time (RSU) — each node drained through every proxy, changed alone,
// caught up to Synced, and given traffic again; readers first, the writer
// last after a switchover. The operation is recorded in etcd (one at a
// time per cluster) with its progress, so that it can be resumed.
type SchemaChange struct {
	Store *discovery.Store
	DB    NodeDB
	// ReplicaDB opens a pool to an asynchronous replica (or the node of
	// a DR cluster that replicates) at its address, as an account that
	// may run DDL there: a change rolled node by node is in no binary
	// log, so it is run on each of them after the roll. Nil leaves the replicas without it
	// (said in the progress).
	ReplicaDB func(addr string) (*sql.DB, error)
	// By names who runs it (events, the operation record).
	By       string
	Progress func(node, msg string)
	// DrainTimeout bounds the wait for a drained node's in-flight work
	// (default 10s); SyncTimeout the wait for a changed node to catch up
	// (default 30m: it applies everything the cluster wrote meanwhile).
	DrainTimeout, SyncTimeout time.Duration
}

// Prepared is a change read, probed and decided, ready to run.
type Prepared struct {
	Change schemachange.Change
	Schema string
	Table  schemachange.Table
	Probe  schemachange.Probe
	Plan   schemachange.Plan
	// Writer is the writer when it was prepared; Before the table's
	// definition then, After what the probe's copy became.
	Writer, Before, After string
}

// Statement is what galeon runs on each node: the change as one ALTER
// TABLE on the qualified table, with the plan's algorithm (or the one the
// operator wrote).
func (p Prepared) Statement() string {
	algo := p.Plan.Algorithm
	if algo == "" {
		algo = p.Change.Algorithm
	}
	return p.Change.AlterText(p.Change.QualifiedTable(p.Schema), algo)
}

// Prepare parses stmt, reads the table on the writer, probes the change on
// an empty copy there (not replicated) and decides how to run it.
func (s SchemaChange) Prepare(ctx context.Context, stmt, schema string, asked schemachange.Method) (Prepared, error) {
	c, err := schemachange.Parse(stmt)
	if err != nil {
		return Prepared{}, err
	}
	p := Prepared{Change: c, Schema: c.Schema}
	if p.Schema == "" {
		p.Schema = schema
	}
	if p.Schema == "" {
		return p, errors.New("the statement names no database: write db.table or give --schema")
	}
	u, err := s.Store.ReadDecision(ctx)
	if err != nil {
		return p, err
	}
	if p.Writer = u.Decision.Writer; p.Writer == "" {
		return p, errors.New("the cluster has no writer now: a schema change starts from a healthy cluster")
	}
	db, err := s.DB(ctx, p.Writer)
	if err != nil {
		return p, err
	}
	if p.Table, p.Before, err = readTable(ctx, db, p.Schema, c.Table); err != nil {
		return p, err
	}
	if slices.ContainsFunc(c.Clauses, func(cl schemachange.Clause) bool { return cl.Kind == schemachange.RenameTable }) {
		// Renaming the copy would leave it under the new name.
		p.Probe = schemachange.Probe{Why: "not probed: the change renames the table"}
	} else if p.Probe, p.After, err = probe(ctx, db, p.Schema, c); err != nil {
		return p, err
	}
	p.Plan = schemachange.Decide(c, p.Table, p.Probe, asked)
	if p.Plan.Method == schemachange.RSU && !p.Plan.Refused {
		if rs, err := s.Store.Replicas(ctx); err == nil && len(rs) > 0 {
			// A rolled change runs with sql_log_bin = 0 on each node:
			// no binary log carries it to the replicas.
			p.Plan.Why += fmt.Sprintf(". %d asynchronous replica(s) follow the cluster: a rolled change is in no binary log, so they keep the old table; run it on them too (before a change their row events would not fit), or use TOI", len(rs))
		}
	}
	return p, nil
}

// readTable reads a table's columns, primary key and definition.
func readTable(ctx context.Context, db *sql.DB, schema, table string) (schemachange.Table, string, error) {
	var t schemachange.Table
	cols := func(q string) ([]string, error) {
		rows, err := db.QueryContext(ctx, q, schema, table)
		if err != nil {
			return nil, err
		}
		defer rows.Close()
		var out []string
		for rows.Next() {
			var c string
			if err := rows.Scan(&c); err != nil {
				return nil, err
			}
			out = append(out, c)
		}
		return out, rows.Err()
	}
	var err error
	if t.Columns, err = cols("SELECT COLUMN_NAME FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ? ORDER BY ORDINAL_POSITION"); err != nil {
		return t, "", err
	}
	if len(t.Columns) == 0 {
		return t, "", fmt.Errorf("table %s.%s does not exist on the writer", schema, table)
	}
	if t.PrimaryKey, err = cols("SELECT COLUMN_NAME FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ? AND INDEX_NAME = 'PRIMARY' ORDER BY SEQ_IN_INDEX"); err != nil {
		return t, "", err
	}
	rows, err := db.QueryContext(ctx, "SELECT INDEX_NAME, COLUMN_NAME FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ? AND NON_UNIQUE = 0 AND INDEX_NAME <> 'PRIMARY' ORDER BY INDEX_NAME, SEQ_IN_INDEX", schema, table)
	if err != nil {
		return t, "", err
	}
	defer rows.Close()
	t.Unique = map[string][]string{}
	for rows.Next() {
		var idx, col string
		if err := rows.Scan(&idx, &col); err != nil {
			return t, "", err
		}
		t.Unique[idx] = append(t.Unique[idx], col)
	}
	if err := rows.Err(); err != nil {
		return t, "", err
	}
	def, err := showCreate(ctx, db, schema, table)
	return t, def, err
}

var autoIncrementOption = regexp.MustCompile(` AUTO_INCREMENT=\d+`)

// showCreate returns a table's definition without its AUTO_INCREMENT=
// counter, which differs between nodes and over time.
func showCreate(ctx context.Context, q interface {
	QueryRowContext(context.Context, string, ...any) *sql.Row
}, schema, table string) (string, error) {
	var name, def string
	err := q.QueryRowContext(ctx, "SHOW CREATE TABLE "+quote(schema)+"."+quote(table)).Scan(&name, &def)
	return autoIncrementOption.ReplaceAllString(def, ""), err
}

func quote(s string) string { return "`" + strings.ReplaceAll(s, "`", "``") + "`" }

// probe runs the change on an empty copy of the table on one node with
// replication and the binary log off for the session, first with
// ALGORITHM=INSTANT, then (if the server refuses that) as it would run:
// the server's own word on whether the change is metadata-only, and a
// check that the change is valid at all before any node runs it. It
// returns the copy's definition after the change, under the table's name.
func probe(ctx context.Context, db *sql.DB, schema string, c schemachange.Change) (schemachange.Probe, string, error) {
	conn, err := db.Conn(ctx)
	if err != nil {
		return schemachange.Probe{}, "", err
	}
	// The session's wsrep_on and sql_log_bin must not go back to the
	// pool: the connection is closed, not returned.
	defer conn.Close()
	defer conn.Raw(func(any) error { return driver.ErrBadConn }) //nolint:errcheck
	if _, err := conn.ExecContext(ctx, "SET SESSION wsrep_on = OFF, SESSION sql_log_bin = 0"); err != nil {
		return schemachange.Probe{}, "", fmt.Errorf("probe: %w", err)
	}
	name := fmt.Sprintf("_galeon_probe_%x", time.Now().UnixNano())
	copyOf := quote(schema) + "." + quote(name)
	if _, err := conn.ExecContext(ctx, "CREATE TABLE "+copyOf+" LIKE "+c.QualifiedTable(schema)); err != nil {
		return schemachange.Probe{}, "", fmt.Errorf("probe: copying the table's definition: %w", err)
	}
	defer conn.ExecContext(context.WithoutCancel(ctx), "DROP TABLE IF EXISTS "+copyOf) //nolint:errcheck
	p := schemachange.Probe{Ran: true}
	_, err = conn.ExecContext(ctx, c.AlterText(copyOf, "INSTANT"))
	if err == nil {
		p.Instant = true
	} else {
		p.Why = err.Error()
		if _, err := conn.ExecContext(ctx, c.AlterText(copyOf, "")); err != nil {
			if hasForeignKeyClause(c) {
				// A copy made with LIKE has no foreign keys: dropping one
				// cannot be tried there.
				return schemachange.Probe{Why: "not probed: an empty copy of the table has no foreign keys"}, "", nil
			}
			return p, "", fmt.Errorf("the change fails on an empty copy of the table, so it would fail on every node: %w", err)
		}
	}
	after, err := showCreate(ctx, conn, schema, name)
	if err != nil {
		return p, "", err
	}
	after = strings.Replace(after, quote(name), quote(c.Table), 1)
	return p, after, nil
}

func hasForeignKeyClause(c schemachange.Change) bool {
	return slices.ContainsFunc(c.Clauses, func(cl schemachange.Clause) bool {
		return cl.Kind == schemachange.DropForeignKey || cl.Kind == schemachange.DropConstraint
	})
}

// Result is what running a change did.
type Result struct {
	Method schemachange.Method
	// Seconds per node (RSU), or on the writer for the whole cluster (TOI).
	Seconds map[string]float64
	Total   time.Duration
}

// Run carries out a prepared plan and records it in etcd while it runs.
func (s SchemaChange) Run(ctx context.Context, p Prepared) (Result, error) {
	carryOut, err := s.Start(ctx, p)
	if err != nil {
		return Result{}, err
	}
	return carryOut(ctx)
}

// Start checks that a prepared plan may run now and records it in etcd
// (one operation at a time); carryOut then runs it. Split so that one
// who starts a change for someone else (the admin interface) can say at
// once whether it started.
func (s SchemaChange) Start(ctx context.Context, p Prepared) (carryOut func(context.Context) (Result, error), err error) {
	s.defaults()
	if p.Plan.Refused {
		return nil, errors.New(p.Plan.Why)
	}
	if err := healthy(ctx, s.Store); err != nil {
		return nil, err
	}
	if p.Plan.Method == schemachange.RSU {
		// The roll drains and undrains every node: it would end an
		// operator's drain.
		drained, err := sharedconfig.Drained(ctx, s.Store)
		if err != nil {
			return nil, err
		}
		if len(drained) > 0 {
			return nil, fmt.Errorf("%s drained by an operator: a rolled change drains and undrains every node, which would end that drain; undrain first (galeon proxy drain NODE --undo), or run the change later", strings.Join(drained, ", "))
		}
	}
	op := discovery.Operation{
		ID: fmt.Sprintf("ddl-%d", time.Now().UnixMilli()), Kind: discovery.OperationSchemaChange, By: s.By,
		Statement: p.Statement(), Schema: p.Schema, Method: string(p.Plan.Method),
		Before: p.Before, After: p.After, Seconds: map[string]float64{},
		Started: time.Now().UTC(), Updated: time.Now(),
	}
	if _, err := s.Store.BeginOperation(ctx, op); err != nil {
		return nil, fmt.Errorf("%w: one operation at a time (galeon cluster ddl --resume or --abandon)", err)
	}
	return func(ctx context.Context) (Result, error) { return s.carryOut(ctx, op) }, nil
}

// Resume goes on with the recorded schema change from where it stopped: a
// node whose table already has the new definition counts as done.
func (s SchemaChange) Resume(ctx context.Context) (Result, error) {
	carryOut, err := s.StartResume(ctx)
	if err != nil {
		return Result{}, err
	}
	return carryOut(ctx)
}

// StartResume checks that the recorded schema change may go on now;
// carryOut then goes on with it.
func (s SchemaChange) StartResume(ctx context.Context) (carryOut func(context.Context) (Result, error), err error) {
	s.defaults()
	op, err := s.Store.ReadOperation(ctx)
	if err != nil {
		return nil, err
	}
	if op == nil {
		return nil, errors.New("no operation is recorded: nothing to resume")
	}
	if op.Kind != discovery.OperationSchemaChange {
		return nil, fmt.Errorf("the recorded operation is a %s (%s), not a schema change", op.Kind, op.ID)
	}
	if err := live(op); err != nil {
		return nil, err
	}
	if err := healthy(ctx, s.Store); err != nil {
		return nil, err
	}
	s.Progress("", "resuming "+op.ID+": "+op.Statement)
	op.Failed = ""
	return func(ctx context.Context) (Result, error) { return s.carryOut(ctx, *op) }, nil
}

// Abandon removes the recorded operation without running anything more,
// after an operator has put the cluster right by hand.
func (s SchemaChange) Abandon(ctx context.Context) (*discovery.Operation, error) {
	op, err := s.Store.ReadOperation(ctx)
	if err != nil || op == nil {
		return nil, err
	}
	if err := live(op); err != nil {
		return nil, err
	}
	return op, s.Store.EndOperation(ctx, op.ID)
}

func (s *SchemaChange) defaults() { opDefaults(&s.DrainTimeout, &s.SyncTimeout, &s.Progress) }

// healthy refuses to start while a node is not Synced (a state transfer,
// a node down): a roll needs every node, and a donor's desync must not
// add to it. A node on its way back to Synced (Joined after a short
// desync, such as the previous operation's) is waited for up to
// transientWait before that counts.
func healthy(ctx context.Context, store *discovery.Store) error {
	deadline := time.Now().Add(transientWait)
	for {
		nodes, err := store.Nodes(ctx)
		if err != nil {
			return err
		}
		why, transient := unhealthy(nodes)
		if why == "" {
			return nil
		}
		if !transient || time.Now().After(deadline) {
			return errors.New(why)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// transientWait is how long healthy waits for a node that is up and
// catching up.
const transientWait = 10 * time.Second

// unhealthy says why the cluster is not ready for an operation ("" if it
// is), and whether that may pass by itself soon: every node not Synced is
// up and Joined or Desynced (on its way back after a desync; a donor of a
// state transfer looks the same, and is refused after transientWait).
func unhealthy(nodes []discovery.NodeFacts) (why string, transient bool) {
	if len(nodes) == 0 {
		return "no node is registered", false
	}
	transient = true
	for _, n := range nodes {
		if n.Synced {
			continue
		}
		if why == "" {
			why = fmt.Sprintf("%s is not Synced (%s): a schema change or backup starts from a healthy cluster, not during a state transfer or with a node down", n.Name, n.LocalStateComment)
		}
		if !n.Up || (n.LocalState != 2 && n.LocalState != 3) {
			transient = false
		}
	}
	if why == "" {
		return "", false
	}
	return why, transient
}

func (s SchemaChange) carryOut(ctx context.Context, op discovery.Operation) (Result, error) {
	start := time.Now()
	if op.Seconds == nil {
		op.Seconds = map[string]float64{}
	}
	rec := &opRecord{op: op, store: s.Store}
	hctx, stopBeat := context.WithCancel(ctx)
	defer stopBeat()
	go rec.heartbeat(hctx)
	res := Result{Method: schemachange.Method(op.Method), Seconds: map[string]float64{}}
	fail := func(err error) (Result, error) {
		stopBeat()
		rec.set(ctx, func(op *discovery.Operation) { op.Failed, op.Step = err.Error(), "stopped" })
		return res, err
	}
	done := func() (Result, error) {
		stopBeat()
		res.Total = time.Since(start)
		final := rec.get()
		for k, v := range final.Seconds {
			res.Seconds[k] = v
		}
		return res, s.Store.EndOperation(context.WithoutCancel(ctx), final.ID)
	}
	u, err := s.Store.ReadDecision(ctx)
	if err != nil {
		return fail(err)
	}
	writer := u.Decision.Writer
	if writer == "" {
		return fail(errors.New("the cluster has no writer now"))
	}
	if op.Method == string(schemachange.TOI) {
		rec.set(ctx, func(op *discovery.Operation) {
			op.Current, op.Step, op.Order = writer, "running as TOI", []string{writer}
		})
		if op.After != "" && op.Before != op.After {
			// A resume: the writer may have the change already.
			if db, err := s.DB(ctx, writer); err == nil {
				if def, err := showCreate(ctx, db, op.Schema, tableOf(&op)); err == nil && def == op.After {
					s.Progress(writer, "already has the new definition: every node ran it")
					return done()
				}
			}
		}
		s.Progress(writer, "running as TOI on the writer: "+op.Statement)
		took, err := s.runOn(ctx, writer, "TOI", rec)
		if err != nil {
			var refused *errRefused
			if errors.As(err, &refused) {
				return fail(fmt.Errorf("on the writer %s: %w (TOI: no node changed)", writer, err))
			}
			return fail(fmt.Errorf("on the writer %s: %w: whether the cluster ran it is read again on --resume", writer, err))
		}
		rec.set(ctx, func(op *discovery.Operation) {
			op.Seconds[writer], op.Done = took.Seconds(), []string{writer}
			op.Step = "applied everywhere?"
		})
		s.Progress(writer, fmt.Sprintf("done on the writer in %s (writes to the cluster paused meanwhile)", took.Round(time.Millisecond)))
		// The writer returns when it has run the statement; every other
		// node runs it too, in the same total order, and may finish
		// later. The change is done when every node has it: the next
		// change must find one definition everywhere.
		all, err := s.appliedEverywhere(ctx, writer, took)
		if err != nil {
			s.Progress(writer, "could not see every node apply it: "+err.Error())
		} else {
			s.Progress(writer, fmt.Sprintf("every node has it %s after it began", (took+all).Round(time.Millisecond)))
		}
		return done()
	}
	nodes, err := s.Store.Nodes(ctx)
	if err != nil {
		return fail(err)
	}
	var readers []string
	for _, n := range nodes {
		if n.Name != writer {
			readers = append(readers, n.Name)
		}
	}
	slices.Sort(readers)
	if len(readers) == 0 {
		return fail(errors.New("a rolling change needs two nodes or more: with one, run it as TOI (--method toi)"))
	}
	order := append(readers, writer)
	rec.set(ctx, func(op *discovery.Operation) { op.Order = order })
	for i, name := range order {
		cur := rec.get()
		if slices.Contains(cur.Done, name) {
			continue
		}
		if name == writer {
			if len(cur.Done) == 0 {
				return fail(errors.New("no changed node to move the writer to"))
			}
			rec.set(ctx, func(op *discovery.Operation) { op.Current, op.Step = name, "switchover" })
			if err := switchover(ctx, s.Store, writer, cur.Done[0], "schema-change", s.Progress); err != nil {
				return fail(fmt.Errorf("%s: %w", name, err))
			}
		}
		took, err := s.rollOne(ctx, name, rec)
		if err != nil {
			return fail(fmt.Errorf("stopped at %s: %w; changed: %v, still to do: %v (the old and new tables replicate to each other, so the cluster serves as it is); `galeon cluster ddl --resume` goes on", name, err, cur.Done, order[i:]))
		}
		rec.set(ctx, func(op *discovery.Operation) {
			op.Done = append(op.Done, name)
			op.Seconds[name] = took.Seconds()
			op.Current, op.Step = "", ""
		})
		if left := len(order) - len(rec.get().Done); left > 0 {
			s.Progress(name, fmt.Sprintf("changed in %s; %d of %d nodes done, about %s to go", took.Round(time.Second), len(order)-left, len(order), (took*time.Duration(left)).Round(time.Second)))
		} else {
			s.Progress(name, fmt.Sprintf("changed in %s; every node done", took.Round(time.Second)))
		}
	}
	s.changeReplicas(ctx, rec.get())
	return done()
}

// changeReplicas runs a change rolled under RSU on every asynchronous
// replica of the cluster: no node logged it (sql_log_bin = 0: a local
// GTID would break replication from the cluster), so no replica gets it
// through replication. The
// change replicates both ways with the old definition (the roll's rule),
// so a replica applies the cluster's rows whether it has it yet or not.
// A replica that has the new definition already is left as it is; one
// that cannot be changed is said, and the roll is not failed for it.
func (s SchemaChange) changeReplicas(ctx context.Context, op discovery.Operation) {
	rs, err := s.Store.Replicas(ctx)
	if err != nil || len(rs) == 0 {
		return
	}
	table := tableOf(&op)
	for _, r := range rs {
		switch {
		case r.Promoted:
			s.Progress(r.Name, "replica promoted to a primary of its own: not changed")
			continue
		case r.Address == "" || !r.Up:
			s.Progress(r.Name, "replica not reachable now: not changed; run the statement there by hand")
			continue
		case s.ReplicaDB == nil:
			s.Progress(r.Name, "replica not changed (no account to reach it): run the statement there by hand")
			continue
		}
		db, err := s.ReplicaDB(r.Address)
		if err != nil {
			s.Progress(r.Name, "replica not changed: "+err.Error())
			continue
		}
		start := time.Now()
		err = changeReplica(ctx, db, op, table)
		db.Close()
		switch {
		case errors.Is(err, errHasIt):
			s.Progress(r.Name, "replica already has the new definition")
		case err != nil:
			s.Progress(r.Name, "replica NOT changed: "+err.Error()+"; run the statement there by hand")
		default:
			s.Progress(r.Name, fmt.Sprintf("replica changed in %s (at %s)", time.Since(start).Round(time.Millisecond), r.Address))
		}
	}
}

var errHasIt = errors.New("has the new definition")

// changeReplica runs op's statement on one replica, unless it has the
// new definition already (a resumed roll).
func changeReplica(ctx context.Context, db *sql.DB, op discovery.Operation, table string) error {
	conn, err := db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	if op.After != "" && table != "" {
		if def, err := showCreate(ctx, conn, op.Schema, table); err == nil && def == op.After {
			return errHasIt
		}
	}
	// A metadata lock held by the replica's applying or a long read must
	// not keep the roll's end waiting for a day.
	if _, err := conn.ExecContext(ctx, "SET SESSION lock_wait_timeout = 60"); err != nil {
		return err
	}
	if op.Schema != "" {
		if _, err := conn.ExecContext(ctx, "USE "+quote(op.Schema)); err != nil {
			return err
		}
	}
	_, err = conn.ExecContext(ctx, op.Statement)
	return err
}

// rollOne changes one node alone: drained through every proxy, the
// statement run with wsrep_OSU_method = RSU (the node desyncs itself and
// the cluster goes on without waiting for it), caught up to Synced, and
// given traffic again. A node that already has the new definition (a
// resume after the change finished there) is only brought back.
func (s SchemaChange) rollOne(ctx context.Context, name string, rec *opRecord) (time.Duration, error) {
	start := time.Now()
	rec.set(ctx, func(op *discovery.Operation) { op.Current, op.Step = name, "draining" })
	if err := drain(ctx, s.Store, name, "schema-change", s.DrainTimeout, s.Progress); err != nil {
		return 0, err
	}
	db, err := s.DB(ctx, name)
	if err != nil {
		return 0, err
	}
	op := rec.get()
	table := tableOf(&op)
	def, err := showCreate(ctx, db, op.Schema, table)
	if err != nil {
		return 0, fmt.Errorf("reading the table's definition: %w (it stays drained)", err)
	}
	switch {
	case op.After != "" && op.After != op.Before && def == op.After:
		// (A change that leaves the definition as it was — a rebuild —
		// cannot be told done from its definition: it runs again,
		// harmlessly.)
		s.Progress(name, "already has the new definition")
	case def != op.Before:
		return 0, fmt.Errorf("its table is neither the old definition nor the new one (changed by hand, or its ALTER still runs?); it stays drained:\n%s", def)
	default:
		rec.set(ctx, func(op *discovery.Operation) { op.Step = "altering (RSU)" })
		s.Progress(name, "running the change alone (RSU): "+op.Statement)
		if _, err := s.runOn(ctx, name, "RSU", rec); err != nil {
			var refused *errRefused
			if !errors.As(err, &refused) {
				return 0, fmt.Errorf("%w: whether the change was made there is read again on --resume (it stays drained)", err)
			}
			// The server refused the statement: the table is as it was
			// (DDL is atomic), so the node serves again.
			if uerr := sharedconfig.SetDrained(context.WithoutCancel(ctx), s.Store, name, false, "schema-change"); uerr == nil {
				return 0, fmt.Errorf("%w (unchanged; it takes traffic again)", err)
			}
			return 0, fmt.Errorf("%w (it stays drained)", err)
		}
		// What a changed node really has (the probe's copy lacked
		// foreign keys, say) is what the others must match.
		if def, err := showCreate(ctx, db, op.Schema, table); err == nil {
			rec.set(ctx, func(op *discovery.Operation) { op.After = def })
		}
	}
	rec.set(ctx, func(op *discovery.Operation) { op.Step = "catching up" })
	s.Progress(name, "catching up with the cluster")
	if err := waitSyncedOn(ctx, db, s.Store, name, s.SyncTimeout); err != nil {
		return 0, fmt.Errorf("did not come back Synced: %w (it stays drained)", err)
	}
	if err := sharedconfig.SetDrained(ctx, s.Store, name, false, "schema-change"); err != nil {
		return 0, fmt.Errorf("undrain: %w", err)
	}
	s.Progress(name, "Synced; taking traffic again")
	return time.Since(start), waitOnlineEverywhere(ctx, s.Store, name, 30*time.Second)
}

func tableOf(op *discovery.Operation) string {
	c, err := schemachange.Parse(op.Statement)
	if err != nil {
		return ""
	}
	return c.Table
}

// runOn runs the operation's statement on node with the given
// wsrep_OSU_method, in the operation's database, reporting the server's
// own progress (PROCESSLIST's PROGRESS) every few seconds. If ctx ends
// while it runs, the statement is killed on the server (KILL QUERY), so
// that a node is not left running a change nobody waits for.
func (s SchemaChange) runOn(ctx context.Context, node, method string, rec *opRecord) (time.Duration, error) {
	op := rec.get()
	db, err := s.DB(ctx, node)
	if err != nil {
		return 0, err
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	// wsrep_OSU_method must not go back to the pool.
	defer conn.Raw(func(any) error { return driver.ErrBadConn }) //nolint:errcheck
	var id int64
	if err := conn.QueryRowContext(ctx, "SELECT CONNECTION_ID()").Scan(&id); err != nil {
		return 0, err
	}
	// A metadata lock the statement waits for holds the whole cluster
	// (TOI) or keeps the node paused (RSU): wait a bounded time, then
	// fail and say so. A rolled change stays out of the node's binary log:
	// it would get a GTID no other node has.
	set := "SET SESSION wsrep_OSU_method = 'TOI', SESSION lock_wait_timeout = 30"
	if method == "RSU" {
		set = "SET SESSION wsrep_OSU_method = 'RSU', SESSION lock_wait_timeout = 60, SESSION sql_log_bin = 0"
	}
	if _, err := conn.ExecContext(ctx, set); err != nil {
		return 0, err
	}
	if _, err := conn.ExecContext(ctx, "USE "+quote(op.Schema)); err != nil {
		return 0, err
	}
	wctx, stop := context.WithCancel(ctx)
	defer stop()
	go s.watchProgress(wctx, db, node, id, rec)
	start := time.Now()
	_, err = conn.ExecContext(ctx, op.Statement)
	took := time.Since(start)
	if err != nil && ctx.Err() != nil {
		kctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		_, kerr := db.ExecContext(kctx, fmt.Sprintf("KILL QUERY %d", id))
		cancel()
		if kerr == nil {
			err = fmt.Errorf("%w (the statement was killed on %s)", err, node)
		} else {
			err = fmt.Errorf("%w (and killing the statement on %s failed: %v: it may still run there)", err, node, kerr)
		}
	}
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		err = &errRefused{me}
	}
	return took, err
}

// appliedEverywhere waits until every registered node that is up and in
// the Primary component has committed what the writer has now (a TOI
// change runs on every node in total order: a node's
// wsrep_last_committed passes the change's seqno only once its own run
// is over). A node that is down or joining gets the change with its state
// transfer and is not waited for. It returns how long it waited.
func (s SchemaChange) appliedEverywhere(ctx context.Context, writer string, took time.Duration) (time.Duration, error) {
	start := time.Now()
	lastCommitted := func(db *sql.DB) (int64, error) {
		qctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		var k string
		var v int64
		err := db.QueryRowContext(qctx, "SHOW GLOBAL STATUS LIKE 'wsrep_last_committed'").Scan(&k, &v)
		return v, err
	}
	wdb, err := s.DB(ctx, writer)
	if err != nil {
		return 0, err
	}
	target, err := lastCommitted(wdb)
	if err != nil {
		return 0, fmt.Errorf("reading the writer's wsrep_last_committed: %w", err)
	}
	nodes, err := s.Store.Nodes(ctx)
	if err != nil {
		return 0, err
	}
	// Each node runs the change about as long as the writer did.
	timeout := 3*took + time.Minute
	var problems []string
	for _, n := range nodes {
		if n.Name == writer || !n.Up || n.ClusterStatus != "Primary" || n.LocalState == 1 {
			continue
		}
		db, err := s.DB(ctx, n.Name)
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s: %v", n.Name, err))
			continue
		}
		var seen int64
		err = until(ctx, timeout, fmt.Sprintf("%s to commit up to seqno %d", n.Name, target), func() bool {
			seen, err = lastCommitted(db)
			return err == nil && seen >= target
		})
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s (at seqno %d): %v", n.Name, seen, err))
		}
	}
	if len(problems) > 0 {
		return time.Since(start), errors.New(strings.Join(problems, "; "))
	}
	return time.Since(start), nil
}

// errRefused is the server's refusal of the statement (as opposed to a
// broken connection, after which nobody knows whether it ran).
type errRefused struct{ e *mysql.MySQLError }

func (e *errRefused) Error() string {
	return fmt.Sprintf("the server refused it: %d %s", e.e.Number, e.e.Message)
}

// watchProgress reports the statement's progress every 5 s, also in the
// operation's record.
func (s SchemaChange) watchProgress(ctx context.Context, db *sql.DB, node string, id int64, rec *opRecord) {
	t := time.NewTicker(5 * time.Second)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		var stage, maxStage int
		var pct float64
		var state sql.NullString
		err := db.QueryRowContext(ctx, "SELECT STAGE, MAX_STAGE, PROGRESS, STATE FROM information_schema.PROCESSLIST WHERE ID = ?", id).Scan(&stage, &maxStage, &pct, &state)
		if err == nil {
			msg := fmt.Sprintf("%.1f%% (stage %d of %d: %s)", pct, stage, max(maxStage, 1), state.String)
			s.Progress(node, msg)
			rec.set(ctx, func(op *discovery.Operation) { op.Detail = msg })
		}
	}
}
