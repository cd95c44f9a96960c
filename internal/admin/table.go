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

// Table is one admin table. Rows are read fresh on every query.
type Table struct {
	Name    string
	Columns []Column
	// Rows returns the current rows, each with one value per column in
	// Columns order: int64, float64, string or nil. Other Go numeric and
	// string-like types are converted, so a sloppy value is shown rather
	// than refused. Rows may be called concurrently.
	Rows func() [][]any
	// Update applies SET col=value,... to the rows selected by match; nil
	// makes the table read-only. It must apply atomically (all rows or
	// none) and return the number of rows changed, or an error whose
	// message is shown to the operator. Keys of set are lower-case column
	// names; values are already type-checked against the column kinds
	// (int64, float64, string, or nil for Nullable columns).
	Update func(set map[string]any, match func(row []any) bool) (int, error)
	// Insert adds one row given as lower-case column name to value, with
	// only the columns the statement named; nil means INSERT is refused.
	Insert func(row map[string]any) error
	// Delete removes the rows selected by match atomically and returns how
	// many it removed; nil means DELETE is refused.
	Delete func(match func(row []any) bool) (int, error)
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
		for j, col := range t.Columns {
			if !validName(col.Name) {
				return nil, fmt.Errorf("admin: table %q: invalid column name %q", t.Name, col.Name)
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
