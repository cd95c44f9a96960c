package admin

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"maps"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"modernc.org/sqlite"

	"github.com/galeon-db/galeon/internal/mysqlproto"
)

// The SQL engine is SQLite (modernc.org/sqlite: pure Go, no cgo, so the
// binary stays one static file), the engine ProxySQL's admin interface is
// built on. galeon's tables are not stored in it: they live in the proxy
// and are read fresh for every statement, so SQLite is used the way
// ProxySQL uses it for its stats tables. For each statement, on a private
// in-memory database:
//
//  1. BEGIN, then prepare the statement with an authorizer that admits
//     only reads of galeon's tables and INSERT, UPDATE and DELETE on them
//     (no ATTACH, PRAGMA, CREATE, transactions or other schema) and
//     records which tables the statement touches;
//  2. copy those tables' current rows in (a join over the 10k-row digest
//     table loads only what it names);
//  3. run it: SQLite does the joins, GROUP BY, subqueries and the
//     arithmetic of UPDATE ... SET w = w * 2;
//  4. for a write, compare the table before and after by rowid, check
//     the changed values against the column kinds, and hand the row
//     changes to the table's Apply, which applies all or none;
//  5. ROLLBACK, so the database is empty again for the next statement.
//
// Nothing is cached between statements: there is no second copy of the
// configuration to drift from the running proxy.

// maxLiteConns bounds the SQLite connections, each a separate in-memory
// database; admin sessions beyond that wait their turn.
const maxLiteConns = 4

// statementTimeout stops a runaway statement (a cross join of the digest
// table with itself, twice) without taking the admin interface down.
const statementTimeout = 30 * time.Second

func init() {
	// REGEXP is an operator in SQLite that calls a function it does not
	// ship; ProxySQL's admin users expect it to work.
	var mu sync.Mutex
	cache := map[string]*regexp.Regexp{} // bounded: patterns can come from rows
	sqlite.MustRegisterDeterministicScalarFunction("regexp", 2, func(_ *sqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
		pat, ok1 := args[0].(string)
		s, ok2 := args[1].(string)
		if !ok1 || !ok2 {
			return nil, nil
		}
		mu.Lock()
		re, ok := cache[pat]
		mu.Unlock()
		if !ok {
			var err error
			if re, err = regexp.Compile(pat); err != nil {
				return nil, fmt.Errorf("REGEXP %q: %v", pat, err)
			}
			mu.Lock()
			if len(cache) >= 256 {
				clear(cache)
			}
			cache[pat] = re
			mu.Unlock()
		}
		if re.MatchString(s) {
			return int64(1), nil
		}
		return int64(0), nil
	})
}

// store hands out SQLite connections.
type store struct {
	cat   *catalog
	free  chan *liteConn // idle connections
	slots chan struct{}  // one per open connection
}

func newStore(cat *catalog) *store {
	return &store{cat: cat, free: make(chan *liteConn, maxLiteConns), slots: make(chan struct{}, maxLiteConns)}
}

// get returns an idle connection or opens one, waiting if all are busy.
func (s *store) get(ctx context.Context) (*liteConn, error) {
	select {
	case lc := <-s.free:
		return lc, nil
	default:
	}
	select {
	case lc := <-s.free:
		return lc, nil
	case s.slots <- struct{}{}:
		lc, err := openLite(s.cat)
		if err != nil {
			<-s.slots
			return nil, err
		}
		return lc, nil
	case <-ctx.Done():
		return nil, sqlErr(mysqlproto.ErUnknownError, "the admin SQL engine is busy: %v", ctx.Err())
	}
}

// put returns a connection; one whose transaction state is unknown is
// closed instead.
func (s *store) put(lc *liteConn) {
	if lc.broken {
		lc.c.Close()
		<-s.slots
		return
	}
	s.free <- lc
}

// inTx runs fn on a connection inside a transaction that is always
// rolled back, with the statement timeout.
func (s *store) inTx(fn func(ctx context.Context, lc *liteConn) (*result, error)) (*result, error) {
	ctx, cancel := context.WithTimeout(context.Background(), statementTimeout)
	defer cancel()
	lc, err := s.get(ctx)
	if err != nil {
		return nil, err
	}
	defer s.put(lc)
	if err := lc.exec(ctx, "BEGIN"); err != nil {
		lc.broken = true
		return nil, err
	}
	defer func() {
		if e := lc.exec(context.Background(), "ROLLBACK"); e != nil {
			lc.broken = true
		}
	}()
	return fn(ctx, lc)
}

