package proxy

import (
	"encoding/hex"
	"errors"
	"strings"

	"github.com/galeon-db/galeon/internal/backend"
	"github.com/galeon-db/galeon/internal/mysqlproto"
	"github.com/galeon-db/galeon/internal/sqlclass"
)

// A session's variables are kept as SET fragments that give a connection
// the value the session holds — by value, never by the text of the
// client's SET: "SET sql_mode=CONCAT(@@sql_mode, ',ANSI_QUOTES')" means
// something else on a connection whose sql_mode differs, and
// "SET timestamp=UNIX_TIMESTAMP('2011-01-01 01:01:01')" depends on the
// time zone. A SET whose value is a constant (sqlclass.ConstantValue) is
// kept as written; any other is read back from the connection that ran
// it (SELECT @@session.x) and kept as the literal it produced.
//
// sync replays them in an order that cannot change their meaning: the
// character set first (it decides how the schema name and every string
// literal after it are read), then the schema, then everything else in
// one SET of literals.

// errBadDB is ER_BAD_DB_ERROR (1049), unknown database.
const errBadDB = mysqlproto.ErrorCode(1049)

// charsetVar: variables that decide how the connection reads and sends
// text. They are replayed before the schema and the other variables.
func charsetVar(name string) bool {
	switch name {
	case sqlclass.NameNames, sqlclass.NameCharset, "character_set_client", "character_set_connection",
		"character_set_results", "collation_connection":
		return true
	}
	return false
}

// sync makes a backend connection carry the session's replayable state:
// character set, schema, COM_SET_OPTION multi-statements, and session
// variables. Only the difference is sent, usually nothing at all.
func (s *session) sync(c *backend.Conn) error {
	if len(c.Vars) > 0 && !s.varsCover(c) {
		if err := s.restoreDefaults(c); err != nil {
			return err
		}
	}
	if s.schema == "" && c.Schema != "" {
		// No statement deselects a schema: a session without one needs
		// a connection that never had one (DATABASE() is NULL).
		return errFreshConn
	}
	if err := s.syncVars(c, groupCharset); err != nil {
		return err
	}
	if s.schema != "" && c.Schema != s.schema {
		initDB := append([]byte{byte(mysqlproto.ComInitDB)}, s.schema...)
		err := c.SimpleCommand(initDB)
		var se *mysqlproto.SQLError
		if errors.As(err, &se) && se.Code == errBadDB {
			// A schema another session has just created may not have
			// reached this node yet: let it catch up, then try again.
			if err = causalWait(c); err == nil {
				err = c.SimpleCommand(initDB)
			}
		}
		if err != nil {
			return err
		}
		c.Schema = s.schema
	}
	if c.MultiStatements != s.multiStmts {
		opt := byte(1) // MYSQL_OPTION_MULTI_STATEMENTS_OFF
		if s.multiStmts {
			opt = 0
		}
		if err := c.SimpleCommand([]byte{byte(mysqlproto.ComSetOption), opt, 0}); err != nil {
			return err
		}
		c.MultiStatements = s.multiStmts
	}
	if err := s.syncVars(c, groupTxn); err != nil {
		return err
	}
	return s.syncVars(c, groupOther)
}

// varGroup is the order variables are replayed in.
type varGroup uint8

const (
	groupCharset varGroup = iota // before the schema
	groupTxn                     // SET SESSION TRANSACTION ..., one statement each
	groupOther                   // one SET of literals
)

func groupOf(name string) varGroup {
	switch {
	case charsetVar(name):
		return groupCharset
	case name == sqlclass.NameTxIsolation || name == sqlclass.NameTxReadOnly:
		return groupTxn
	}
	return groupOther
}

