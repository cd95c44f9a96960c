package schemachange

import (
	"fmt"
	"slices"
	"strings"
)

// Method is how a schema change runs on a Galera cluster.
type Method string

// Methods. Auto lets Decide choose.
const (
	Auto Method = "auto"
	// TOI (total order isolation): every node runs the statement at the
	// same point of the replication stream; while it runs, no node
	// applies or commits anything else.
	TOI Method = "toi"
	// RSU (rolling schema upgrade): one node at a time runs it alone,
	// desynchronised, drained from every proxy; the others go on serving.
	RSU Method = "rsu"
)

// ParseMethod reads auto, toi or rsu.
func ParseMethod(s string) (Method, error) {
	switch m := Method(strings.ToLower(s)); m {
	case Auto, TOI, RSU:
		return m, nil
	}
	return "", fmt.Errorf("method %q: use auto, toi or rsu", s)
}

// Table is the current definition of the changed table, as far as the
// decision needs it.
type Table struct {
	// Columns in their order; PrimaryKey the primary key's columns.
	Columns, PrimaryKey []string
	// Unique are the unique keys other than the primary key: name →
	// columns.
	Unique map[string][]string
}

// Probe is what the server said when galeon ran the change on an empty
// copy of the table (on one node, not replicated) with
// ALGORITHM=INSTANT.
type Probe struct {
	// Ran says the probe ran; Instant that the server did the change
	// as a metadata change only. Why is the server's refusal.
	Ran, Instant bool
	Why          string
}

// Plan is how to run a change, or why galeon will not.
type Plan struct {
	// Method is TOI or RSU; empty when Refused.
	Method  Method
	Refused bool
	// Algorithm is appended to the statement galeon runs: INSTANT for a
	// TOI change the probe found instant, so that the server refuses
	// rather than stalls the cluster if the table is not as probed.
	Algorithm string
	// Why explains the choice, or the refusal; Unsafe lists, per clause,
	// why it cannot be rolled one node at a time (empty when it can).
	Why    string
	Unsafe []string
}

// Decide chooses how to run change c on table t, given the probe's answer
// and the method the operator asked for:
//
//   - a change MariaDB makes as a metadata change only (the probe ran it
//     with ALGORITHM=INSTANT) runs as TOI: the cluster-wide pause lasts
//     as long as the metadata change;
//   - otherwise, a change whose old and new tables replicate rows to each
//     other (Unsafe empty) is rolled one node at a time (RSU);
//   - otherwise galeon refuses, saying why, unless the operator asks for
//     TOI and accepts its stall.
//
// Asking for RSU never overrides the safety rules: a change that breaks
// row replication between old and new schema would make Galera evict
// nodes for inconsistency in the middle of the roll.
func Decide(c Change, t Table, p Probe, asked Method) Plan {
	unsafe := RollUnsafe(c, t)
	switch asked {
	case TOI:
		if p.Instant {
			return Plan{Method: TOI, Algorithm: "INSTANT", Unsafe: unsafe,
				Why: "TOI as asked; MariaDB makes this change as a metadata change only (ALGORITHM=INSTANT): writes pause cluster-wide for that moment"}
		}
		return Plan{Method: TOI, Unsafe: unsafe,
			Why: "TOI as asked: every node runs it at once and no node commits anything else until it is done; the write stall lasts as long as the change (" + notInstant(p) + ")"}
	case RSU:
		if len(unsafe) > 0 {
			return Plan{Refused: true, Unsafe: unsafe,
				Why: "cannot roll this change one node at a time: " + strings.Join(unsafe, "; ") + ". " + options}
		}
		return Plan{Method: RSU, Why: "RSU as asked: rows replicate between the old and the new table in both directions, so one node at a time runs it, drained from every proxy" + newColumns(c)}
	}
	if p.Instant {
		return Plan{Method: TOI, Algorithm: "INSTANT", Unsafe: unsafe,
			Why: "MariaDB makes this change as a metadata change only (ALGORITHM=INSTANT): as TOI, writes pause cluster-wide only for that moment"}
	}
	if len(unsafe) == 0 {
		return Plan{Method: RSU,
			Why: "not a metadata-only change (" + notInstant(p) + "), so TOI would stall every write for its whole duration; rows replicate between the old and the new table in both directions, so it is rolled one node at a time (RSU), each node drained from every proxy while it runs" + newColumns(c)}
	}
	return Plan{Refused: true, Unsafe: unsafe,
		Why: "not a metadata-only change (" + notInstant(p) + ") and not safe to roll one node at a time: " + strings.Join(unsafe, "; ") + ". " + options}
}

// newColumns warns about what clients must not use while a change rolls:
// the columns it adds (a node without them drops the values written
// there) and the indexes it drops or renames (FORCE INDEX naming them
// fails on the nodes already changed).
func newColumns(c Change) string {
	var cols, idx []string
	for _, cl := range c.Clauses {
		switch cl.Kind {
		case AddColumn:
			cols = append(cols, cl.Name)
		case DropIndex, RenameIndex:
			idx = append(idx, cl.Name)
		}
	}
	var out string
	if len(cols) > 0 {
		out += ". Write nothing to " + strings.Join(cols, ", ") + " before the change is done on every node: a node without the column drops the values written there"
	}
	if len(idx) > 0 {
		out += ". Statements that name index " + strings.Join(idx, ", ") + " (FORCE/USE INDEX) fail on the nodes already changed until the roll ends"
	}
	return out
}

const options = "Options: run it as TOI (--method toi; method 'toi' at the admin prompt or on the dashboard), accepting that every write stalls cluster-wide while it runs, or with an online copy tool (pt-online-schema-change)"

