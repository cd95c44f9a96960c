package proxy

import (
	"errors"
	"strings"

	"github.com/galeon-db/galeon/internal/backend"
	"github.com/galeon-db/galeon/internal/mysqlproto"
	"github.com/galeon-db/galeon/internal/sessionvars"
	"github.com/galeon-db/galeon/internal/sqlclass"
)

// A session's variables are kept as SET fragments that give a connection
// the value the session holds, by value (package sessionvars), and
// replayed by sync in sessionvars' order: character set, schema,
// transaction characteristics, everything else.

// errBadDB is ER_BAD_DB_ERROR (1049), unknown database.
const errBadDB = mysqlproto.ErrorCode(1049)

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
	if err := s.syncVars(c, sessionvars.Charset); err != nil {
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
	if err := s.syncVars(c, sessionvars.Txn); err != nil {
		return err
	}
	return s.syncVars(c, sessionvars.Other)
}

// syncVars sends the session's variables of group g that c does not
// carry yet: in one SET, or for the transaction characteristics (which
// have their own SET form) one SET each.
func (s *session) syncVars(c *backend.Conn, g sessionvars.Group) error {
	var set []string
	for _, name := range s.varOrder {
		if sessionvars.GroupOf(name) == g && c.Vars[name] != s.vars[name] {
			set = append(set, s.vars[name])
		}
	}
	if len(set) == 0 {
		return nil
	}
	stmts := []string{"SET " + strings.Join(set, ", ")}
	if g == sessionvars.Txn {
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
		if sessionvars.GroupOf(name) != g {
			continue
		}
		if _, ok := c.Vars[name]; !ok {
			c.VarOrder = append(c.VarOrder, name)
		}
		c.Vars[name] = s.vars[name]
	}
	return nil
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
		if sessionvars.IsCharset(name) {
			return errFreshConn
		}
		set = append(set, sessionvars.DefaultFragment(name))
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
		switch a.Scope {
		case sqlclass.ScopeSession:
		case sqlclass.ScopeNextTxn:
			s.hold.nextTxn = true
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
		s.forgetVars(c, sessionvars.Overrides(name)...)
		frag, keep, why := sessionvars.Fragment(a)
		switch keep {
		case sessionvars.Pin:
			pinWhy = why
			continue
		case sessionvars.ReadBack:
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
		q[i] = sessionvars.ReadExpr(n)
	}
	row, err := c.QueryRow("SELECT " + strings.Join(q, ", "))
	if err != nil || len(row) != len(names) {
		for _, n := range names {
			s.forgetVars(c, n)
		}
		return "SET of a variable galeon could not read back"
	}
	for i, n := range names {
		s.setVar(c, n, sessionvars.ReadBackFragment(n, row[i]))
	}
	return ""
}