// syncVars sends the session's variables of group g that c does not
// carry yet: in one SET, or for the transaction characteristics (which
// have their own SET form) one SET each.
func (s *session) syncVars(c *backend.Conn, g varGroup) error {
	var set []string
	for _, name := range s.varOrder {
		if groupOf(name) == g && c.Vars[name] != s.vars[name] {
			set = append(set, s.vars[name])
		}
	}
	if len(set) == 0 {
		return nil
	}
	stmts := []string{"SET " + strings.Join(set, ", ")}
	if g == groupTxn {
		stmts = stmts[:0]
		for _, frag := range set {
			stmts = append(stmts, "SET "+frag)
		}
	}
	for _, q := range stmts {
		if err := c.Query(q); err != nil {
			return err
		}
	}
	for _, name := range s.varOrder {
		if groupOf(name) != g {
			continue
		}
		if _, ok := c.Vars[name]; !ok {
			c.VarOrder = append(c.VarOrder, name)
		}
		c.Vars[name] = s.vars[name]
	}
	return nil
}

// txnFragment replays SET SESSION TRANSACTION ISOLATION LEVEL / READ
// ONLY|WRITE in that statement's own form, which every MySQL and MariaDB
// version knows (the variable is tx_isolation on MariaDB 10.11,
// transaction_isolation on MySQL 8 and MariaDB 11.1+).
func txnFragment(name, value string) string {
	v := strings.ToUpper(strings.Trim(value, "'\""))
	if name == sqlclass.NameTxReadOnly {
		if v == "ON" || v == "1" || v == "TRUE" {
			return "SESSION TRANSACTION READ ONLY"
		}
		return "SESSION TRANSACTION READ WRITE"
	}
	return "SESSION TRANSACTION ISOLATION LEVEL " + strings.ReplaceAll(v, "-", " ")
}

// errFreshConn: the connection carries state this session cannot undo
// cheaply; the caller closes it and takes another.
const errFreshConn = protoErr("the connection carries session state this session cannot undo")

// restoreDefaults sets the variables c carries and this session never
// set back to their defaults (SET @@session.x = DEFAULT), so the session
// sees the server's defaults as on a new connection. It never uses
// COM_RESET_CONNECTION, which breaks causal reads on MariaDB Galera (see
// backend.Pool.Put). A connection whose character set another session
// chose is not worth repairing (its default comes from the handshake,
// not from a global): errFreshConn.
func (s *session) restoreDefaults(c *backend.Conn) error {
	var set []string
	keep := c.VarOrder[:0:0]
	for _, name := range c.VarOrder {
		if _, ok := s.vars[name]; ok {
			keep = append(keep, name)
			continue
		}
		if charsetVar(name) {
			return errFreshConn
		}
		set = append(set, "@@session."+quoteVarName(name)+" = DEFAULT")
	}
	if err := c.Query("SET " + strings.Join(set, ", ")); err != nil {
		if !c.Broken() {
			return errFreshConn // a variable that has no DEFAULT: start afresh
		}
		return err
	}
	for name := range c.Vars {
		if _, ok := s.vars[name]; !ok {
			delete(c.Vars, name)
		}
	}
	c.VarOrder = keep
	return nil
}

// varsCover: every variable on c is one the session sets too.
func (s *session) varsCover(c *backend.Conn) bool {
	for name := range c.Vars {
		if _, ok := s.vars[name]; !ok {
			return false
		}
	}
	return true
}

