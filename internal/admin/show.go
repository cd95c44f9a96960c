package admin

import (
	"context"
	"fmt"
	"strings"

	"github.com/galeon-db/galeon/internal/mysqlproto"
)

// cursor walks the tokens of a SHOW or DESCRIBE statement.
type cursor struct {
	toks []token
	i    int
	q    string
}

func (c *cursor) peek() token {
	if c.i < len(c.toks) {
		return c.toks[c.i]
	}
	return token{kind: tokEOF, pos: len(c.q)}
}

// kw consumes the keyword kw if it comes next.
func (c *cursor) kw(kw string) bool {
	if isKw(c.peek(), kw) {
		c.i++
		return true
	}
	return false
}

func (c *cursor) fail(expected string) error {
	if c.i >= len(c.toks) {
		return syntaxErrAt(c.q, len(c.q), expected)
	}
	return syntaxErrAt(c.q, c.toks[c.i].pos, expected)
}

// name reads an identifier, plain or in backticks.
func (c *cursor) name(what string) (string, error) {
	t := c.peek()
	if t.kind != tokWord && t.kind != tokQuoted {
		return "", c.fail(what)
	}
	c.i++
	return t.text, nil
}

// table reads [schema.]table and resolves it.
func (c *cursor) table(en *env) (*Table, error) {
	name, err := c.name("a table name")
	if err != nil {
		return nil, err
	}
	schema := ""
	if isPunct(c.peek(), ".") {
		c.i++
		schema = name
		if name, err = c.name("a table name after the dot"); err != nil {
			return nil, err
		}
	}
	if schema != "" && !strings.EqualFold(schema, "main") {
		return nil, sqlErr(erNoSuchTable, "Table '%s.%s' doesn't exist; the admin interface has one database, main, with tables: %s",
			schema, name, en.eng.cat.names())
	}
	t := en.eng.cat.lookup(name)
	if t == nil {
		return nil, en.eng.cat.unknownTable(name)
	}
	return t, nil
}

// schema skips an optional FROM|IN <database>.
func (c *cursor) schema() error {
	if c.kw("from") || c.kw("in") {
		_, err := c.name("a database name")
		return err
	}
	return nil
}

// show answers SHOW by building a virtual table; LIKE and WHERE filters
// run in SQLite over it, so they behave exactly as on real tables.
func (en *env) show(st *statement, q string) (*result, error) {
	c := &cursor{toks: st.toks[1:], q: q}
	full := c.kw("full")
	if !full && !c.kw("global") && !c.kw("session") {
		c.kw("local")
	}
	var vt *Table
	var rows [][]any
	switch {
	case c.kw("tables"):
		if err := c.schema(); err != nil {
			return nil, err
		}
		vt = &Table{Name: "TABLES", Columns: []Column{{Name: "Tables_in_main", Kind: Text}}}
		if full {
			vt.Columns = append(vt.Columns, Column{Name: "Table_type", Kind: Text})
		}
		for _, t := range en.eng.cat.tables {
			row := []any{t.Name}
			if full {
				row = append(row, "BASE TABLE")
			}
			rows = append(rows, row)
		}
	case c.kw("databases"), c.kw("schemas"):
		vt = &Table{Name: "SCHEMATA", Columns: []Column{{Name: "Database", Kind: Text}}}
		rows = [][]any{{"main"}}
	case c.kw("columns"), c.kw("fields"):
		if !c.kw("from") && !c.kw("in") {
			return nil, c.fail("FROM")
		}
		t, err := c.table(en)
		if err != nil {
			return nil, err
		}
		if err := c.schema(); err != nil {
			return nil, err
		}
		vt, rows = columnsOf(t, full)
	case c.kw("variables"):
		vt = &Table{Name: "VARIABLES", Columns: []Column{{Name: "Variable_name", Kind: Text}, {Name: "Value", Kind: Text}}}
		rows = en.sortedVars()
	case c.kw("status"):
		vt = &Table{Name: "STATUS", Columns: []Column{{Name: "Variable_name", Kind: Text}, {Name: "Value", Kind: Text}}}
		rows = en.status()
	case c.kw("warnings"), c.kw("errors"):
		// Nothing here ever produces warnings: what MySQL would warn
		// about (a truncated or converted value) is an error instead.
		vt = &Table{Name: "WARNINGS", Columns: []Column{{Name: "Level", Kind: Text}, {Name: "Code", Kind: Int}, {Name: "Message", Kind: Text}}}
		c.i = len(c.toks) // LIMIT ...
	case c.kw("create"):
		if !c.kw("table") {
			return nil, c.fail("TABLE")
		}
		t, err := c.table(en)
		if err != nil {
			return nil, err
		}
		vt = &Table{Name: "TABLES", Columns: []Column{{Name: "Table", Kind: Text}, {Name: "Create Table", Kind: Text}}}
		rows = [][]any{{t.Name, createTable(t)}}
	default:
		return nil, c.fail("TABLES, DATABASES, COLUMNS, CREATE TABLE, VARIABLES, STATUS or WARNINGS")
	}
	switch {
	case c.kw("like"):
		t := c.peek()
		if t.kind != tokString {
			return nil, c.fail("a pattern in quotes after LIKE")
		}
		c.i++
		if c.i < len(c.toks) {
			return nil, c.fail("the end of the statement")
		}
		return en.filter(vt, rows, quoteIdent(vt.Columns[0].Name)+" LIKE "+quoteString(t.text)+` ESCAPE '\'`)
	case c.kw("where"):
		if c.i >= len(c.toks) {
			return nil, c.fail("a condition after WHERE")
		}
		cond := &statement{toks: c.toks[c.i:]}
		if err := en.rewrite(cond, q); err != nil {
			return nil, err
		}
		return en.filter(vt, rows, cond.sql)
	case c.i < len(c.toks):
		return nil, c.fail("LIKE, WHERE or the end of the statement")
	}
	return en.filter(vt, rows, "")
}