// close closes the idle connections; it is called when no statement is
// running any more.
func (s *store) close() {
	for {
		select {
		case lc := <-s.free:
			lc.c.Close()
			<-s.slots
		default:
			return
		}
	}
}

// liteConn is one SQLite connection holding the empty schema of every
// table in the catalog.
type liteConn struct {
	c      driver.Conn
	cat    *catalog
	insert map[insertKey]cachedInsert // prepared INSERTs that load tables
	broken bool

	// Authorizer state: user is set while a statement from the operator
	// is being prepared; what it may touch is then checked and recorded.
	// running is set while it runs: SQLite prepares nothing then, except
	// the tail of a text that held more than one statement, which is
	// refused whatever it is.
	user    bool
	running bool
	temp    string          // a temp table it may read (SHOW filters)
	touched map[*Table]bool // tables read or written
	written map[*Table]bool // tables written
	denied  string          // what was refused, for the message
	named   []*Table        // tables the statement names, for column hints
}

// liteDriver is the driver registered with database/sql, which holds the
// functions registered above (a new sqlite.Driver would not).
var liteDriver = func() driver.Driver {
	db, err := sql.Open("sqlite", "")
	if err != nil {
		panic(err)
	}
	defer db.Close()
	return db.Driver()
}()

func openLite(cat *catalog) (*liteConn, error) {
	c, err := liteDriver.Open(":memory:")
	if err != nil {
		return nil, fmt.Errorf("admin: open SQLite: %w", err)
	}
	lc := &liteConn{c: c, cat: cat, insert: map[insertKey]cachedInsert{}}
	ar, ok := c.(sqlite.AuthorizerRegisterer)
	if !ok {
		c.Close()
		return nil, errors.New("admin: SQLite driver has no authorizer")
	}
	if err := ar.RegisterAuthorizer(lc.authorize); err != nil {
		c.Close()
		return nil, err
	}
	ctx := context.Background()
	for _, t := range cat.tables {
		if err := lc.exec(ctx, createSQL(t, "")); err != nil {
			c.Close()
			return nil, fmt.Errorf("admin: create %s in SQLite: %w", t.Name, err)
		}
	}
	return lc, nil
}

// createSQL declares t for SQLite. Column types give SQLite's usual
// affinity ('42' written to an INTEGER column is stored as 42), and
// nothing is NOT NULL: rows the proxy returns may hold NULL anywhere, and
// what an operator may store is checked against the Column definitions
// when the change is applied.
func createSQL(t *Table, prefix string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "CREATE %sTABLE %s (", prefix, quoteIdent(t.Name))
	for i, c := range t.Columns {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(quoteIdent(c.Name))
		b.WriteString(map[Kind]string{Int: " INTEGER", Float: " REAL", Text: " TEXT"}[c.Kind])
	}
	b.WriteString(")")
	return b.String()
}

