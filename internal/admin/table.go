package admin

import (
	"fmt"
	"slices"
	"strings"
)

// Kind is the type of a column. It decides the MySQL column type clients
// see (BIGINT, DOUBLE, VARCHAR), how literals written by the operator are
// checked and converted, and how values compare.
type Kind uint8

// Column kinds. Row values of an Int column are int64, of a Float column
// float64, of a Text column string; any column may hold nil (NULL).
const (
	Int Kind = iota + 1
	Float
	Text
)

// String returns the kind's SQL type name as DESCRIBE shows it.
func (k Kind) String() string {
	switch k {
	case Int:
		return "bigint"
	case Float:
		return "double"
	case Text:
		return "text"
	}
	return fmt.Sprintf("kind(%d)", uint8(k))
}

// Column describes one column of a Table.
type Column struct {
	Name string
	Kind Kind
	// Nullable lets UPDATE and INSERT store NULL in the column. Without it
	// NULL is refused (error 1048) before the table sees it, so tables
	// holding configuration never receive a nil they did not ask for.
	// Rows may return nil for any column regardless.
	Nullable bool
	// Sensitive keeps values written to the column (passwords) out of
	// the audit log: statements that set it are logged with their
	// literals replaced by '?'. What reads show is up to Rows, which
	// should return a hash or a mask rather than the secret.
	Sensitive bool
}

// Op is a kind of row change a table accepts from SQL.
type Op uint8

// Row changes. A statement's changes are classified row by row, so an
// INSERT ... SELECT, a REPLACE or an UPDATE over a join are checked the
// same way as their simple forms.
const (
	OpUpdate Op = 1 << iota
	OpInsert
	OpDelete
)

// String names the statement that makes the change, for messages.
func (o Op) String() string {
	switch o {
	case OpUpdate:
		return "UPDATE"
	case OpInsert:
		return "INSERT"
	case OpDelete:
		return "DELETE"
	}
	return fmt.Sprintf("op(%d)", uint8(o))
}

// Change is one row changed by a statement. Old is nil for an inserted
// row and New is nil for a deleted one. Values are canonical (int64,
// float64, string or nil) and already converted to their column's kind;
// NULL appears only in Nullable columns, except in an inserted row, where
// a column the statement did not name is nil and the table decides
// whether it is required.
type Change struct {
	Old, New []any
}

// Op says whether the change updates, inserts or deletes a row.
func (c Change) Op() Op {
	switch {
	case c.Old == nil:
		return OpInsert
	case c.New == nil:
		return OpDelete
	}
	return OpUpdate
}

// Table is one admin table. Rows are read fresh on every query.
type Table struct {
	Name    string
	Columns []Column
	// Rows returns the current rows, each with one value per column in
	// Columns order: int64, float64, string or nil. Other Go numeric and
	// string-like types are converted, so a sloppy value is shown rather
	// than refused. Rows may be called concurrently.
	Rows func() [][]any
	// Accepts lists the changes SQL may make; zero makes the table
	// read-only. A statement producing any other kind of change is
	// refused (error 1036) before Apply is called.
	Accepts Op
	// Apply applies every row change of one statement, computed by the
	// SQL engine on a copy of the rows Rows returned. It must validate
	// them all and apply all or none; its error message is shown to the
	// operator (return a *mysqlproto.SQLError to choose the code). The
	// rows identify themselves by their Old values, so a table keyed by
	// name finds the row by Old's name column. It is never called with
	// an empty list.
	Apply func(changes []Change) error
}

// column returns the index of the column named name (case-insensitive),
// or -1.
func (t *Table) column(name string) int {
	for i := range t.Columns {
		if strings.EqualFold(t.Columns[i].Name, name) {
			return i
		}
	}
	return -1
}

// columnNames lists the columns for error messages.
func (t *Table) columnNames() string {
	names := make([]string, len(t.Columns))
	for i, c := range t.Columns {
		names[i] = c.Name
	}
	return strings.Join(names, ", ")
}

// readRows calls Rows and returns a normalised copy: every row has exactly
// one canonical value per column, so evaluation never indexes out of range
// or meets an unexpected type, whatever the table returned.
func (t *Table) readRows() [][]any {
	if t.Rows == nil {
		return nil
	}
	raw := t.Rows()
	out := make([][]any, len(raw))
	for i, r := range raw {
		out[i] = normalizeRow(r, len(t.Columns))
	}
	return out
}

// catalog is the set of registered tables, looked up case-insensitively.
type catalog struct {
	tables []*Table // registration order, for SHOW TABLES and messages
	byName map[string]*Table
}

// newCatalog checks the tables once at startup. Mistakes here are
// programming errors in the proxy (two tables with one name, a column
// without a kind), so they are reported as an error for NewServer to panic
// with rather than discovered by an operator later.
func newCatalog(tables []Table) (*catalog, error) {
	c := &catalog{byName: make(map[string]*Table, len(tables))}
	for i := range tables {
		t := &tables[i]
		if !validName(t.Name) {
			return nil, fmt.Errorf("admin: invalid table name %q", t.Name)
		}
		key := strings.ToLower(t.Name)
		if _, dup := c.byName[key]; dup {
			return nil, fmt.Errorf("admin: table %q registered twice", t.Name)
		}
		if len(t.Columns) == 0 {
			return nil, fmt.Errorf("admin: table %q has no columns", t.Name)
		}
		if t.Rows == nil {
			return nil, fmt.Errorf("admin: table %q has no Rows function", t.Name)
		}
		if (t.Accepts != 0) != (t.Apply != nil) {
			return nil, fmt.Errorf("admin: table %q: Accepts and Apply go together", t.Name)
		}
		for j, col := range t.Columns {
			if !validName(col.Name) {
				return nil, fmt.Errorf("admin: table %q: invalid column name %q", t.Name, col.Name)
			}
			if n := strings.ToLower(col.Name); n == "rowid" || n == "oid" || n == "_rowid_" {
				return nil, fmt.Errorf("admin: table %q: column name %q is SQLite's row id, which identifies rows here", t.Name, col.Name)
			}
			if col.Kind < Int || col.Kind > Text {
				return nil, fmt.Errorf("admin: table %q: column %q has no kind", t.Name, col.Name)
			}
			if t.column(col.Name) != j {
				return nil, fmt.Errorf("admin: table %q: column %q declared twice", t.Name, col.Name)
			}
		}
		// Copy so later changes to the caller's slice cannot race with
		// queries.
		cp := *t
		cp.Columns = slices.Clone(t.Columns)
		c.tables = append(c.tables, &cp)
		c.byName[key] = &cp
	}
	return c, nil
}

// lookup finds a table by name.
func (c *catalog) lookup(name string) *Table { return c.byName[strings.ToLower(name)] }

// names lists the table names for error messages.
func (c *catalog) names() string {
	names := make([]string, len(c.tables))
	for i, t := range c.tables {
		names[i] = t.Name
	}
	return strings.Join(names, ", ")
}

// validName accepts names an operator can type without backticks and that
// are safe in JSON keys and Prometheus-free contexts: letters, digits,
// underscore, not starting with a digit.
func validName(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '_', c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z':
		case c >= '0' && c <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}
