package admin

import (
	"strings"

	"github.com/galeon-db/galeon/internal/mysqlproto"
)

// maxDepth bounds nesting of parentheses and NOT so a hostile or
// accidental query cannot exhaust the goroutine stack.
const maxDepth = 64

// reserved words cannot be unquoted column names or implicit aliases:
// they are where the parser decides what comes next. Words that are
// keywords only in one position (STATUS, TABLES, FULL...) stay usable as
// names, since real admin tables have columns called status or comment.
var reserved = map[string]bool{
	"select": true, "from": true, "where": true, "and": true, "or": true, "not": true,
	"in": true, "is": true, "null": true, "like": true, "order": true, "by": true,
	"limit": true, "offset": true, "asc": true, "desc": true, "set": true, "update": true,
	"insert": true, "into": true, "delete": true,
	"between": true, "as": true, "true": true, "false": true, "distinct": true,
	"group": true, "having": true, "union": true, "join": true, "escape": true,
}

// parser is a recursive-descent parser over the token slice of one query.
type parser struct {
	src   string
	toks  []token
	i     int
	depth int
	// follow describes what may come after the part parsed so far, for
	// the error when something else is found there.
	follow string
}

// Parse parses a query of one or more statements separated by ';'. Errors
// are *mysqlproto.SQLError values ready to send: 1064 for syntax (saying
// what was expected and where), 1065 for an empty query, 1235 for
// constructs the dialect deliberately leaves out.
func Parse(src string) ([]Statement, error) {
	toks, err := lex(src)
	if err != nil {
		return nil, err
	}
	p := &parser{src: src, toks: toks}
	var out []Statement
	for {
		for p.acceptPunct(";") {
		}
		if p.peek().kind == tokEOF {
			break
		}
		p.follow = "; or the end of the query"
		st, err := p.statement()
		if err != nil {
			return nil, err
		}
		out = append(out, st)
		if p.peek().kind == tokEOF {
			break
		}
		if !p.acceptPunct(";") {
			return nil, p.fail(p.follow)
		}
	}
	if len(out) == 0 {
		return nil, sqlErr(erEmptyQuery, "Query was empty")
	}
	return out, nil
}

func (p *parser) peek() token { return p.toks[p.i] }

func (p *parser) peekAt(n int) token {
	if p.i+n < len(p.toks) {
		return p.toks[p.i+n]
	}
	return p.toks[len(p.toks)-1]
}

func (p *parser) next() token {
	t := p.toks[p.i]
	if t.kind != tokEOF {
		p.i++
	}
	return t
}

// prevEnd is the source offset just after the last consumed token.
func (p *parser) prevEnd() int {
	if p.i == 0 {
		return 0
	}
	return p.toks[p.i-1].end
}

func isKw(t token, kw string) bool { return t.kind == tokWord && strings.EqualFold(t.text, kw) }

func (p *parser) atKw(kw string) bool { return isKw(p.peek(), kw) }

func (p *parser) acceptKw(kw string) bool {
	if p.atKw(kw) {
		p.i++
		return true
	}
	return false
}

func (p *parser) expectKw(kw string) error {
	if !p.acceptKw(kw) {
		return p.fail(strings.ToUpper(kw))
	}
	return nil
}

func (p *parser) atPunct(s string) bool {
	t := p.peek()
	return t.kind == tokPunct && t.text == s
}

func (p *parser) acceptPunct(s string) bool {
	if p.atPunct(s) {
		p.i++
		return true
	}
	return false
}

func (p *parser) expectPunct(s string) error {
	if !p.acceptPunct(s) {
		return p.fail("'" + s + "'")
	}
	return nil
}

// fail reports that the current token is not what was expected.
func (p *parser) fail(expected string) *mysqlproto.SQLError {
	return syntaxErrAt(p.src, p.peek().pos, expected)
}

// ident reads an identifier: an unquoted non-reserved word or a
// backtick-quoted name.
func (p *parser) ident(what string) (string, int, error) {
	t := p.peek()
	switch {
	case t.kind == tokQuoted, t.kind == tokWord && !reserved[strings.ToLower(t.text)]:
		p.i++
		return t.text, t.pos, nil
	}
	return "", 0, p.fail(what)
}

