package admin

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/galeon-db/galeon/internal/mysqlproto"
)

// engine executes statements against the catalog. It is shared by all
// SQL connections and the HTTP API and holds no per-connection state.
type engine struct {
	cat       *catalog
	store     *store
	version   string // server version shown to clients
	maxPacket int
	tls       bool
	started   time.Time

	// writeMu serialises changes so a table never sees two at once,
	// whatever the number of admin sessions, and the rows a change was
	// computed from are still the rows when it is applied.
	writeMu sync.Mutex

	questions atomic.Uint64 // statements executed, for SHOW STATUS
	connected atomic.Int64  // open SQL sessions
}

func newEngine(cat *catalog, version string, maxPacket int, tls bool) *engine {
	return &engine{cat: cat, store: newStore(cat), version: version, maxPacket: maxPacket, tls: tls, started: time.Now()}
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

// sqliteWords start the statements SQLite evaluates.
var sqliteWords = []string{"SELECT", "WITH", "VALUES", "INSERT", "REPLACE", "UPDATE", "DELETE"}

// exec runs one statement of query q. Statements of the SQL dialect go
// to SQLite; SHOW, DESCRIBE, SET, USE and transaction control, which
// clients send on their own, are answered here.
func (e *engine) exec(sess *session, st *statement, q string) (*result, error) {
	e.questions.Add(1)
	en := &env{eng: e, sess: sess}
	w := st.firstWord()
	switch {
	case slices.Contains(sqliteWords, w), w == "" && isPunct(st.toks[0], "("):
		return en.sqlite(st, q)
	case w == "SHOW":
		return en.show(st, q)
	case w == "DESCRIBE" || w == "DESC" || w == "EXPLAIN":
		return en.describe(st, q)
	case w == "SET":
		return okResult, nil // SET NAMES, autocommit, sql_mode: nothing to change here
	case w == "USE":
		if len(st.toks) != 2 || (st.toks[1].kind != tokWord && st.toks[1].kind != tokQuoted) {
			return nil, sqlErr(mysqlproto.ErParseError, "You have an error in your SQL syntax: expected USE <database>")
		}
		sess.db = st.toks[1].text
		return okResult, nil
	case w == "BEGIN" || w == "START":
		return nil, sqlErr(mysqlproto.ErNotSupportedYet,
			"transactions are not supported on the admin interface: every statement applies on its own, immediately and atomically")
	case w == "COMMIT" || w == "ROLLBACK":
		return okResult, nil // nothing is ever pending
	}
	code := mysqlproto.ErParseError // a typo
	if slices.Contains(otherWords, w) {
		code = mysqlproto.ErNotSupportedYet
	}
	return nil, sqlErr(code, "'%s' is not supported on the admin interface: it runs SELECT, INSERT, UPDATE, DELETE and REPLACE (SQLite's dialect) on galeon's tables, and SHOW, DESCRIBE, SET and USE", firstText(st))
}

// otherWords start statements of MySQL or SQLite that the admin interface
// refuses; anything else is reported as a syntax error.
var otherWords = []string{"CREATE", "DROP", "ALTER", "RENAME", "TRUNCATE", "ATTACH", "DETACH", "PRAGMA", "VACUUM", "REINDEX",
	"ANALYZE", "GRANT", "REVOKE", "LOAD", "SAVE", "KILL", "FLUSH", "LOCK", "UNLOCK", "CALL", "DO", "HANDLER", "INSTALL",
	"OPTIMIZE", "CHECK", "REPAIR", "SAVEPOINT", "RELEASE", "PREPARE", "EXECUTE", "DEALLOCATE", "XA"}

// firstText quotes the start of a statement for messages.
func firstText(st *statement) string {
	s := st.src
	if len(s) > 40 {
		s = s[:40] + "..."
	}
	return s
}

// sqlite evaluates a statement with SQLite.
func (en *env) sqlite(st *statement, q string) (*result, error) {
	if err := en.rewrite(st, q); err != nil {
		return nil, err
	}
	return en.eng.store.inTx(func(ctx context.Context, lc *liteConn) (*result, error) { return lc.run(ctx, en.eng, st) })
}

// isWrite reports whether a statement changes (or tries to change) rows,
// for the audit log.
func isWrite(st *statement) bool {
	switch st.firstWord() {
	case "INSERT", "REPLACE", "UPDATE", "DELETE":
		return true
	case "WITH":
		for _, t := range st.toks {
			if isKw(t, "insert") || isKw(t, "update") || isKw(t, "delete") {
				return true
			}
		}
	}
	return false
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
