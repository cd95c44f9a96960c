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
		// The connection carries variables this session never set: reset
		// it to defaults rather than guess each variable's default.
		if err := c.SimpleCommand([]byte{byte(mysqlproto.ComResetConnection)}); err != nil {
			return err
		}
		c.Vars = map[string]string{}
		c.VarOrder = c.VarOrder[:0]
		c.LastInsertID = 0
		c.Stmts = map[string]*backend.Stmt{}
		c.MultiStatements = c.Caps.Has(mysqlproto.ClientMultiStatements)
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