// tableName reads [schema.]table.
func (p *parser) tableName() (TableName, error) {
	name, pos, err := p.ident("a table name")
	if err != nil {
		return TableName{}, err
	}
	tn := TableName{Name: name, Pos: pos}
	if p.acceptPunct(".") {
		tbl, _, err := p.ident("a table name after the schema")
		if err != nil {
			return TableName{}, err
		}
		tn.Schema, tn.Name = name, tbl
	}
	return tn, nil
}

// statement dispatches on the first word.
func (p *parser) statement() (Statement, error) {
	t := p.peek()
	if t.kind == tokWord {
		switch strings.ToLower(t.text) {
		case "select":
			return p.selectStmt()
		case "update":
			return p.updateStmt()
		case "insert":
			return p.insertStmt()
		case "delete":
			return p.deleteStmt()
		case "show":
			return p.showStmt()
		case "describe", "desc", "explain":
			return p.describeStmt()
		case "set":
			p.skipToEnd()
			return &SetStmt{}, nil
		case "use":
			p.next()
			db, _, err := p.ident("a database name")
			if err != nil {
				return nil, err
			}
			return &UseStmt{DB: db}, nil
		case "begin":
			p.next()
			p.acceptKw("work")
			return &TxStmt{Kind: TxBegin}, nil
		case "start":
			p.next()
			if err := p.expectKw("transaction"); err != nil {
				return nil, err
			}
			p.skipToEnd() // READ ONLY, WITH CONSISTENT SNAPSHOT ...
			return &TxStmt{Kind: TxBegin}, nil
		case "commit", "rollback":
			p.next()
			p.acceptKw("work")
			if strings.EqualFold(t.text, "commit") {
				return &TxStmt{Kind: TxCommit}, nil
			}
			return &TxStmt{Kind: TxRollback}, nil
		case "load", "save":
			// ProxySQL habit: LOAD ... TO RUNTIME / SAVE ... TO DISK.
			return nil, sqlErr(mysqlproto.ErNotSupportedYet,
				"%s is not needed: changes made on the galeon admin interface apply to the running proxy immediately",
				strings.ToUpper(t.text))
		}
	}
	return nil, p.fail("SELECT, UPDATE, INSERT, DELETE, SHOW, DESCRIBE, SET or USE")
}

// skipToEnd consumes tokens up to the end of the statement.
func (p *parser) skipToEnd() {
	for p.peek().kind != tokEOF && !p.atPunct(";") {
		p.i++
	}
}

func (p *parser) selectStmt() (Statement, error) {
	p.next()
	st := &SelectStmt{Limit: -1}
	if p.acceptPunct("*") {
		st.Star = true
	} else {
		for {
			item, err := p.selectItem()
			if err != nil {
				return nil, err
			}
			st.Items = append(st.Items, item)
			if !p.acceptPunct(",") {
				break
			}
		}
	}
	p.follow = "',', FROM, WHERE, ORDER BY, LIMIT or the end of the statement"
	if p.acceptKw("from") {
		tn, err := p.tableName()
		if err != nil {
			return nil, err
		}
		st.From = &tn
		p.follow = "WHERE, ORDER BY, LIMIT or the end of the statement"
	}
	if p.acceptKw("where") {
		w, err := p.expr()
		if err != nil {
			return nil, err
		}
		st.Where = w
		p.follow = "AND, OR, ORDER BY, LIMIT or the end of the statement"
	}
	if p.acceptKw("order") {
		if err := p.expectKw("by"); err != nil {
			return nil, err
		}
		for {
			name, pos, err := p.columnName()
			if err != nil {
				return nil, err
			}
			item := OrderItem{Col: &ColumnRef{Name: name, Pos: pos}}
			if p.acceptKw("desc") {
				item.Desc = true
			} else {
				p.acceptKw("asc")
			}
			st.OrderBy = append(st.OrderBy, item)
			if !p.acceptPunct(",") {
				break
			}
		}
		p.follow = "',', ASC, DESC, LIMIT or the end of the statement"
	}
	if p.acceptKw("limit") {
		n, err := p.count()
		if err != nil {
			return nil, err
		}
		st.Limit = n
		switch {
		case p.acceptPunct(","):
			if st.Limit, err = p.count(); err != nil {
				return nil, err
			}
			st.Offset = n
		case p.acceptKw("offset"):
			if st.Offset, err = p.count(); err != nil {
				return nil, err
			}
		}
		p.follow = "the end of the statement"
	}
	return st, nil
}

