package admin

import (
	"fmt"
	"strings"
)

// show answers SHOW and DESCRIBE by building a virtual table and running
// an ordinary SELECT * over it, so LIKE and WHERE filters behave exactly
// as they do on real tables.
func (en *env) show(s *ShowStmt) (*result, error) {
	var name string
	var cols []Column
	var rows [][]any
	switch s.Kind {
	case ShowTables:
		name = "TABLES"
		cols = []Column{{Name: "Tables_in_main", Kind: Text}}
		if s.Full {
			cols = append(cols, Column{Name: "Table_type", Kind: Text})
		}
		for _, t := range en.eng.cat.tables {
			row := []any{t.Name}
			if s.Full {
				row = append(row, "BASE TABLE")
			}
			rows = append(rows, row)
		}
	case ShowDatabases:
		name = "SCHEMATA"
		cols = []Column{{Name: "Database", Kind: Text}}
		rows = [][]any{{"main"}}
	case ShowColumns:
		t, err := en.table(*s.Table)
		if err != nil {
			return nil, err
		}
		name = "COLUMNS"
		cols = []Column{
			{Name: "Field", Kind: Text}, {Name: "Type", Kind: Text}, {Name: "Null", Kind: Text},
			{Name: "Key", Kind: Text}, {Name: "Default", Kind: Text, Nullable: true}, {Name: "Extra", Kind: Text},
		}
		if s.Full {
			cols = append(cols, Column{Name: "Privileges", Kind: Text})
		}
		for _, c := range t.Columns {
			null := "NO"
			if c.Nullable {
				null = "YES"
			}
			row := []any{c.Name, c.Kind.String(), null, "", nil, ""}
			if s.Full {
				row = append(row, strings.Join(privileges(t), ","))
			}
			rows = append(rows, row)
		}
	case ShowVariables:
		name = "VARIABLES"
		cols = []Column{{Name: "Variable_name", Kind: Text}, {Name: "Value", Kind: Text}}
		rows = en.sortedVars()
	case ShowStatus:
		name = "STATUS"
		cols = []Column{{Name: "Variable_name", Kind: Text}, {Name: "Value", Kind: Text}}
		rows = en.status()
	case ShowWarnings:
		// Nothing here ever produces warnings: what MySQL would warn
		// about (a truncated or converted value) is an error instead.
		name = "WARNINGS"
		cols = []Column{{Name: "Level", Kind: Text}, {Name: "Code", Kind: Int}, {Name: "Message", Kind: Text}}
	case ShowCreateTable:
		t, err := en.table(*s.Table)
		if err != nil {
			return nil, err
		}
		name = "TABLES"
		cols = []Column{{Name: "Table", Kind: Text}, {Name: "Create Table", Kind: Text}}
		rows = [][]any{{t.Name, createTable(t)}}
	default:
		return nil, fmt.Errorf("admin: unknown SHOW kind %d", s.Kind)
	}
	vt := &Table{Name: name, Columns: cols, Rows: func() [][]any { return rows }}
	sel := &SelectStmt{Star: true, Limit: -1, Where: s.Where}
	if s.Like != nil {
		sel.Where = &Like{X: &ColumnRef{Name: cols[0].Name}, Pattern: &Literal{Value: *s.Like}}
	}
	return en.selectFrom(vt, sel)
}

// privileges lists what statements a table accepts.
func privileges(t *Table) []string {
	p := []string{"select"}
	if t.Update != nil {
		p = append(p, "update")
	}
	if t.Insert != nil {
		p = append(p, "insert")
	}
	if t.Delete != nil {
		p = append(p, "delete")
	}
	return p
}

// createTable renders a table as CREATE TABLE, for SHOW CREATE TABLE and
// tools that want a schema; the comment says which changes it accepts.
func createTable(t *Table) string {
	var b strings.Builder
	fmt.Fprintf(&b, "CREATE TABLE `%s` (\n", t.Name)
	for i, c := range t.Columns {
		null := " NOT NULL"
		if c.Nullable {
			null = ""
		}
		fmt.Fprintf(&b, "  `%s` %s%s", c.Name, c.Kind, null)
		if i < len(t.Columns)-1 {
			b.WriteByte(',')
		}
		b.WriteByte('\n')
	}
	fmt.Fprintf(&b, ") COMMENT='accepts: %s'", strings.ToUpper(strings.Join(privileges(t), ", ")))
	return b.String()
}
