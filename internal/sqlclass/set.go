package sqlclass

import (
	"fmt"
	"strings"
)

// Scope says which variables an Assignment changes.
type Scope uint8

// Assignment scopes. LOCAL and @@local. are Session.
const (
	ScopeSession     Scope = iota // SESSION, LOCAL, @@session., @@, or no modifier
	ScopeGlobal                   // GLOBAL, @@global.
	ScopePersist                  // PERSIST, @@persist.
	ScopePersistOnly              // PERSIST_ONLY, @@persist_only.
	ScopeUser                     // @user_variable
	ScopeNextTxn                  // SET TRANSACTION without scope, SET @@transaction_isolation: next transaction only
)

func (s Scope) String() string {
	switch s {
	case ScopeSession:
		return "session"
	case ScopeGlobal:
		return "global"
	case ScopePersist:
		return "persist"
	case ScopePersistOnly:
		return "persist_only"
	case ScopeUser:
		return "user"
	case ScopeNextTxn:
		return "next_transaction"
	}
	return "Scope(?)"
}

// Names used by Assignment for the SET forms that are not plain variable
// assignments.
const (
	// NameNames is SET NAMES cs [COLLATE coll]: Value is cs, Collate coll.
	NameNames = "names"
	// NameCharset is SET CHARACTER SET cs and SET CHARSET cs.
	NameCharset = "charset"
	// NameTxIsolation is SET ... TRANSACTION ISOLATION LEVEL; Value is the
	// quoted variable form, e.g. 'READ-COMMITTED'.
	NameTxIsolation = "transaction_isolation"
	// NameTxReadOnly is SET ... TRANSACTION READ ONLY|WRITE; Value is ON
	// or OFF.
	NameTxReadOnly = "transaction_read_only"
)

// Assignment is one variable assignment of a SET statement.
//
// Name is lower case with quotes, the @ of user variables and @@scope.
// prefixes removed. Value is the expression text exactly as written
// (trimmed), so that the proxy can replay it on another backend connection
// as SET <scope> <name> = <value>. System-variable aliases are not mapped
// (tx_isolation stays tx_isolation), because which spelling a backend
// accepts depends on its version.
type Assignment struct {
	Scope   Scope
	Name    string
	Value   string
	Collate string // SET NAMES ... COLLATE only
}

// SetError reports a SET statement ParseSet cannot turn into assignments.
// The proxy should then pin the session rather than guess its state.
type SetError struct {
	Offset int    // byte offset in the statement
	Reason string // what was expected or is unsupported
}

func (e *SetError) Error() string {
	return fmt.Sprintf("sqlclass: SET statement at offset %d: %s", e.Offset, e.Reason)
}

// ParseSet parses a SET statement into its assignments, covering variable
// assignments in all scopes (SET x=1, SET SESSION x=1, y=2, SET @@x:=1,
// SET @u=1, SET LOCAL ..., SET GLOBAL ...), SET NAMES, SET CHARACTER SET /
// CHARSET and SET [GLOBAL|SESSION] TRANSACTION. As in MySQL, a GLOBAL,
// SESSION, LOCAL, PERSIST or PERSIST_ONLY keyword carries over to following
// system variables that have no modifier of their own.
//
// SET PASSWORD, SET ROLE, SET DEFAULT ROLE, SET RESOURCE GROUP, MariaDB's
// SET STATEMENT ... FOR, a missing or unbalanced value, and text after the
// statement are errors.
func ParseSet(sql string) ([]Assignment, error) {
	t := NewTokenizer(sql)
	tok := t.Next()
	if !isWord(sql, tok, "SET") {
		return nil, &SetError{Offset: tok.Start, Reason: "not a SET statement"}
	}
	var out []Assignment
	err := parseSetBody(&t, func(a rawAssign) {
		out = append(out, Assignment{
			Scope:   a.scope,
			Name:    normalizeName(a.name, a.quote),
			Value:   a.value,
			Collate: a.collate,
		})
	})
	if err != nil {
		return nil, err
	}
	for {
		switch tok := t.Next(); {
		case tok.Kind == TokEOF:
			return out, nil
		case !tok.is(sql, ";"):
			return nil, &SetError{Offset: tok.Start, Reason: "text after the SET statement"}
		}
	}
}

// Autocommit reports the session autocommit value the assignments leave
// behind: the last session-scope assignment to autocommit wins. ok is false
// when autocommit is not assigned or its value is not a constant this
// package can read (an expression, a variable, DEFAULT).
func Autocommit(as []Assignment) (value bool, ok bool) {
	for i := len(as) - 1; i >= 0; i-- {
		if a := as[i]; a.Scope == ScopeSession && a.Name == "autocommit" {
			return boolValue(a.Value)
		}
	}
	return false, false
}

// boolValue reads a boolean system-variable value: 1/0, ON/OFF,
// TRUE/FALSE, optionally quoted.
func boolValue(v string) (value bool, ok bool) {
	if len(v) >= 2 && (v[0] == '\'' || v[0] == '"') && v[len(v)-1] == v[0] {
		v = v[1 : len(v)-1]
	}
	switch {
	case v == "1", eqFold(v, "ON"), eqFold(v, "TRUE"):
		return true, true
	case v == "0", eqFold(v, "OFF"), eqFold(v, "FALSE"):
		return false, true
	}
	return false, false
}

// normalizeName lower-cases a variable name and, if it was quoted with q,
// undoes the quote's escapes.
func normalizeName(name string, q byte) string {
	if q != 0 {
		var b strings.Builder
		for i := 0; i < len(name); i++ {
			c := name[i]
			if (c == q || (c == '\\' && q != '`')) && i+1 < len(name) {
				i++
				c = name[i]
			}
			b.WriteByte(c)
		}
		name = b.String()
	}
	return strings.ToLower(name)
}
