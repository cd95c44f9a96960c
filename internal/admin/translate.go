package admin

import (
	"slices"
	"strings"
	"time"

	"github.com/galeon-db/galeon/internal/mysqlproto"
)

// Operators type MySQL, and their clients and drivers send MySQL on
// their own (SELECT @@version_comment, SET NAMES, SHOW TABLES); the
// statements are evaluated by SQLite. This file is the seam between the
// two: it splits a query into statements with MySQL's lexical rules and
// rewrites what SQLite would read differently, token by token, keeping
// the text between tokens so result columns are named as written:
//
//   - @@variables and the session functions clients call (DATABASE(),
//     USER(), CONNECTION_ID(), VERSION(), NOW()) become literals;
//   - strings use SQLite's quoting (MySQL's backslash escapes are
//     resolved, "double-quoted" text is a string as in MySQL, not an
//     identifier as in SQLite);
//   - comments are dropped, so SQLite reads exactly the tokens that were
//     split here and no ';' hides inside something SQLite parses
//     differently;
//   - <=> becomes IS, && AND and a lone ! NOT.
//
// Everything else (SELECT, joins, aggregates, UPDATE ... FROM, INSERT ...
// SELECT) is SQLite's dialect, which ProxySQL's admin interface also
// speaks and its users know.

// statement is one statement of a query.
type statement struct {
	toks []token // without the terminating ';'
	src  string  // the statement as written, for the audit log
	// sql is the statement rewritten for SQLite.
	sql string
}

// firstWord returns the statement's first keyword in upper case, or "".
func (s *statement) firstWord() string {
	if len(s.toks) == 0 || s.toks[0].kind != tokWord {
		return ""
	}
	return strings.ToUpper(s.toks[0].text)
}

// splitQuery lexes q and returns its statements; empty statements (a
// trailing ';') are dropped. A query without any statement is error 1065.
func splitQuery(q string) ([]*statement, error) {
	toks, err := lex(q)
	if err != nil {
		return nil, err
	}
	var out []*statement
	start := 0
	for i, t := range toks {
		if t.kind == tokEOF || t.kind == tokPunct && t.text == ";" {
			if i > start {
				out = append(out, &statement{toks: toks[start:i], src: q[toks[start].pos:toks[i-1].end]})
			}
			start = i + 1
		}
	}
	if len(out) == 0 {
		return nil, sqlErr(erEmptyQuery, "Query was empty")
	}
	return out, nil
}

// sessionFuncs are the functions without arguments that clients call to
// learn where they are; they become literals, since their values belong
// to the admin session and not to SQLite.
var sessionFuncs = map[string]bool{
	"database": true, "schema": true, "user": true, "current_user": true, "session_user": true,
	"system_user": true, "connection_id": true, "version": true, "now": true, "sysdate": true,
	"localtime": true, "localtimestamp": true, "unix_timestamp": true, "last_insert_id": true,
	"row_count": true, "found_rows": true, "current_timestamp": true,
}

// sessionFunc returns the value of a session function.
func (en *env) sessionFunc(name string) any {
	switch name {
	case "database", "schema":
		if en.sess.db == "" {
			return nil
		}
		return en.sess.db
	case "user", "current_user", "session_user", "system_user":
		return en.sess.user + "@" + en.sess.host
	case "connection_id":
		return int64(en.sess.connID)
	case "version":
		return en.eng.version
	case "now", "sysdate", "localtime", "localtimestamp", "current_timestamp":
		return time.Now().Format(time.DateTime)
	case "unix_timestamp":
		return time.Now().Unix()
	}
	return int64(0) // last_insert_id, row_count, found_rows: nothing to report
}

