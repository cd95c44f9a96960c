package admin

import (
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/galeon-db/galeon/internal/mysqlproto"
)

// engine executes parsed statements against the catalog. It is shared by
// all SQL connections and the HTTP API and holds no per-connection state.
type engine struct {
	cat       *catalog
	version   string // server version shown to clients
	maxPacket int
	tls       bool
	started   time.Time

	// writeMu serialises Update, Insert and Delete calls so a table never
	// sees two changes at once, whatever the number of admin sessions.
	writeMu sync.Mutex

	questions atomic.Uint64 // statements executed, for SHOW STATUS
	connected atomic.Int64  // open SQL sessions
}

// session is the per-connection state statements can see.
type session struct {
	user   string
	host   string
	connID uint32
	db     string // from the handshake, COM_INIT_DB or USE; shown by DATABASE()
}

// env binds a session to the engine for variables and functions.
type env struct {
	eng  *engine
	sess *session
}

// result is what one statement produced: a result set (cols non-nil) or
// an OK with a count of affected rows.
type result struct {
	cols     []resultCol
	rows     [][]any
	affected uint64
}

// resultCol is the metadata of one result column.
type resultCol struct {
	name    string
	table   string // "" for computed columns
	orgName string
	kind    Kind
}

func (r *result) isSet() bool { return r.cols != nil }

var okResult = &result{}

// exec runs one statement.
func (e *engine) exec(sess *session, st Statement) (*result, error) {
	e.questions.Add(1)
	en := &env{eng: e, sess: sess}
	switch s := st.(type) {
	case *SelectStmt:
		return en.selectStmt(s)
	case *UpdateStmt:
		return en.update(s)
	case *InsertStmt:
		return en.insert(s)
	case *DeleteStmt:
		return en.delete(s)
	case *ShowStmt:
		return en.show(s)
	case *SetStmt:
		return okResult, nil
	case *UseStmt:
		sess.db = s.DB
		return okResult, nil
	case *TxStmt:
		if s.Kind == TxBegin {
			return nil, sqlErr(mysqlproto.ErNotSupportedYet,
				"transactions are not supported on the admin interface: every statement applies on its own, immediately and atomically")
		}
		return okResult, nil // nothing is ever pending
	}
	return nil, sqlErr(mysqlproto.ErNotSupportedYet, "statement not supported on the admin interface")
}

// table resolves a table reference. The only schema is main; others are
// accepted in name only, since clients sometimes qualify with whatever
// database they think they are in.
func (en *env) table(tn TableName) (*Table, error) {
	if tn.Schema != "" && !strings.EqualFold(tn.Schema, "main") {
		return nil, sqlErr(erNoSuchTable, "Table '%s.%s' doesn't exist; the admin interface has one database, main, with tables: %s",
			tn.Schema, tn.Name, en.eng.cat.names())
	}
	t := en.eng.cat.lookup(tn.Name)
	if t == nil {
		return nil, en.eng.cat.unknownTable(tn.Name)
	}
	return t, nil
}

// where compiles an optional WHERE clause.
func (en *env) where(w Expr, t *Table) (condFn, error) {
	if w == nil {
		return nil, nil
	}
	return compileCond(w, scope{t: t, env: en})
}

// tableErr turns an error returned by a table function into what the
// operator sees: the table's own *SQLError as is, anything else as 1105
// with its message.
func tableErr(err error) error {
	var se *mysqlproto.SQLError
	if errors.As(err, &se) {
		return se
	}
	return sqlErr(mysqlproto.ErUnknownError, "%s", err.Error())
}

