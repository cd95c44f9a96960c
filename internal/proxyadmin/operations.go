package proxyadmin

import (
	"context"
	"strings"
	"time"

	"github.com/galeon-db/galeon/internal/admin"
	"github.com/galeon-db/galeon/internal/mysqlproto"
	"github.com/galeon-db/galeon/internal/proxy"
)

// Operations starts and steers the operator's cluster operations from the
// admin interface (a schema change, as `galeon cluster ddl` runs it). It
// lives outside this package: running one needs the control plane and
// the nodes' accounts, which the admin tables do not link.
type Operations interface {
	// Plan decides how a schema change would run (nothing runs) and keeps
	// the plan for the operator to confirm; a change galeon refuses to
	// run is an error saying why.
	Plan(ctx context.Context, statement, schema, method string) (Planned, error)
	// Planned lists the plans awaiting confirmation.
	Planned() []Planned
	// Run starts the plan id, or resumes the recorded operation id that
	// stopped; it returns once the operation is recorded and running.
	Run(ctx context.Context, id string) error
	// Cancel forgets the plan id, stops the operation id if this proxy
	// runs it, or abandons the recorded operation id that stopped.
	Cancel(ctx context.Context, id string) error
}

// Planned is a schema change decided and not yet run.
type Planned struct {
	ID, Kind, Method, Statement, Schema string
	// Why is the decision's explanation (what the method costs).
	Why string
	At  time.Time
}

// stepPlanned is a plan's step; stepRun is what UPDATE sets to run it.
const (
	stepPlanned = "planned"
	stepRun     = "run"
)

// opTimeout bounds a plan (it probes the change on an empty copy of the
// table) and a start.
const opTimeout = 30 * time.Second

// operations shows the cluster operation in progress, as the control
// plane records it (none or one row), and the plans awaiting
// confirmation. With ops it also starts and steers them:
//
//	INSERT INTO operations (statement, schema) VALUES ('ALTER TABLE t ADD INDEX k (a)', 'app')  -- plan: nothing runs
//	UPDATE operations SET step = 'run' WHERE id = '...'   -- run the plan, or resume a stopped operation
//	DELETE FROM operations WHERE id = '...'               -- forget the plan, stop the operation, or abandon a stopped one
func operations(p *proxy.Proxy, ops Operations) admin.Table {
	cols := []admin.Column{
		{Name: "id", Kind: admin.Text}, {Name: "kind", Kind: admin.Text}, {Name: "method", Kind: admin.Text},
		{Name: "statement", Kind: admin.Text}, {Name: "schema", Kind: admin.Text, Nullable: true},
		{Name: "node", Kind: admin.Text}, {Name: "step", Kind: admin.Text}, {Name: "detail", Kind: admin.Text},
		{Name: "nodes_done", Kind: admin.Int}, {Name: "nodes_total", Kind: admin.Int}, {Name: "failed", Kind: admin.Text},
		{Name: "by", Kind: admin.Text}, {Name: "started_at", Kind: admin.Text}, {Name: "updated_at", Kind: admin.Text},
	}
	t := admin.Table{Name: "operations", Columns: cols, Rows: func() [][]any {
		var out [][]any
		if op := p.Operation(); op != nil {
			out = append(out, []any{op.ID, op.Kind, op.Method, op.Statement, nullable(op.Schema), op.Current, op.Step, op.Detail,
				int64(op.Done), int64(op.Total), op.Failed, op.By, op.Started.Format(time.RFC3339), op.Updated.Format(time.RFC3339Nano)})
		}
		if ops != nil {
			for _, pl := range ops.Planned() {
				at := pl.At.UTC().Format(time.RFC3339)
				out = append(out, []any{pl.ID, pl.Kind, pl.Method, pl.Statement, nullable(pl.Schema), "", stepPlanned, pl.Why,
					int64(0), int64(0), "", "admin", at, at})
			}
		}
		return out
	}}
	t.Accepts = admin.OpInsert | admin.OpUpdate | admin.OpDelete
	t.Apply = func(changes []admin.Change) error {
		if ops == nil {
			return mysqlproto.NewSQLError(mysqlproto.ErOptionPreventsStatement,
				"this proxy cannot run operations: it needs a control plane ([discovery]) and an account on the nodes ([operations] node_user, its password in node_password or $GALEON_NODE_PASSWORD); or run galeon cluster ddl")
		}
		if len(changes) != 1 {
			return mysqlproto.NewSQLError(erConstraintFailed, "one operation at a time: the statement changes %d rows of operations", len(changes))
		}
		ch := changes[0]
		ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
		defer cancel()
		switch ch.Op() {
		case admin.OpInsert:
			stmt, schema, method, err := planRequest(cols, ch.New)
			if err != nil {
				return err
			}
			_, err = ops.Plan(ctx, stmt, schema, method)
			return err
		case admin.OpUpdate:
			for i, c := range cols {
				if c.Name != "step" && ch.New[i] != ch.Old[i] {
					return mysqlproto.NewSQLError(erConstraintFailed, "only step can be set, to 'run': UPDATE operations SET step = 'run' WHERE id = '...' runs a plan or resumes a stopped operation")
				}
			}
			if s, _ := ch.New[6].(string); s != stepRun {
				return mysqlproto.NewSQLError(erConstraintFailed, "step can only be set to 'run' (it runs a plan or resumes a stopped operation); DELETE the row to forget, stop or abandon it")
			}
			return ops.Run(ctx, ch.Old[0].(string))
		default:
			return ops.Cancel(ctx, ch.Old[0].(string))
		}
	}
	return t
}

