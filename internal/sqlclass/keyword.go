package sqlclass

// FirstKeyword returns the statement's first keyword as it appears in sql
// (original case, no copy), skipping whitespace, comments, executable-comment
// markers and opening parentheses, so "/* x */ (SELECT 1)" yields "SELECT".
// It returns "" when the statement does not start with a word.
func FirstKeyword(sql string) string {
	t := NewTokenizer(sql)
	for {
		tok := t.Next()
		switch {
		case tok.Kind == TokWord:
			return tok.Text(sql)
		case tok.is(sql, "("):
			continue
		default:
			return ""
		}
	}
}

// eqFold reports whether word equals kw ignoring ASCII case. kw must be
// upper case. It is the only keyword comparison in the package: cheap,
// allocation-free, and SQL keywords are ASCII.
func eqFold(word, kw string) bool {
	if len(word) != len(kw) {
		return false
	}
	for i := 0; i < len(word); i++ {
		c := word[i]
		if 'a' <= c && c <= 'z' {
			c -= 'a' - 'A'
		}
		if c != kw[i] {
			return false
		}
	}
	return true
}

// hasPrefixFold reports whether s starts with prefix ignoring ASCII case;
// prefix must be lower case.
func hasPrefixFold(s, prefix string) bool {
	if len(s) < len(prefix) {
		return false
	}
	for i := 0; i < len(prefix); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != prefix[i] {
			return false
		}
	}
	return true
}

// isWord reports whether tok is the keyword kw (upper case).
func isWord(src string, tok Token, kw string) bool {
	return tok.Kind == TokWord && eqFold(src[tok.Start:tok.End], kw)
}
