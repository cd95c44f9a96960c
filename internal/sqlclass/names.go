package sqlclass

import "strings"

// NamesAny reports whether q names any of names (lower-case) as an
// identifier: a bare word or a `quoted` one, outside strings and
// comments, compared without case. It does not parse: a column or alias
// spelled like one of the names counts too, which is the safe side for
// its use (sending a read to the writer when it may touch a table only
// the writer holds the rows of).
func NamesAny(q string, names map[string]bool) bool {
	if len(names) == 0 {
		return false
	}
	t := NewTokenizer(q)
	for {
		tok := t.Next()
		switch tok.Kind {
		case TokEOF:
			return false
		case TokWord:
			if names[strings.ToLower(tok.Text(q))] {
				return true
			}
		case TokQuotedIdent:
			if name, _, ok := unquoteName(tok.Text(q)); ok && names[strings.ToLower(strings.ReplaceAll(name, "``", "`"))] {
				return true
			}
		}
	}
}
