// Package adminops runs the cluster operations an operator starts from a
// proxy's admin interface (the operations table, the dashboard): schema
// changes, exactly as `galeon cluster ddl` runs them. A change is planned
// first — parsed, probed on the writer, decided, nothing run — and kept
// for the operator to confirm; confirmed, it runs in this proxy, recorded
// in etcd like one the CLI runs, so every proxy shows its progress and
// the CLI (or any proxy's admin interface) can resume or abandon it if
// this proxy stops.
package adminops

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/galeon-db/galeon/internal/discovery"
	"github.com/galeon-db/galeon/internal/lifecycle"
	"github.com/galeon-db/galeon/internal/mysqlproto"
	"github.com/galeon-db/galeon/internal/proxyadmin"
	"github.com/galeon-db/galeon/internal/schemachange"
)

// planTTL is how long a plan waits for confirmation: the table and the
// cluster change, and a plan confirmed much later would run a decision
// made on what no longer holds.
const planTTL = 10 * time.Minute

// maxPlans bounds the plans kept; the oldest goes first.
const maxPlans = 16

// Runner plans and runs schema changes for the admin interface.
type Runner struct {
	sc       lifecycle.SchemaChange
	store    *discovery.Store
	closeDBs func()
	log      *slog.Logger
	now      func() time.Time

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu      sync.Mutex
	seq     int
	plans   []plan
	running *running // started here and not over
}

type plan struct {
	proxyadmin.Planned
	prepared lifecycle.Prepared
}

type running struct {
	stop context.CancelFunc
	// id is the recorded operation's; "" until it is known.
	id string
}

// New returns a Runner that reaches every node at the address its agent
// registered, as user (DDL and SET GLOBAL), and records operations as
// by. Close stops what it runs.
func New(store *discovery.Store, user, password, by string, log *slog.Logger) *Runner {
	db, closeDBs := lifecycle.CachedNodeDB(lifecycle.DirectNodeDB(store, user, password))
	r := &Runner{store: store, closeDBs: closeDBs, log: log, now: time.Now}
	r.sc = lifecycle.SchemaChange{Store: store, By: by, DB: db, ReplicaDB: lifecycle.AddrDB(user, password), Progress: func(node, msg string) {
		log.Info("schema change", "node", node, "progress", msg)
	}}
	r.ctx, r.cancel = context.WithCancel(context.Background())
	return r
}

// Close stops the operation this proxy runs (it stops where it is,
// recorded as stopped: resumable from anywhere) and waits for it.
func (r *Runner) Close() {
	r.mu.Lock()
	r.cancel()
	r.mu.Unlock()
	r.wg.Wait()
	r.closeDBs()
}