func notInstant(p Probe) string {
	if !p.Ran {
		return "not probed"
	}
	if p.Why == "" {
		return "the server refused ALGORITHM=INSTANT"
	}
	return "the server: " + p.Why
}

// RollUnsafe says, per clause, why c cannot run one node at a time while
// the other nodes keep the old table: Galera applies row images by
// column position, so every node must be able to apply rows written
// under the other definition, and clients' statements must mean the same
// on both. Empty means the change can be rolled.
func RollUnsafe(c Change, t Table) []string {
	var out []string
	var added, dropped []string
	for _, cl := range c.Clauses {
		why := ""
		switch cl.Kind {
		case AddColumn:
			added = append(added, cl.Name)
			switch {
			case cl.Placed:
				why = fmt.Sprintf("adds column %s before the last one (FIRST/AFTER): rows are applied by column position, so old and new nodes would put values in different columns", cl.Name)
			case cl.Generated:
				why = fmt.Sprintf("adds generated column %s: rows from old nodes carry no value for it", cl.Name)
			case cl.AutoIncrement || cl.InlineKey:
				why = fmt.Sprintf("adds column %s with a key or constraint (AUTO_INCREMENT, UNIQUE, KEY, REFERENCES, CHECK): it would hold on some nodes only", cl.Name)
			case cl.VolatileDefault:
				why = fmt.Sprintf("adds column %s with a DEFAULT or ON UPDATE that is not a literal (CURRENT_TIMESTAMP, a function): each node would compute its own values for the existing rows", cl.Name)
			case cl.NotNull && !cl.HasDefault:
				why = fmt.Sprintf("adds NOT NULL column %s without a DEFAULT: rows written by old nodes carry no value for it; give it a DEFAULT", cl.Name)
			}
		case DropColumn:
			dropped = append(dropped, cl.Name)
			if slices.ContainsFunc(t.PrimaryKey, func(k string) bool { return strings.EqualFold(k, cl.Name) }) {
				why = fmt.Sprintf("drops column %s of the primary key", cl.Name)
			} else if k := uniqueWith(t, cl.Name); k != "" {
				why = fmt.Sprintf("drops column %s of unique key %s: rows the new nodes accept could break the key on the old ones, which would then be evicted", cl.Name, k)
			}
		case DropIndex:
			if _, ok := lookupFold(t.Unique, cl.Name); ok {
				why = fmt.Sprintf("drops unique key %s: rows the new nodes accept could break it on the old ones, which would then be evicted", cl.Name)
			}
		case ChangeColumn:
			why = fmt.Sprintf("changes column %s (CHANGE/MODIFY): old and new nodes would disagree on its type, name or place", cl.Name)
		case RenameColumn:
			why = fmt.Sprintf("renames column %s: clients' statements that name it fail on the nodes of the other side", cl.Name)
		case AddUnique:
			why = "adds a unique key: a row an old node accepts could break it on the nodes that already have it, and Galera evicts a node that cannot apply a row"
		case AddPrimaryKey, DropPrimaryKey:
			why = "changes the primary key: Galera certifies and applies rows by their primary key"
		case AddForeignKey, AddCheck:
			why = "adds a constraint: a row an old node accepts could break it on the nodes that already have it, and Galera evicts a node that cannot apply a row"
		case DropForeignKey, DropConstraint:
			why = "drops a constraint: rows the new nodes accept could break it on the old ones, which would then be evicted"
		case ChangeEngine:
			why = "changes the engine: Galera replicates InnoDB tables only"
		case ConvertCharset:
			why = "converts the columns' character set: old and new nodes would disagree on the columns' types"
		case RenameTable:
			why = "renames the table: clients' statements fail on the nodes of the other side"
		case Partitioning:
			why = "changes partitioning: not rolled by galeon"
		case Unknown:
			why = fmt.Sprintf("galeon does not know what %q does to rows", cl.Text)
		case SetDefault, AddIndex, RenameIndex, IndexVisibility, TableOption, Rebuild:
			// Rows keep the same columns: full row images apply on both.
		}
		if why != "" {
			out = append(out, why)
		}
	}
	if len(added) > 0 && len(dropped) > 0 {
		out = append(out, "adds and drops columns in one change: neither table's columns are a prefix of the other's; split it into two changes")
	} else if len(dropped) > 0 {
		if why := dropsTail(dropped, t.Columns); why != "" {
			out = append(out, why)
		}
	}
	return out
}

// uniqueWith names a unique key (not the primary key) of t holding column.
func uniqueWith(t Table, column string) string {
	for name, cols := range t.Unique {
		if slices.ContainsFunc(cols, func(c string) bool { return strings.EqualFold(c, column) }) {
			return name
		}
	}
	return ""
}

func lookupFold(m map[string][]string, k string) ([]string, bool) {
	for name, v := range m {
		if strings.EqualFold(name, k) {
			return v, true
		}
	}
	return nil, false
}

// dropsTail checks that the dropped columns are the table's last ones, so
// that the new columns are a prefix of the old: rows from the old nodes
// then carry extra trailing columns the new nodes ignore, and rows from
// the new nodes lack trailing columns the old nodes fill with defaults.
func dropsTail(dropped, columns []string) string {
	if len(columns) == 0 {
		return "drops columns of a table whose definition galeon could not read"
	}
	if len(dropped) >= len(columns) {
		return "drops every column"
	}
	tail := columns[len(columns)-len(dropped):]
	for _, d := range dropped {
		if !slices.ContainsFunc(tail, func(c string) bool { return strings.EqualFold(c, d) }) {
			return fmt.Sprintf("drops column %s, which is not among the last columns (%s): rows are applied by column position", d, strings.Join(tail, ", "))
		}
	}
	return ""
}
