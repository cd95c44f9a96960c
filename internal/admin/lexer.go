package admin

import (
	"strings"
	"unicode/utf8"
)

// tokenKind classifies a token of the admin SQL dialect.
type tokenKind uint8

const (
	tokEOF     tokenKind = iota
	tokWord              // unquoted identifier or keyword
	tokQuoted            // `quoted identifier`
	tokString            // 'string' or "string", escapes resolved
	tokNumber            // 12, 1.5, .5, 1e3
	tokSysVar            // @@name or @@session.name; text is the lower-case name
	tokUserVar           // @name; recognised only to refuse it clearly
	tokPunct             // ( ) , ; * . = < > <= >= <> != + - ?
)

// token is one lexeme. text is the identifier, the unescaped string, the
// number as written, or the punctuation; pos and end delimit the source so
// errors can quote it and select lists can name columns as written.
type token struct {
	kind     tokenKind
	text     string
	pos, end int
}

// lex splits src into tokens, ending with a tokEOF. Comments (-- , #,
// /* */) are skipped; the contents of MySQL executable comments /*! ... */
// and MariaDB's /*M! ... */ are lexed as ordinary text, since client tools
// and dumps wrap SET statements in them.
func lex(src string) ([]token, error) {
	var toks []token
	inExec := false // inside /*! ... */: its closing */ is skipped
	i := 0
	for {
		i = skipSpace(src, i)
		if i >= len(src) {
			if inExec {
				return nil, syntaxErrAt(src, len(src), "*/ to close the comment")
			}
			toks = append(toks, token{kind: tokEOF, pos: len(src), end: len(src)})
			return toks, nil
		}
		start := i
		c := src[i]
		switch {
		case c == '#' || strings.HasPrefix(src[i:], "--") && (i+2 == len(src) || src[i+2] <= ' '):
			for i < len(src) && src[i] != '\n' {
				i++
			}
			continue
		case strings.HasPrefix(src[i:], "/*!") || strings.HasPrefix(src[i:], "/*M!"):
			if inExec {
				return nil, syntaxErrAt(src, i, "*/ before a nested comment")
			}
			i += 3
			if src[i-1] == 'M' {
				i++
			}
			for i < len(src) && src[i] >= '0' && src[i] <= '9' {
				i++
			}
			inExec = true
			continue
		case strings.HasPrefix(src[i:], "/*"):
			end := strings.Index(src[i+2:], "*/")
			if end < 0 {
				return nil, syntaxErrAt(src, i, "*/ to close the comment")
			}
			i += 2 + end + 2
			continue
		case inExec && strings.HasPrefix(src[i:], "*/"):
			inExec = false
			i += 2
			continue
		case c == '\'' || c == '"':
			s, n, ok := lexString(src[i:], c)
			if !ok {
				return nil, syntaxErrAt(src, i, "a closing "+string(c)+" for the string")
			}
			i += n
			toks = append(toks, token{kind: tokString, text: s, pos: start, end: i})
		case c == '`':
			s, n, ok := lexBacktick(src[i:])
			if !ok {
				return nil, syntaxErrAt(src, i, "a closing ` for the identifier")
			}
			if s == "" {
				return nil, syntaxErrAt(src, i, "a non-empty identifier")
			}
			i += n
			toks = append(toks, token{kind: tokQuoted, text: s, pos: start, end: i})
		case isDigit(c) || c == '.' && i+1 < len(src) && isDigit(src[i+1]):
			i = lexNumber(src, i)
			toks = append(toks, token{kind: tokNumber, text: src[start:i], pos: start, end: i})
		case c == '@':
			sys := strings.HasPrefix(src[i:], "@@")
			j := i + 1
			if sys {
				j++
			}
			k := j
			for k < len(src) && (isIdentByte(src[k]) || src[k] == '.') {
				k++
			}
			if k == j {
				return nil, syntaxErrAt(src, i, "a variable name after @")
			}
			kind := tokUserVar
			if sys {
				kind = tokSysVar
			}
			i = k
			toks = append(toks, token{kind: kind, text: strings.ToLower(src[j:k]), pos: start, end: i})
		case isIdentStart(src, i):
			for i < len(src) && isIdentContinue(src, i) {
				_, n := utf8.DecodeRuneInString(src[i:])
				i += n
			}
			toks = append(toks, token{kind: tokWord, text: src[start:i], pos: start, end: i})
		default:
			n := punctLen(src[i:])
			if n == 0 {
				return nil, syntaxErrAt(src, i, "a keyword, identifier, literal or operator")
			}
			i += n
			toks = append(toks, token{kind: tokPunct, text: src[start:i], pos: start, end: i})
		}
	}
}