// authorize is SQLite's authorizer callback. Statements galeon prepares
// itself pass; an operator's statement may read galeon's tables (and the
// temp table of a SHOW filter) and insert, update and delete their rows,
// nothing else.
func (lc *liteConn) authorize(action sqlite.AuthorizerActionCode, arg1, arg2, db, _ string) sqlite.AuthorizerReturnCode {
	if lc.running {
		lc.denied = "one statement at a time: the text held a second statement"
		return sqlite.AuthorizerDeny
	}
	if !lc.user {
		return sqlite.AuthorizerOK
	}
	switch action {
	case sqlite.AuthSelect, sqlite.AuthRecursive:
		return sqlite.AuthorizerOK
	case sqlite.AuthFunction:
		// Functions that reach outside the database stay off even if
		// the library ever enabled them.
		if f := strings.ToLower(arg2); f == "load_extension" || f == "fts3_tokenizer" || f == "readfile" || f == "writefile" || f == "edit" {
			lc.denied = "function " + arg2 + " is not available on the admin interface"
			return sqlite.AuthorizerDeny
		}
		return sqlite.AuthorizerOK
	case sqlite.AuthRead, sqlite.AuthInsert, sqlite.AuthUpdate, sqlite.AuthDelete:
		if db == "temp" && lc.temp != "" && strings.EqualFold(arg1, lc.temp) && action == sqlite.AuthRead {
			return sqlite.AuthorizerOK
		}
		t := lc.cat.lookup(arg1)
		if t == nil || db != "main" && db != "" {
			lc.denied = fmt.Sprintf("table %s is not an admin table; tables: %s", arg1, lc.cat.names())
			return sqlite.AuthorizerDeny
		}
		if action == sqlite.AuthUpdate && t.column(arg2) < 0 {
			lc.denied = fmt.Sprintf("%s.%s cannot be changed; columns: %s", t.Name, arg2, t.columnNames())
			return sqlite.AuthorizerDeny
		}
		lc.touched[t] = true
		if action != sqlite.AuthRead {
			lc.written[t] = true
		}
		return sqlite.AuthorizerOK
	}
	lc.denied = "only SELECT, INSERT, UPDATE, DELETE and REPLACE on galeon's tables run on the admin interface (with SHOW, DESCRIBE, SET and USE)"
	return sqlite.AuthorizerDeny
}

// exec runs SQL of galeon's own (transaction control, schema).
func (lc *liteConn) exec(ctx context.Context, q string) error {
	_, err := lc.c.(driver.ExecerContext).ExecContext(ctx, q, nil)
	return err
}

// prepareUser prepares an operator's statement under the authorizer.
// temp names a temp table it may also read.
func (lc *liteConn) prepareUser(ctx context.Context, q, temp string) (driver.Stmt, error) {
	lc.user, lc.temp, lc.denied = true, temp, ""
	lc.touched, lc.written = map[*Table]bool{}, map[*Table]bool{}
	st, err := lc.c.(driver.ConnPrepareContext).PrepareContext(ctx, q)
	lc.user = false
	if err != nil {
		return nil, lc.sqlError(err)
	}
	return st, nil
}

// loadBatch is how many rows one INSERT loads: fewer calls into the
// driver (a 10k-row table loads in a third less time than row by row).
const loadBatch = 64

// load copies rows into t's (empty) SQLite table, row i as rowid i+1.
// Inserting is quick and bounded by the row count, so it runs without a
// cancellable context: with one, the driver starts a watcher goroutine
// per call.
func (lc *liteConn) load(t *Table, rows [][]any) error {
	ctx := context.Background()
	width := len(t.Columns) + 1
	args := make([]driver.NamedValue, 0, loadBatch*width)
	for start := 0; start < len(rows); start += loadBatch {
		batch := rows[start:min(start+loadBatch, len(rows))]
		ins, err := lc.insertStmt(t, len(batch))
		if err != nil {
			return err
		}
		args = args[:0]
		for i, r := range batch {
			args = append(args, driver.NamedValue{Ordinal: len(args) + 1, Value: int64(start + i + 1)})
			for _, v := range r {
				args = append(args, driver.NamedValue{Ordinal: len(args) + 1, Value: v})
			}
		}
		if _, err := ins.(driver.StmtExecContext).ExecContext(ctx, args); err != nil {
			return fmt.Errorf("admin: load %s into SQLite: %w", t.Name, err)
		}
	}
	return nil
}

// insertStmt returns a prepared INSERT of n rows into t: one for full
// batches, and one for the last partial batch, which is re-prepared when
// its size changes.
func (lc *liteConn) insertStmt(t *Table, n int) (driver.Stmt, error) {
	key := insertKey{t, n == loadBatch}
	if c := lc.insert[key]; c.stmt != nil && c.rows == n {
		return c.stmt, nil
	} else if c.stmt != nil {
		c.stmt.Close()
	}
	row := "(?" + strings.Repeat(", ?", len(t.Columns)) + ")"
	q := fmt.Sprintf("INSERT INTO %s (rowid, %s) VALUES %s%s", quoteIdent(t.Name), columnList(t.Columns),
		row, strings.Repeat(", "+row, n-1))
	st, err := lc.c.(driver.ConnPrepareContext).PrepareContext(context.Background(), q)
	if err != nil {
		return nil, err
	}
	lc.insert[key] = cachedInsert{st, n}
	return st, nil
}