// describe answers DESCRIBE t [column pattern] (also DESC and EXPLAIN t).
func (en *env) describe(st *statement, q string) (*result, error) {
	c := &cursor{toks: st.toks[1:], q: q}
	for _, w := range sqliteWords {
		if isKw(c.peek(), w) {
			return nil, sqlErr(mysqlproto.ErNotSupportedYet, "EXPLAIN of a statement is not supported on the admin interface; DESCRIBE <table> shows a table's columns")
		}
	}
	t, err := c.table(en)
	if err != nil {
		return nil, err
	}
	vt, rows := columnsOf(t, false)
	if p := c.peek(); p.kind == tokWord || p.kind == tokQuoted || p.kind == tokString {
		c.i++
		if c.i < len(c.toks) {
			return nil, c.fail("the end of the statement")
		}
		return en.filter(vt, rows, `"Field" LIKE `+quoteString(p.text)+` ESCAPE '\'`)
	}
	if c.i < len(c.toks) {
		return nil, c.fail("a column name or the end of the statement")
	}
	return en.filter(vt, rows, "")
}

// columnsOf describes t's columns as SHOW COLUMNS does.
func columnsOf(t *Table, full bool) (*Table, [][]any) {
	vt := &Table{Name: "COLUMNS", Columns: []Column{
		{Name: "Field", Kind: Text}, {Name: "Type", Kind: Text}, {Name: "Null", Kind: Text},
		{Name: "Key", Kind: Text}, {Name: "Default", Kind: Text, Nullable: true}, {Name: "Extra", Kind: Text},
	}}
	if full {
		vt.Columns = append(vt.Columns, Column{Name: "Privileges", Kind: Text})
	}
	var rows [][]any
	for _, c := range t.Columns {
		null := "NO"
		if c.Nullable {
			null = "YES"
		}
		row := []any{c.Name, c.Kind.String(), null, "", nil, ""}
		if full {
			row = append(row, strings.Join(privileges(t), ","))
		}
		rows = append(rows, row)
	}
	return vt, rows
}

// filter returns the rows of a virtual table that satisfy cond (an SQLite
// condition; "" keeps all).
func (en *env) filter(vt *Table, rows [][]any, cond string) (*result, error) {
	if cond == "" {
		res := &result{cols: make([]resultCol, len(vt.Columns)), rows: rows}
		for i, c := range vt.Columns {
			res.cols[i] = resultCol{name: c.Name, table: vt.Name, orgName: c.Name, kind: c.Kind}
		}
		return res, nil
	}
	return en.eng.store.inTx(func(ctx context.Context, lc *liteConn) (*result, error) { return lc.filter(ctx, vt, rows, cond) })
}

// privileges lists what statements a table accepts.
func privileges(t *Table) []string {
	p := []string{"select"}
	for _, op := range []Op{OpUpdate, OpInsert, OpDelete} {
		if t.Accepts&op != 0 {
			p = append(p, strings.ToLower(op.String()))
		}
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