// planRequest reads an inserted row: the statement, and optionally the
// schema, the method (auto, toi or rsu) and the kind (schema-change).
func planRequest(cols []admin.Column, row []any) (stmt, schema, method string, err error) {
	for i, c := range cols {
		v := row[i]
		if v == nil {
			continue
		}
		s, _ := v.(string)
		switch c.Name {
		case "statement":
			stmt = s
		case "schema":
			schema = s
		case "method":
			method = s
		case "kind":
			if s != "schema-change" && s != "ddl" {
				return "", "", "", mysqlproto.NewSQLError(erConstraintFailed, "kind %q: the operations the admin interface starts are schema changes (kind 'schema-change', or leave it out)", s)
			}
		default:
			return "", "", "", mysqlproto.NewSQLError(erConstraintFailed, "%s cannot be given: INSERT INTO operations (statement, schema, method) VALUES ('ALTER TABLE ...', 'db', 'auto') plans a schema change", c.Name)
		}
	}
	if strings.TrimSpace(stmt) == "" {
		return "", "", "", mysqlproto.NewSQLError(erConstraintFailed, "statement is required: INSERT INTO operations (statement, schema) VALUES ('ALTER TABLE t ADD INDEX k (a)', 'app') plans a schema change")
	}
	if method == "" {
		method = "auto"
	}
	return stmt, schema, method, nil
}

// replicas shows the cluster's asynchronous replicas as their agents
// report them: source, how far behind, and the agent's last word.
func replicas(p *proxy.Proxy) admin.Table {
	cols := []admin.Column{
		{Name: "name", Kind: admin.Text}, {Name: "address", Kind: admin.Text}, {Name: "source", Kind: admin.Text},
		{Name: "replicating", Kind: admin.Int}, {Name: "behind_transactions", Kind: admin.Int}, {Name: "behind_seconds", Kind: admin.Int, Nullable: true},
		{Name: "state", Kind: admin.Text}, {Name: "why", Kind: admin.Text}, {Name: "error", Kind: admin.Text},
		{Name: "repoints", Kind: admin.Int}, {Name: "last_repoint_ms", Kind: admin.Int}, {Name: "updated_at", Kind: admin.Text},
		{Name: "archive_dir", Kind: admin.Text, Nullable: true}, {Name: "archive_streaming", Kind: admin.Int, Nullable: true},
		{Name: "archive_bytes", Kind: admin.Int, Nullable: true}, {Name: "archive_lag_seconds", Kind: admin.Int, Nullable: true},
		{Name: "archive_error", Kind: admin.Text, Nullable: true},
	}
	return admin.Table{Name: "replicas", Columns: cols, Rows: func() [][]any {
		var out [][]any
		for _, r := range p.Replicas() {
			var behind any
			if r.BehindSeconds >= 0 {
				behind = r.BehindSeconds
			}
			errText := r.Error
			if r.SQLError != "" {
				errText = r.SQLError
			} else if r.IOError != "" {
				errText = r.IOError
			}
			row := []any{r.Name, r.Address, r.SourceNode, boolInt(r.Replicating()), max(r.Behind, 0), behind,
				r.State, r.Why, errText, int64(r.Repoints), r.RepointTook.Milliseconds(), r.Updated.Format(time.RFC3339Nano)}
			if a := r.Archive; a != nil {
				row = append(row, a.Dir, boolInt(a.Streaming), a.Bytes, a.LagSeconds, a.Error)
			} else {
				row = append(row, nil, nil, nil, nil, nil)
			}
			out = append(out, row)
		}
		return out
	}}
}