type insertKey struct {
	t    *Table
	full bool
}

type cachedInsert struct {
	stmt driver.Stmt
	rows int
}

func columnList(cols []Column) string {
	names := make([]string, len(cols))
	for i, c := range cols {
		names[i] = quoteIdent(c.Name)
	}
	return strings.Join(names, ", ")
}

// snapshot reads t's SQLite rows by rowid.
func (lc *liteConn) snapshot(ctx context.Context, t *Table) (map[int64][]any, error) {
	rows, err := lc.c.(driver.QueryerContext).QueryContext(ctx, fmt.Sprintf("SELECT rowid, %s FROM %s", columnList(t.Columns), quoteIdent(t.Name)), nil)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[int64][]any{}
	dest := make([]driver.Value, len(t.Columns)+1)
	for {
		if err := rows.Next(dest); err == io.EOF {
			return out, nil
		} else if err != nil {
			return nil, err
		}
		r := make([]any, len(t.Columns))
		for i := range r {
			r[i] = normalize(dest[i+1])
		}
		out[dest[0].(int64)] = r
	}
}

// query runs a prepared statement and reads its whole result.
func (lc *liteConn) query(ctx context.Context, st driver.Stmt) (*result, error) {
	lc.running = true
	defer func() { lc.running = false }()
	rows, err := st.(driver.StmtQueryContext).QueryContext(ctx, nil)
	if err != nil {
		return nil, lc.sqlError(err)
	}
	defer rows.Close()
	cols := rows.Columns()
	res := &result{}
	if len(cols) == 0 {
		if err := rows.Next(nil); err != nil && err != io.EOF {
			return nil, lc.sqlError(err)
		}
		return res, nil
	}
	res.cols = make([]resultCol, len(cols))
	for i, c := range cols {
		res.cols[i].name = c
		if tn, ok := rows.(driver.RowsColumnTypeDatabaseTypeName); ok {
			res.cols[i].kind = map[string]Kind{"INTEGER": Int, "REAL": Float, "TEXT": Text}[tn.ColumnTypeDatabaseTypeName(i)]
		}
	}
	dest := make([]driver.Value, len(cols))
	for {
		if err := rows.Next(dest); err == io.EOF {
			break
		} else if err != nil {
			return nil, lc.sqlError(err)
		}
		r := make([]any, len(cols))
		for i, v := range dest {
			r[i] = normalize(v)
		}
		res.rows = append(res.rows, r)
	}
	// Expressions have no declared type: take it from the values.
	for i := range res.cols {
		for _, r := range res.rows {
			if res.cols[i].kind != 0 {
				break
			}
			if r[i] != nil {
				res.cols[i].kind = kindOf(r[i])
			}
		}
		if res.cols[i].kind == 0 {
			res.cols[i].kind = Text
		}
	}
	return res, nil
}

// changes returns SQLite's count of rows the last statement inserted,
// deleted or matched for update; that is the affected-rows count an
// operator sees, as in MySQL with CLIENT_FOUND_ROWS.
func (lc *liteConn) changes(ctx context.Context) (uint64, error) {
	rows, err := lc.c.(driver.QueryerContext).QueryContext(ctx, "SELECT changes()", nil)
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	dest := make([]driver.Value, 1)
	if err := rows.Next(dest); err != nil {
		return 0, err
	}
	n, _ := dest[0].(int64)
	return uint64(max(n, 0)), nil
}