// selectItem reads expr [[AS] alias].
func (p *parser) selectItem() (SelectItem, error) {
	start := p.peek().pos
	e, err := p.scalar("'*' or a column name or value to select")
	if err != nil {
		return SelectItem{}, err
	}
	item := SelectItem{Expr: e, Text: p.src[start:p.prevEnd()]}
	explicit := p.acceptKw("as")
	t := p.peek()
	switch {
	case explicit && t.kind == tokString, t.kind == tokQuoted:
		p.i++
		item.Alias = t.text
	case t.kind == tokWord && !reserved[strings.ToLower(t.text)]:
		p.i++
		item.Alias = t.text
	case explicit:
		return SelectItem{}, p.fail("an alias after AS")
	}
	return item, nil
}

// columnName reads a column name, dropping a table qualifier (t.col).
func (p *parser) columnName() (string, int, error) {
	name, pos, err := p.ident("a column name")
	if err != nil {
		return "", 0, err
	}
	if p.acceptPunct(".") {
		return p.ident("a column name after the table name")
	}
	return name, pos, nil
}

// count reads a non-negative integer (LIMIT, OFFSET).
func (p *parser) count() (int64, error) {
	t := p.peek()
	if t.kind == tokNumber {
		if v, ok := numberLiteral(t.text).(int64); ok && v >= 0 {
			p.i++
			return v, nil
		}
	}
	return 0, p.fail("a non-negative integer")
}

func (p *parser) updateStmt() (Statement, error) {
	p.next()
	tn, err := p.tableName()
	if err != nil {
		return nil, err
	}
	if err := p.expectKw("set"); err != nil {
		return nil, err
	}
	set, err := p.assignments()
	if err != nil {
		return nil, err
	}
	st := &UpdateStmt{Table: tn, Set: set}
	p.follow = "',', WHERE or the end of the statement"
	if p.acceptKw("where") {
		if st.Where, err = p.expr(); err != nil {
			return nil, err
		}
		p.follow = "AND, OR or the end of the statement"
	}
	return st, nil
}

// assignments reads col = value {, col = value}.
func (p *parser) assignments() ([]Assignment, error) {
	var out []Assignment
	for {
		name, pos, err := p.columnName()
		if err != nil {
			return nil, err
		}
		if err := p.expectPunct("="); err != nil {
			return nil, err
		}
		v, err := p.scalar("a value")
		if err != nil {
			return nil, err
		}
		out = append(out, Assignment{Col: &ColumnRef{Name: name, Pos: pos}, Value: v})
		if !p.acceptPunct(",") {
			return out, nil
		}
	}
}

func (p *parser) insertStmt() (Statement, error) {
	p.next()
	p.acceptKw("into")
	tn, err := p.tableName()
	if err != nil {
		return nil, err
	}
	st := &InsertStmt{Table: tn}
	if p.acceptKw("set") {
		set, err := p.assignments()
		if err != nil {
			return nil, err
		}
		for _, a := range set {
			st.Columns = append(st.Columns, a.Col)
			st.Values = append(st.Values, a.Value)
		}
		p.follow = "',' or the end of the statement"
		return st, nil
	}
	if p.acceptPunct("(") {
		for {
			name, pos, err := p.columnName()
			if err != nil {
				return nil, err
			}
			st.Columns = append(st.Columns, &ColumnRef{Name: name, Pos: pos})
			if !p.acceptPunct(",") {
				break
			}
		}
		if err := p.expectPunct(")"); err != nil {
			return nil, err
		}
	}
	if !p.acceptKw("values") && !p.acceptKw("value") {
		return nil, p.fail("VALUES")
	}
	if err := p.expectPunct("("); err != nil {
		return nil, err
	}
	for {
		v, err := p.scalar("a value")
		if err != nil {
			return nil, err
		}
		st.Values = append(st.Values, v)
		if !p.acceptPunct(",") {
			break
		}
	}
	if err := p.expectPunct(")"); err != nil {
		return nil, err
	}
	if p.atPunct(",") {
		// Table.Insert takes one row; several rows could not be
		// applied atomically.
		return nil, sqlErr(mysqlproto.ErNotSupportedYet, "INSERT adds one row per statement on the admin interface; send one INSERT per row")
	}
	p.follow = "the end of the statement"
	return st, nil
}