// rewrite fills st.sql from st.toks for the session in en.
func (en *env) rewrite(st *statement, q string) error {
	var b strings.Builder
	sel := selectList{}
	prevEnd := -1
	toks := st.toks
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		if prevEnd >= 0 {
			gap := q[prevEnd:t.pos]
			if strings.TrimSpace(gap) != "" || strings.ContainsAny(gap, "\x00") {
				gap = " " // a comment
			}
			if gap == "" && joinsIntoComment(b.String(), q[t.pos:t.end]) {
				gap = " " // "5--1" is 5 - -1 in MySQL, a comment in SQLite
			}
			b.WriteString(gap)
		}
		prevEnd = t.end
		sel.see(toks, i)
		switch t.kind {
		case tokString:
			if strings.IndexByte(t.text, 0) >= 0 {
				return sqlErr(mysqlproto.ErNotSupportedYet, "a string with a NUL byte (\\0) near %s is not supported on the admin interface", q[t.pos:t.end])
			}
			b.WriteString(quoteString(t.text))
		case tokSysVar:
			name := t.text
			for _, scope := range []string{"session.", "global.", "local."} {
				name = strings.TrimPrefix(name, scope)
			}
			v, ok := en.sysVars()[name]
			if !ok {
				return sqlErr(erUnknownSystemVariable, "Unknown system variable '%s'", name)
			}
			b.WriteString(sel.named(toks, i, i, literal(v), q[t.pos:t.end]))
		case tokUserVar:
			return sqlErr(mysqlproto.ErNotSupportedYet, "user variables (%s) are not supported on the admin interface", q[t.pos:t.end])
		case tokWord:
			name := strings.ToLower(t.text)
			if sessionFuncs[name] && i+2 < len(toks) && isPunct(toks[i+1], "(") && isPunct(toks[i+2], ")") {
				b.WriteString(sel.named(toks, i, i+2, literal(en.sessionFunc(name)), q[t.pos:toks[i+2].end]))
				i += 2
				prevEnd = toks[i].end
				continue
			}
			if strings.ContainsRune(t.text, '$') {
				// MySQL allows $ in names; SQLite reads $x as a parameter.
				b.WriteString("`" + t.text + "`")
				continue
			}
			b.WriteString(t.text)
		case tokPunct:
			switch t.text {
			case "<=>":
				b.WriteString("IS")
			case "&&":
				b.WriteString("AND")
			case "!":
				b.WriteString("NOT ")
			case "?":
				return sqlErr(erUnsupportedPS, "placeholders (?) need prepared statements, which the admin interface does not support: write the values into the query")
			default:
				b.WriteString(t.text)
			}
		default: // words in backticks, numbers: SQLite reads them as MySQL does
			b.WriteString(q[t.pos:t.end])
		}
	}
	st.sql = b.String()
	return nil
}

// joinsIntoComment reports whether writing next right after out would
// start or end an SQLite comment that MySQL's lexer did not see.
func joinsIntoComment(out, next string) bool {
	if out == "" || next == "" {
		return false
	}
	pair := out[len(out)-1:] + next[:1]
	return pair == "--" || pair == "/*" || pair == "*/"
}

// selectList follows SELECT lists through a statement, so a variable or
// session function that is a whole select-list item is given its name as
// written (SELECT @@version_comment names its column @@version_comment,
// as MySQL does, not by the value put in its place).
type selectList struct {
	depth int
	open  map[int]bool // depth -> inside a SELECT list at that depth
}

// listEnd are the words that end a select list.
var listEnd = []string{"FROM", "WHERE", "GROUP", "HAVING", "ORDER", "LIMIT", "UNION", "EXCEPT", "INTERSECT", "WINDOW", "INTO"}

// see updates the state with token i.
func (s *selectList) see(toks []token, i int) {
	if s.open == nil {
		s.open = map[int]bool{}
	}
	t := toks[i]
	switch {
	case isPunct(t, "("):
		s.depth++
	case isPunct(t, ")"):
		delete(s.open, s.depth)
		s.depth--
	case isKw(t, "select"):
		s.open[s.depth] = true
	case t.kind == tokWord && slices.Contains(listEnd, strings.ToUpper(t.text)):
		delete(s.open, s.depth)
	}
}

// named returns lit, with AS "orig" when tokens first..last are a whole
// select-list item without an alias of its own.
func (s *selectList) named(toks []token, first, last int, lit, orig string) string {
	if s.depth != 0 || !s.open[0] || first == 0 {
		return lit // a subquery's column names are not seen
	}
	prev := toks[first-1]
	if !isKw(prev, "select") && !isPunct(prev, ",") && !isKw(prev, "distinct") && !isKw(prev, "all") {
		return lit
	}
	if last+1 < len(toks) {
		next := toks[last+1]
		if !isPunct(next, ",") && !isPunct(next, ")") && !(next.kind == tokWord && slices.Contains(listEnd, strings.ToUpper(next.text))) {
			return lit // an expression (@@x + 1) or an alias of its own
		}
	}
	return lit + " AS " + quoteIdent(orig)
}

// literal renders a canonical value as an SQLite literal.
func literal(v any) string {
	switch x := v.(type) {
	case nil:
		return "NULL"
	case string:
		return quoteString(x)
	}
	s, _ := formatValue(v)
	return s
}

// quoteString quotes s for SQLite, where only ' needs escaping (doubled).
func quoteString(s string) string {
	return "'" + strings.ReplaceAll(s, "'", "''") + "'"
}

// quoteIdent quotes a name for SQLite.
func quoteIdent(s string) string {
	return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
}

func isPunct(t token, p string) bool { return t.kind == tokPunct && t.text == p }

func isKw(t token, kw string) bool { return t.kind == tokWord && strings.EqualFold(t.text, kw) }