// run evaluates one operator statement (already rewritten for SQLite)
// inside inTx.
func (lc *liteConn) run(ctx context.Context, eng *engine, st *statement) (res *result, err error) {
	lc.named = lc.named[:0]
	for _, t := range st.toks {
		if tb := lc.cat.lookup(t.text); tb != nil && (t.kind == tokWord || t.kind == tokQuoted) && !slices.Contains(lc.named, tb) {
			lc.named = append(lc.named, tb)
		}
	}
	stmt, err := lc.prepareUser(ctx, st.sql, "")
	if err != nil {
		return nil, err
	}
	defer stmt.Close()
	var target *Table
	for t := range lc.written {
		target = t // SQLite statements write one table (there are no triggers)
	}
	if target != nil {
		// From reading the rows to applying the change, no other admin
		// change may happen in between.
		eng.writeMu.Lock()
		defer eng.writeMu.Unlock()
	}
	for _, t := range lc.cat.tables {
		if lc.touched[t] {
			if err := lc.load(t, t.readRows()); err != nil {
				return nil, err
			}
		}
	}
	var before map[int64][]any
	if target != nil {
		if before, err = lc.snapshot(ctx, target); err != nil {
			return nil, err
		}
	}
	if res, err = lc.query(ctx, stmt); err != nil || target == nil {
		return res, err
	}
	if !res.isSet() {
		if res.affected, err = lc.changes(ctx); err != nil {
			return nil, err
		}
	}
	after, err := lc.snapshot(ctx, target)
	if err != nil {
		return nil, err
	}
	changes, err := target.diff(before, after)
	if err != nil || len(changes) == 0 {
		return res, err
	}
	if err := target.Apply(changes); err != nil {
		return nil, tableErr(err)
	}
	return res, nil
}

// filter runs SELECT * FROM a temp table holding rows WHERE cond, for
// SHOW ... LIKE / WHERE, inside inTx.
func (lc *liteConn) filter(ctx context.Context, vt *Table, rows [][]any, cond string) (*result, error) {
	if err := lc.exec(ctx, createSQL(vt, "TEMP ")); err != nil {
		return nil, err
	}
	ins, err := lc.c.(driver.ConnPrepareContext).PrepareContext(ctx, fmt.Sprintf("INSERT INTO temp.%s VALUES (?%s)",
		quoteIdent(vt.Name), strings.Repeat(", ?", len(vt.Columns)-1)))
	if err != nil {
		return nil, err
	}
	defer ins.Close()
	args := make([]driver.NamedValue, len(vt.Columns))
	for _, r := range rows {
		for i := range args {
			args[i] = driver.NamedValue{Ordinal: i + 1, Value: r[i]}
		}
		if _, err := ins.(driver.StmtExecContext).ExecContext(ctx, args); err != nil {
			return nil, err
		}
	}
	stmt, err := lc.prepareUser(ctx, fmt.Sprintf("SELECT * FROM temp.%s WHERE %s", quoteIdent(vt.Name), cond), vt.Name)
	if err != nil {
		return nil, err
	}
	defer stmt.Close()
	res, err := lc.query(ctx, stmt)
	if err != nil {
		return nil, err
	}
	for i, c := range vt.Columns {
		res.cols[i].kind = c.Kind
	}
	return res, nil
}