func skipSpace(src string, i int) int {
	for i < len(src) && (src[i] == ' ' || src[i] == '\t' || src[i] == '\n' || src[i] == '\r' || src[i] == '\f' || src[i] == '\v') {
		i++
	}
	return i
}

// punctLen returns the length of the operator at the start of s, or 0.
func punctLen(s string) int {
	for _, op := range [...]string{"<=>", "<=", ">=", "<>", "!=", "==", "||", "&&", "<<", ">>"} {
		if strings.HasPrefix(s, op) {
			return len(op)
		}
	}
	if strings.IndexByte("(),;*.=<>+-?!/%|&~", s[0]) >= 0 {
		return 1
	}
	return 0
}

// lexString reads a quoted string starting at s[0] == q. A doubled quote
// stands for itself; backslash escapes follow MySQL (\n, \t, \0, \Z, \b, \r;
// \% and \_ keep their backslash so LIKE patterns stay literal; any other
// escaped character stands for itself).
func lexString(s string, q byte) (string, int, bool) {
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		c := s[i]
		switch {
		case c == q:
			if i+1 < len(s) && s[i+1] == q {
				b.WriteByte(q)
				i++
				continue
			}
			return b.String(), i + 1, true
		case c == '\\':
			if i+1 >= len(s) {
				return "", 0, false
			}
			i++
			switch e := s[i]; e {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case 'r':
				b.WriteByte('\r')
			case 'b':
				b.WriteByte('\b')
			case '0':
				b.WriteByte(0)
			case 'Z':
				b.WriteByte(0x1a)
			case '%', '_':
				b.WriteByte('\\')
				b.WriteByte(e)
			default:
				b.WriteByte(e)
			}
		default:
			b.WriteByte(c)
		}
	}
	return "", 0, false
}

// lexBacktick reads a `quoted identifier`; “ stands for one backtick.
func lexBacktick(s string) (string, int, bool) {
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		if s[i] == '`' {
			if i+1 < len(s) && s[i+1] == '`' {
				b.WriteByte('`')
				i++
				continue
			}
			return b.String(), i + 1, true
		}
		b.WriteByte(s[i])
	}
	return "", 0, false
}

// lexNumber returns the end of the number starting at src[i]: digits, an
// optional fraction and an optional exponent (only if digits follow it,
// so "1e" lexes as 1 followed by the word e).
func lexNumber(src string, i int) int {
	for i < len(src) && isDigit(src[i]) {
		i++
	}
	if i < len(src) && src[i] == '.' {
		i++
		for i < len(src) && isDigit(src[i]) {
			i++
		}
	}
	if i < len(src) && (src[i] == 'e' || src[i] == 'E') {
		j := i + 1
		if j < len(src) && (src[j] == '+' || src[j] == '-') {
			j++
		}
		if j < len(src) && isDigit(src[j]) {
			for j < len(src) && isDigit(src[j]) {
				j++
			}
			i = j
		}
	}
	return i
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func isIdentByte(c byte) bool {
	return c == '_' || c == '$' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || isDigit(c)
}

// isIdentStart accepts ASCII letters, _, $ and any non-ASCII letter, as
// MySQL does for unquoted identifiers.
func isIdentStart(src string, i int) bool {
	c := src[i]
	if c < utf8.RuneSelf {
		return c == '_' || c == '$' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
	}
	r, _ := utf8.DecodeRuneInString(src[i:])
	return r != utf8.RuneError
}

func isIdentContinue(src string, i int) bool {
	return isDigit(src[i]) || isIdentStart(src, i)
}