// value checks one value written by UPDATE or INSERT against its column:
// it must be a constant, fit the column's kind, and be NULL only if the
// column allows it.
func (en *env) value(col Column, e Expr) (any, error) {
	sc, err := compileScalar(e, scope{env: en})
	if err != nil {
		var se *mysqlproto.SQLError
		if errors.As(err, &se) && se.Code == erBadField {
			return nil, sqlErr(mysqlproto.ErParseError,
				"You have an error in your SQL syntax: the value for column '%s' must be a literal, not a column", col.Name)
		}
		return nil, err
	}
	if sc.value == nil {
		if !col.Nullable {
			return nil, sqlErr(erBadNull, "Column '%s' cannot be null", col.Name)
		}
		return nil, nil
	}
	v, cerr := convert(sc.value, col.Kind)
	if cerr != nil {
		return nil, wrongValue(col, sc.value, cerr)
	}
	return v, nil
}

func (en *env) update(s *UpdateStmt) (*result, error) {
	t, err := en.table(s.Table)
	if err != nil {
		return nil, err
	}
	if t.Update == nil {
		return nil, sqlErr(erOpenAsReadOnly, "Table '%s' is read only", t.Name)
	}
	set := make(map[string]any, len(s.Set))
	for _, a := range s.Set {
		i := t.column(a.Col.Name)
		if i < 0 {
			return nil, unknownColumn(t, a.Col.Name)
		}
		col := t.Columns[i]
		key := strings.ToLower(col.Name)
		if _, dup := set[key]; dup {
			return nil, sqlErr(erFieldSpecifiedTwice, "Column '%s' specified twice", col.Name)
		}
		v, err := en.value(col, a.Value)
		if err != nil {
			return nil, err
		}
		set[key] = v
	}
	cond, err := en.where(s.Where, t)
	if err != nil {
		return nil, err
	}
	en.eng.writeMu.Lock()
	defer en.eng.writeMu.Unlock()
	n, err := t.Update(set, matchFunc(cond, len(t.Columns)))
	if err != nil {
		return nil, tableErr(err)
	}
	return &result{affected: uint64(max(n, 0))}, nil
}

func (en *env) insert(s *InsertStmt) (*result, error) {
	t, err := en.table(s.Table)
	if err != nil {
		return nil, err
	}
	if t.Insert == nil {
		return nil, sqlErr(erOpenAsReadOnly, "Table '%s' does not accept INSERT", t.Name)
	}
	cols := s.Columns
	if cols == nil {
		for _, c := range t.Columns {
			cols = append(cols, &ColumnRef{Name: c.Name})
		}
	}
	if len(cols) != len(s.Values) {
		return nil, sqlErr(erWrongValueCount, "Column count doesn't match value count at row 1 (%d columns, %d values; columns of %s: %s)",
			len(cols), len(s.Values), t.Name, t.columnNames())
	}
	row := make(map[string]any, len(cols))
	for k, c := range cols {
		i := t.column(c.Name)
		if i < 0 {
			return nil, unknownColumn(t, c.Name)
		}
		col := t.Columns[i]
		key := strings.ToLower(col.Name)
		if _, dup := row[key]; dup {
			return nil, sqlErr(erFieldSpecifiedTwice, "Column '%s' specified twice", col.Name)
		}
		v, err := en.value(col, s.Values[k])
		if err != nil {
			return nil, err
		}
		row[key] = v
	}
	en.eng.writeMu.Lock()
	defer en.eng.writeMu.Unlock()
	if err := t.Insert(row); err != nil {
		return nil, tableErr(err)
	}
	return &result{affected: 1}, nil
}

func (en *env) delete(s *DeleteStmt) (*result, error) {
	t, err := en.table(s.Table)
	if err != nil {
		return nil, err
	}
	if t.Delete == nil {
		return nil, sqlErr(erOpenAsReadOnly, "Table '%s' does not accept DELETE", t.Name)
	}
	cond, err := en.where(s.Where, t)
	if err != nil {
		return nil, err
	}
	en.eng.writeMu.Lock()
	defer en.eng.writeMu.Unlock()
	n, err := t.Delete(matchFunc(cond, len(t.Columns)))
	if err != nil {
		return nil, tableErr(err)
	}
	return &result{affected: uint64(max(n, 0))}, nil
}
