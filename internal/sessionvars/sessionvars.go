// Package sessionvars decides how a session variable a client set on one
// pooled connection is given to another: by value, never by the text of
// the client's SET. "SET sql_mode=CONCAT(@@sql_mode, ',ANSI_QUOTES')"
// means something else on a connection whose sql_mode differs, and
// "SET timestamp=UNIX_TIMESTAMP('2011-01-01 01:01:01')" depends on the
// time zone. A SET whose value is a constant (sqlclass.ConstantValue) is
// kept as written; any other is read back from the connection that ran it
// (SELECT @@session.x) and kept as the literal it produced.
//
// Fragments are replayed in an order that cannot change their meaning
// (Group): the character set first (it decides how the schema name and
// every string literal after it are read), then the schema, then the
// transaction characteristics in their own SET form, then everything else
// in one SET of literals.
package sessionvars

import (
	"encoding/hex"
	"strings"

	"github.com/galeon-db/galeon/internal/backend"
	"github.com/galeon-db/galeon/internal/sqlclass"
)

// Group is the order variables are replayed in.
type Group uint8

const (
	Charset Group = iota // before the schema
	Txn                  // SET SESSION TRANSACTION ..., one statement each
	Other                // one SET of literals
)

// IsCharset says whether name decides how the connection reads and sends
// text (replayed before the schema and the other variables).
func IsCharset(name string) bool {
	switch name {
	case sqlclass.NameNames, sqlclass.NameCharset, "character_set_client", "character_set_connection",
		"character_set_results", "collation_connection":
		return true
	}
	return false
}

// GroupOf is name's replay group.
func GroupOf(name string) Group {
	switch {
	case IsCharset(name):
		return Charset
	case name == sqlclass.NameTxIsolation || name == sqlclass.NameTxReadOnly:
		return Txn
	}
	return Other
}

// Keep says how an assignment is kept.
type Keep uint8

const (
	// AsWritten: the fragment carries the value.
	AsWritten Keep = iota
	// ReadBack: the value must be read from the connection that ran the
	// SET (ReadBackFragment).
	ReadBack
	// Pin: it cannot be replayed; the session stays on its connection.
	Pin
)

// Fragment decides how a session-scope assignment is kept: as a SET
// fragment that gives another connection the same value, read back, or
// not at all (pin, with the reason).
func Fragment(a sqlclass.Assignment) (frag string, keep Keep, why string) {
	name := a.Name
	switch {
	case name == sqlclass.NameNames:
		frag = "NAMES " + a.Value
		if a.Collate != "" {
			frag += " COLLATE " + a.Collate
		}
	case name == sqlclass.NameCharset:
		frag = "CHARACTER SET " + a.Value
	case (name == sqlclass.NameTxIsolation || name == sqlclass.NameTxReadOnly) && sqlclass.ConstantValue(a.Value):
		frag = TxnFragment(name, a.Value)
	case sqlclass.ConstantValue(a.Value):
		frag = "@@session." + QuoteName(name) + " = " + a.Value
	case name == "timestamp" && sqlclass.IsDefault(a.Value):
		// DEFAULT unfreezes the clock; its value read back would freeze
		// it again.
		frag = "@@session.timestamp = DEFAULT"
	case sqlclass.UnreadableVar(name):
		return "", Pin, "SET " + name + " from an expression"
	default:
		return "", ReadBack, ""
	}
	return frag, AsWritten, ""
}

// Overrides lists the variables an assignment to name replaces: SET
// NAMES sets all of the character set variables, SET CHARACTER SET all
// but one; earlier values of them are gone.
func Overrides(name string) []string {
	switch name {
	case sqlclass.NameNames:
		return []string{sqlclass.NameCharset, "character_set_client", "character_set_connection", "character_set_results", "collation_connection"}
	case sqlclass.NameCharset:
		return []string{"character_set_client", "character_set_connection", "character_set_results", "collation_connection"}
	}
	return nil
}

// ReadBackFragment is the fragment for name's value v, read back.
func ReadBackFragment(name string, v backend.Value) string {
	return "@@session." + QuoteName(name) + " = " + Literal(v)
}

// DefaultFragment sets name back to the server's default.
func DefaultFragment(name string) string {
	return "@@session." + QuoteName(name) + " = DEFAULT"
}

// ReadExpr is the expression that reads name's session value.
func ReadExpr(name string) string { return "@@session." + QuoteName(name) }

// TxnFragment replays SET SESSION TRANSACTION ISOLATION LEVEL / READ
// ONLY|WRITE in that statement's own form, which every MySQL and MariaDB
// version knows (the variable is tx_isolation on MariaDB 10.11,
// transaction_isolation on MySQL 8 and MariaDB 11.1+).
func TxnFragment(name, value string) string {
	v := strings.ToUpper(strings.Trim(value, "'\""))
	if name == sqlclass.NameTxReadOnly {
		if v == "ON" || v == "1" || v == "TRUE" {
			return "SESSION TRANSACTION READ ONLY"
		}
		return "SESSION TRANSACTION READ WRITE"
	}
	return "SESSION TRANSACTION ISOLATION LEVEL " + strings.ReplaceAll(v, "-", " ")
}

// QuoteName quotes a variable name for @@session.`name`.
func QuoteName(name string) string {
	if strings.IndexFunc(name, func(r rune) bool {
		return !(r == '_' || r == '.' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9')
	}) < 0 {
		return name
	}
	return "`" + strings.ReplaceAll(name, "`", "``") + "`"
}

// Literal writes a value read back as a literal that every sql_mode reads
// the same way: numbers bare, strings in single quotes (quotes doubled),
// strings with a backslash as hex (NO_BACKSLASH_ESCAPES would read the
// backslash differently).
func Literal(v backend.Value) string {
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
