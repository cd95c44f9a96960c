package sqlclass

import "strings"

// ConstantValue reports whether a SET value, as written, means the same on
// every connection: a single literal whose reading depends on no session
// state. Such a value can be replayed as written on another connection.
// Anything else — an expression (CONCAT(@@sql_mode, ...)), a variable,
// DEFAULT (the global value at the time of the SET), a string with an
// introducer or a backslash (read under the session's sql_mode and
// character set) — must be replayed as the value it produced, which the
// proxy reads back from the connection that ran the SET.
func ConstantValue(v string) bool {
	t := NewTokenizer(v)
	tok := t.Next()
	if t.Next().Kind != TokEOF {
		return false
	}
	text := tok.Text(v)
	switch tok.Kind {
	case TokNumber:
		return true
	case TokString:
		// "..." is an identifier under ANSI_QUOTES; N'...' and
		// backslash escapes depend on the session.
		return text[0] == '\'' && !strings.Contains(text, `\`)
	case TokWord:
		return !evaluatedWord(text)
	}
	return false
}

// evaluatedWord: bare words a SET value evaluates rather than takes as a
// name (DEFAULT is the global value; the others are the clock or the
// account).
func evaluatedWord(w string) bool {
	switch {
	case eqFold(w, "DEFAULT"), eqFold(w, "CURRENT_TIMESTAMP"), eqFold(w, "CURRENT_DATE"),
		eqFold(w, "CURRENT_TIME"), eqFold(w, "LOCALTIME"), eqFold(w, "LOCALTIMESTAMP"),
		eqFold(w, "CURRENT_USER"), eqFold(w, "CURRENT_ROLE"), eqFold(w, "UTC_TIMESTAMP"),
		eqFold(w, "UTC_DATE"), eqFold(w, "UTC_TIME"):
		return true
	}
	return false
}

// IsDefault reports whether a SET value is the keyword DEFAULT.
func IsDefault(v string) bool {
	t := NewTokenizer(v)
	tok := t.Next()
	return tok.Kind == TokWord && eqFold(tok.Text(v), "DEFAULT") && t.Next().Kind == TokEOF
}

// UnreadableVar reports session variables whose value cannot be read back
// as what a SET gave them: they are consumed by the next statement
// (insert_id), read as something else (rand_seed1 and rand_seed2 read 0),
// or are LAST_INSERT_ID() in disguise. A session that sets them from an
// expression is pinned to its connection instead.
func UnreadableVar(name string) bool {
	switch {
	case eqFold(name, "INSERT_ID"), eqFold(name, "RAND_SEED1"), eqFold(name, "RAND_SEED2"),
		eqFold(name, "LAST_INSERT_ID"), eqFold(name, "IDENTITY"):
		return true
	}
	return false
}