// Plan implements proxyadmin.Operations.
func (r *Runner) Plan(ctx context.Context, statement, schema, method string) (proxyadmin.Planned, error) {
	m, err := schemachange.ParseMethod(method)
	if err != nil {
		return proxyadmin.Planned{}, mysqlproto.NewSQLError(erConstraintFailed, "method: %v", err)
	}
	p, err := r.sc.Prepare(ctx, statement, schema, m)
	if err != nil {
		return proxyadmin.Planned{}, err
	}
	if p.Plan.Refused {
		return proxyadmin.Planned{}, errors.New(p.Plan.Why)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.seq++
	pl := plan{Planned: proxyadmin.Planned{ID: fmt.Sprintf("plan-%d", r.seq), Kind: discovery.OperationSchemaChange,
		Method: string(p.Plan.Method), Statement: p.Statement(), Schema: p.Schema, Why: p.Plan.Why, At: r.now()}, prepared: p}
	r.plans = append(r.expired(), pl)
	if len(r.plans) > maxPlans {
		r.plans = slices.Delete(r.plans, 0, len(r.plans)-maxPlans)
	}
	r.log.Info("schema change planned", "id", pl.ID, "method", pl.Method, "statement", pl.Statement)
	return pl.Planned, nil
}

// expired returns the plans still fresh (r.mu held).
func (r *Runner) expired() []plan {
	return slices.DeleteFunc(r.plans, func(p plan) bool { return r.now().Sub(p.At) > planTTL })
}

// Planned implements proxyadmin.Operations.
func (r *Runner) Planned() []proxyadmin.Planned {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.plans = r.expired()
	out := make([]proxyadmin.Planned, len(r.plans))
	for i, p := range r.plans {
		out[i] = p.Planned
	}
	return out
}

// take removes the plan id, if it is one.
func (r *Runner) take(id string) (plan, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.plans = r.expired()
	i := slices.IndexFunc(r.plans, func(p plan) bool { return p.ID == id })
	if i < 0 {
		return plan{}, false
	}
	p := r.plans[i]
	r.plans = slices.Delete(r.plans, i, i+1)
	return p, true
}

// Run implements proxyadmin.Operations.
func (r *Runner) Run(ctx context.Context, id string) error {
	r.mu.Lock()
	if r.ctx.Err() != nil {
		r.mu.Unlock()
		return errors.New("this proxy is stopping: run it from another proxy, or with galeon cluster ddl")
	}
	if r.running != nil {
		r.mu.Unlock()
		return errors.New("this proxy already runs an operation: one at a time")
	}
	run := &running{id: id}
	r.running = run
	r.mu.Unlock()
	carryOut, err := r.start(ctx, id)
	if err != nil {
		r.mu.Lock()
		r.running = nil
		r.mu.Unlock()
		return err
	}
	rctx, stop := context.WithCancel(r.ctx)
	r.mu.Lock()
	run.stop = stop
	if op, err := r.store.ReadOperation(ctx); err == nil && op != nil {
		run.id = op.ID // a plan runs under the operation's own id
	}
	r.mu.Unlock()
	r.mu.Lock()
	if r.ctx.Err() != nil { // Close began meanwhile: it stops here
		r.running = nil
		r.mu.Unlock()
		stop()
		return errors.New("this proxy is stopping: the change is recorded, and resumes from another proxy or galeon cluster ddl --resume")
	}
	r.wg.Add(1)
	r.mu.Unlock()
	go func() {
		defer r.wg.Done()
		defer stop()
		res, err := carryOut(rctx)
		r.mu.Lock()
		r.running = nil
		r.mu.Unlock()
		if err != nil {
			r.log.Warn("schema change stopped", "id", id, "err", err)
			return
		}
		r.log.Info("schema change done", "id", id, "method", res.Method, "took", res.Total.Round(time.Millisecond))
	}()
	return nil
}

// start records the plan id, or the stopped operation id, as running.
func (r *Runner) start(ctx context.Context, id string) (func(context.Context) (lifecycle.Result, error), error) {
	if p, ok := r.take(id); ok {
		carryOut, err := r.sc.Start(ctx, p.prepared)
		if err != nil {
			// Not started (another operation, a node catching up): the
			// plan stays, to confirm again later.
			r.mu.Lock()
			r.plans = append(r.plans, p)
			r.mu.Unlock()
		}
		return carryOut, err
	}
	op, err := r.store.ReadOperation(ctx)
	switch {
	case err != nil:
		return nil, err
	case op == nil || op.ID != id:
		return nil, mysqlproto.NewSQLError(erConstraintFailed, "no plan or operation %q (a plan is kept %s): SELECT * FROM operations", id, planTTL)
	}
	// Resumed if it stopped, or if whoever ran it stopped writing its
	// record (killed): StartResume refuses one still running elsewhere.
	return r.sc.StartResume(ctx)
}

// Cancel implements proxyadmin.Operations.
func (r *Runner) Cancel(ctx context.Context, id string) error {
	if _, ok := r.take(id); ok {
		return nil
	}
	var stop context.CancelFunc
	r.mu.Lock()
	if r.running != nil && r.running.id == id {
		stop = r.running.stop
	}
	r.mu.Unlock()
	if stop != nil {
		// It stops where it is, recorded as stopped, the node in hand
		// left drained: resume or abandon it then.
		stop()
		return nil
	}
	op, err := r.store.ReadOperation(ctx)
	switch {
	case err != nil:
		return err
	case op == nil || op.ID != id:
		return mysqlproto.NewSQLError(erConstraintFailed, "no plan or operation %q: SELECT * FROM operations", id)
	}
	// Abandoned if it stopped, or if whoever ran it stopped writing its
	// record (killed); one still running elsewhere is refused.
	if _, err := r.sc.Abandon(ctx); err != nil {
		return fmt.Errorf("%w; it runs in %s, not in this proxy: stop it there", err, op.By)
	}
	return nil
}

// erConstraintFailed is MariaDB's ER_CONSTRAINT_FAILED: the request
// breaks a rule of the operations table.
const erConstraintFailed mysqlproto.ErrorCode = 4025
