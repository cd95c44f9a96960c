package proxy

import (
	"strings"

	"github.com/galeon-db/galeon/internal/backend"
	"github.com/galeon-db/galeon/internal/mysqlproto"
	"github.com/galeon-db/galeon/internal/sqlclass"
)

// sync makes a backend connection carry the session's replayable state:
// schema, COM_SET_OPTION multi-statements, and session variables. Only the
// difference is sent, usually nothing at all.
func (s *session) sync(c *backend.Conn) error {
	if len(c.Vars) > 0 && !s.varsCover(c) {
		if err := s.restoreDefaults(c); err != nil {
			return err
		}
	}
	if s.schema != "" && c.Schema != s.schema {
		if err := c.SimpleCommand(append([]byte{byte(mysqlproto.ComInitDB)}, s.schema...)); err != nil {
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
	if len(s.varOrder) == 0 {
		return nil
	}
	var set []string
	for _, name := range s.varOrder {
		if c.Vars[name] != s.vars[name] {
			set = append(set, s.vars[name])
		}
	}
	if len(set) == 0 {
		return nil
	}
	if err := c.Query("SET " + strings.Join(set, ", ")); err != nil {
		return err
	}
	for _, name := range s.varOrder {
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
// chose (SET NAMES) is not worth repairing: errFreshConn.
func (s *session) restoreDefaults(c *backend.Conn) error {
	var set []string
	keep := c.VarOrder[:0:0]
	for _, name := range c.VarOrder {
		if _, ok := s.vars[name]; ok {
			keep = append(keep, name)
			continue
		}
		if name == sqlclass.NameNames || name == sqlclass.NameCharset {
			return errFreshConn
		}
		set = append(set, "@@session."+name+" = DEFAULT")
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
// succeeded, as fragments that replay it on another connection. It
// returns false if the SET holds something that cannot be replayed.
func (s *session) recordSet(as []sqlclass.Assignment, c *backend.Conn) (replayable bool) {
	replayable = true
	for _, a := range as {
		// The statement text is a view of the client's read buffer: copy
		// what the session keeps.
		a.Name, a.Value, a.Collate = strings.Clone(a.Name), strings.Clone(a.Value), strings.Clone(a.Collate)
		var frag string
		switch a.Scope {
		case sqlclass.ScopeSession:
			switch a.Name {
			case sqlclass.NameNames:
				frag = "NAMES " + a.Value
				if a.Collate != "" {
					frag += " COLLATE " + a.Collate
				}
			case sqlclass.NameCharset:
				frag = "CHARACTER SET " + a.Value
			default:
				frag = "@@session." + a.Name + " = " + a.Value
			}
		case sqlclass.ScopeNextTxn:
			s.nextTxnHold = true
			continue
		case sqlclass.ScopeUser:
			replayable = false
			continue
		default: // GLOBAL/PERSIST change the node, not the session
			continue
		}
		if _, ok := s.vars[a.Name]; !ok {
			s.varOrder = append(s.varOrder, a.Name)
		}
		s.vars[a.Name] = frag
		if c != nil {
			if _, ok := c.Vars[a.Name]; !ok {
				c.VarOrder = append(c.VarOrder, a.Name)
			}
			c.Vars[a.Name] = frag
		}
	}
	return replayable
}