func (p *parser) deleteStmt() (Statement, error) {
	p.next()
	if err := p.expectKw("from"); err != nil {
		return nil, err
	}
	tn, err := p.tableName()
	if err != nil {
		return nil, err
	}
	st := &DeleteStmt{Table: tn}
	p.follow = "WHERE or the end of the statement"
	if p.acceptKw("where") {
		if st.Where, err = p.expr(); err != nil {
			return nil, err
		}
		p.follow = "AND, OR or the end of the statement"
	}
	return st, nil
}

func (p *parser) showStmt() (Statement, error) {
	p.next()
	st := &ShowStmt{}
	st.Full = p.acceptKw("full")
	if !st.Full && !p.acceptKw("global") && !p.acceptKw("session") {
		p.acceptKw("local")
	}
	t := p.next()
	switch {
	case isKw(t, "tables"):
		st.Kind = ShowTables
		if err := p.optionalSchema(); err != nil {
			return nil, err
		}
	case isKw(t, "databases"), isKw(t, "schemas"):
		st.Kind = ShowDatabases
	case isKw(t, "columns"), isKw(t, "fields"):
		st.Kind = ShowColumns
		if !p.acceptKw("from") && !p.acceptKw("in") {
			return nil, p.fail("FROM")
		}
		tn, err := p.tableName()
		if err != nil {
			return nil, err
		}
		st.Table = &tn
		if err := p.optionalSchema(); err != nil {
			return nil, err
		}
	case isKw(t, "variables"):
		st.Kind = ShowVariables
	case isKw(t, "status"):
		st.Kind = ShowStatus
	case isKw(t, "warnings"), isKw(t, "errors"):
		st.Kind = ShowWarnings
		p.skipToEnd() // LIMIT ...
		return st, nil
	case isKw(t, "create"):
		if err := p.expectKw("table"); err != nil {
			return nil, err
		}
		tn, err := p.tableName()
		if err != nil {
			return nil, err
		}
		st.Kind, st.Table = ShowCreateTable, &tn
		p.follow = "the end of the statement"
		return st, nil
	default:
		p.i--
		return nil, p.fail("TABLES, DATABASES, COLUMNS, CREATE TABLE, VARIABLES, STATUS or WARNINGS")
	}
	return st, p.likeOrWhere(st)
}

// optionalSchema skips FROM|IN db after SHOW TABLES / SHOW COLUMNS: there
// is only one database.
func (p *parser) optionalSchema() error {
	if p.acceptKw("from") || p.acceptKw("in") {
		_, _, err := p.ident("a database name")
		return err
	}
	return nil
}

// likeOrWhere reads the optional filter of a SHOW statement.
func (p *parser) likeOrWhere(st *ShowStmt) error {
	p.follow = "LIKE, WHERE or the end of the statement"
	switch {
	case p.acceptKw("like"):
		t := p.peek()
		if t.kind != tokString {
			return p.fail("a quoted pattern after LIKE")
		}
		p.i++
		st.Like = &t.text
		p.follow = "the end of the statement"
	case p.acceptKw("where"):
		w, err := p.expr()
		if err != nil {
			return err
		}
		st.Where = w
		p.follow = "AND, OR or the end of the statement"
	}
	return nil
}

// describeStmt reads DESCRIBE t [column-or-pattern].
func (p *parser) describeStmt() (Statement, error) {
	p.next()
	if p.atKw("select") || p.atKw("update") || p.atKw("delete") || p.atKw("insert") {
		return nil, sqlErr(mysqlproto.ErNotSupportedYet, "EXPLAIN is not supported on the admin interface: every query reads the table's rows directly")
	}
	tn, err := p.tableName()
	if err != nil {
		return nil, err
	}
	st := &ShowStmt{Kind: ShowColumns, Table: &tn}
	switch t := p.peek(); {
	case t.kind == tokString, t.kind == tokQuoted, t.kind == tokWord && !reserved[strings.ToLower(t.text)]:
		p.i++
		st.Like = &t.text
	}
	p.follow = "a column name or the end of the statement"
	return st, nil
}