// recordSet remembers the session-scope assignments of a SET that
// succeeded on c, as fragments that give another connection the same
// values (see the top of this file). It returns why the session cannot
// be replayed and must stay on c, or "". A change of a node's globals is
// reported to the pool, so new sessions start from the new values.
func (s *session) recordSet(as []sqlclass.Assignment, c *backend.Conn) (pinWhy string) {
	var readBack []string
	for _, a := range as {
		var frag string
		switch a.Scope {
		case sqlclass.ScopeSession:
		case sqlclass.ScopeNextTxn:
			s.nextTxnHold = true
			continue
		case sqlclass.ScopeUser:
			pinWhy = "user variables"
			continue
		default: // GLOBAL/PERSIST change the node, not the session
			c.Pool().GlobalsChanged()
			continue
		}
		// The statement text is a view of the client's read buffer: copy
		// what the session keeps.
		name := strings.Clone(a.Name)
		switch {
		case name == sqlclass.NameNames:
			frag = "NAMES " + a.Value
			if a.Collate != "" {
				frag += " COLLATE " + a.Collate
			}
			// NAMES sets all of these: earlier values are gone.
			s.forgetVars(c, sqlclass.NameCharset, "character_set_client", "character_set_connection",
				"character_set_results", "collation_connection")
		case name == sqlclass.NameCharset:
			frag = "CHARACTER SET " + a.Value
			s.forgetVars(c, "character_set_client", "character_set_connection", "character_set_results", "collation_connection")
		case (name == sqlclass.NameTxIsolation || name == sqlclass.NameTxReadOnly) && sqlclass.ConstantValue(a.Value):
			frag = txnFragment(name, a.Value)
		case sqlclass.ConstantValue(a.Value):
			frag = "@@session." + quoteVarName(name) + " = " + a.Value
		case name == "timestamp" && sqlclass.IsDefault(a.Value):
			// DEFAULT unfreezes the clock; its value read back would
			// freeze it again.
			frag = "@@session.timestamp = DEFAULT"
		case sqlclass.UnreadableVar(name):
			pinWhy = "SET " + name + " from an expression"
			continue
		default:
			readBack = append(readBack, name)
			s.setVar(c, name, "") // placed now, in order; filled below
			continue
		}
		s.setVar(c, name, strings.Clone(frag))
	}
	if len(readBack) == 0 {
		return pinWhy
	}
	if why := s.readBack(c, readBack); why != "" {
		return why
	}
	return pinWhy
}

// setVar records a session variable's fragment, on the session and as
// applied on c.
func (s *session) setVar(c *backend.Conn, name, frag string) {
	if _, ok := s.vars[name]; !ok {
		s.varOrder = append(s.varOrder, name)
	}
	s.vars[name] = frag
	if _, ok := c.Vars[name]; !ok {
		c.VarOrder = append(c.VarOrder, name)
	}
	c.Vars[name] = frag
}

// forgetVars drops variables a SET NAMES or CHARACTER SET overrode, from
// the session and from c (which ran it).
func (s *session) forgetVars(c *backend.Conn, names ...string) {
	for _, name := range names {
		if _, ok := s.vars[name]; ok {
			delete(s.vars, name)
			s.varOrder = removeName(s.varOrder, name)
		}
		if _, ok := c.Vars[name]; ok {
			delete(c.Vars, name)
			c.VarOrder = removeName(c.VarOrder, name)
		}
	}
}

func removeName(names []string, name string) []string {
	for i, n := range names {
		if n == name {
			return append(names[:i], names[i+1:]...)
		}
	}
	return names
}

// readBack reads the values names now hold on c and records them as
// literal fragments. If they cannot be read, the session is pinned to c
// (the returned reason), where they are right.
func (s *session) readBack(c *backend.Conn, names []string) (pinWhy string) {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = "@@session." + quoteVarName(n)
	}
	row, err := c.QueryRow("SELECT " + strings.Join(q, ", "))
	if err != nil || len(row) != len(names) {
		for _, n := range names {
			s.forgetVars(c, n)
		}
		return "SET of a variable galeon could not read back"
	}
	for i, n := range names {
		s.setVar(c, n, "@@session."+quoteVarName(n)+" = "+sqlLiteral(row[i]))
	}
	return ""
}

// quoteVarName quotes a variable name for @@session.`name`.
func quoteVarName(name string) string {
	if strings.IndexFunc(name, func(r rune) bool {
		return !(r == '_' || r == '.' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9')
	}) < 0 {
		return name
	}
	return "`" + strings.ReplaceAll(name, "`", "``") + "`"
}

// sqlLiteral writes a value read back as a literal that every sql_mode
// reads the same way: numbers bare, strings in single quotes (quotes
// doubled), strings with a backslash as hex (NO_BACKSLASH_ESCAPES would
// read the backslash differently).
func sqlLiteral(v backend.Value) string {
	switch {
	case v.Null:
		return "NULL"
	case v.Numeric:
		return v.Text
	case strings.Contains(v.Text, `\`):
		return "X'" + hex.EncodeToString([]byte(v.Text)) + "'"
	}
	return "'" + strings.ReplaceAll(v.Text, "'", "''") + "'"
}