// diff turns a table's rows before and after a statement into row
// changes, checking every value an operator wrote against its column.
func (t *Table) diff(before, after map[int64][]any) ([]Change, error) {
	ids := slices.Sorted(maps.Keys(before))
	for id := range after {
		if _, ok := before[id]; !ok {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	var out []Change
	for _, id := range ids {
		ch := Change{Old: before[id], New: after[id]}
		if ch.Old != nil && ch.New != nil && slices.Equal(ch.Old, ch.New) {
			continue
		}
		op := ch.Op()
		if t.Accepts&op == 0 {
			if t.Accepts == 0 {
				return nil, sqlErr(erOpenAsReadOnly, "Table '%s' is read only", t.Name)
			}
			return nil, sqlErr(erOpenAsReadOnly, "Table '%s' does not accept %s (it accepts %s)", t.Name, op,
				strings.ToUpper(strings.Join(privileges(t)[1:], ", ")))
		}
		for i, col := range t.Columns {
			if ch.Old != nil {
				ch.Old[i] = convertQuietly(ch.Old[i], col.Kind)
			}
			if ch.New == nil {
				continue
			}
			v := ch.New[i]
			written := ch.Old == nil || v != ch.Old[i]
			if v == nil {
				if written && ch.Old != nil && !col.Nullable {
					return nil, sqlErr(erBadNull, "Column '%s' cannot be null", col.Name)
				}
				continue
			}
			cv, cerr := convert(v, col.Kind)
			switch {
			case cerr == nil:
				ch.New[i] = cv
			case written:
				return nil, wrongValue(col, v, cerr)
			}
		}
		out = append(out, ch)
	}
	return out, nil
}

// convertQuietly converts v to kind k if it can, and leaves it as it is
// otherwise (a value the proxy itself returned is shown, not refused).
func convertQuietly(v any, k Kind) any {
	if cv, err := convert(v, k); err == nil {
		return cv
	}
	return v
}

// sqlError turns an SQLite error into the MySQL error an operator and
// their client understand: the same codes MySQL uses for the same
// mistakes, with SQLite's own description of what is wrong.
func (lc *liteConn) sqlError(err error) error {
	var se *sqlite.Error
	if !errors.As(err, &se) {
		if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
			return sqlErr(mysqlproto.ErQueryInterrupted, "Query execution was interrupted after %s: narrow it down (a join without ON over the digest table is big)", statementTimeout)
		}
		return sqlErr(mysqlproto.ErUnknownError, "%s", err.Error())
	}
	msg := se.Error()
	if i := strings.Index(msg, ": "); i >= 0 {
		msg = msg[i+2:]
	}
	if i := strings.LastIndex(msg, " ("); i >= 0 && strings.HasSuffix(msg, ")") {
		msg = msg[:i]
	}
	switch {
	case se.Code()&0xff == 23 || strings.HasPrefix(msg, "not authorized"): // SQLITE_AUTH, or a denied function
		return sqlErr(erTableAccessDenied, "%s", lc.denied)
	case strings.HasPrefix(msg, "no such table: "):
		name := strings.TrimPrefix(msg, "no such table: ")
		if strings.Contains(name, ".") {
			return sqlErr(erNoSuchTable, "Table '%s' doesn't exist; the admin interface has one database, main, with tables: %s", name, lc.cat.names())
		}
		return lc.cat.unknownTable(name)
	case strings.HasPrefix(msg, "no such column: "):
		return sqlErr(erBadField, "Unknown column '%s'%s", strings.TrimPrefix(msg, "no such column: "), lc.columnHint())
	case strings.HasPrefix(msg, "table ") && strings.Contains(msg, " has no column named "):
		return sqlErr(erBadField, "Unknown column '%s'%s", msg[strings.LastIndex(msg, " ")+1:], lc.columnHint())
	case strings.HasPrefix(msg, "no such function: "):
		return sqlErr(erSPDoesNotExist, "FUNCTION main.%s does not exist (SQLite's functions are available: https://sqlite.org/lang_corefunc.html)", strings.TrimPrefix(msg, "no such function: "))
	case strings.HasPrefix(msg, "wrong number of arguments"):
		return sqlErr(erWrongParamCount, "Incorrect parameter count: %s", msg)
	case strings.HasPrefix(msg, "ambiguous column name: "):
		return sqlErr(erNonUniq, "Column '%s' is ambiguous: qualify it with its table", strings.TrimPrefix(msg, "ambiguous column name: "))
	case strings.HasPrefix(msg, "misuse of aggregate"):
		return sqlErr(erInvalidGroupFuncUse, "Invalid use of group function: %s", msg)
	case msg == "no tables specified":
		return sqlErr(erNoTablesUsed, "No tables used")
	case strings.Contains(msg, "values were supplied") || strings.Contains(msg, "values for") && strings.Contains(msg, "columns"):
		return sqlErr(erWrongValueCount, "Column count doesn't match value count: %s", msg)
	case strings.Contains(msg, "syntax error") || strings.HasPrefix(msg, "incomplete input") || strings.HasPrefix(msg, "unrecognized token"):
		return sqlErr(mysqlproto.ErParseError, "You have an error in your SQL syntax: %s (the admin interface speaks SQLite's dialect)", msg)
	case se.Code()&0xff == 9: // SQLITE_INTERRUPT
		return sqlErr(mysqlproto.ErQueryInterrupted, "Query execution was interrupted after %s: narrow it down", statementTimeout)
	}
	return sqlErr(mysqlproto.ErUnknownError, "%s", msg)
}

// columnHint lists the columns of the tables a failed statement named.
func (lc *liteConn) columnHint() string {
	var parts []string
	for _, t := range lc.named {
		parts = append(parts, t.Name+": "+t.columnNames())
	}
	if len(parts) == 0 {
		return ""
	}
	return "; columns of " + strings.Join(parts, "; ")
}
