package sqlclass

// parseHint reads a galeon routing hint from a comment token's text
// ("/* galeon:writer */", "-- galeon:reader", "# galeon:hostgroup=olap").
// Anything else, including MySQL optimizer hints (/*+ ... */) and unknown
// galeon: words, is not a hint. Matching is case-insensitive and the
// returned group name is a substring of comment, so nothing is allocated.
func parseHint(comment string) (Hint, string) {
	body := commentBody(comment)
	if !hasPrefixFold(body, "galeon:") {
		return HintNone, ""
	}
	body = trimSpace(body[len("galeon:"):])
	switch {
	case eqFold(body, "WRITER"):
		return HintWriter, ""
	case eqFold(body, "READER"):
		return HintReader, ""
	case hasPrefixFold(body, "hostgroup"):
		rest := trimSpace(body[len("hostgroup"):])
		if len(rest) == 0 || rest[0] != '=' {
			return HintNone, ""
		}
		name := trimSpace(rest[1:])
		if !validGroupName(name) {
			return HintNone, ""
		}
		return HintHostgroup, name
	}
	return HintNone, ""
}

// commentBody strips the comment delimiters and surrounding space.
func commentBody(c string) string {
	switch {
	case len(c) >= 2 && c[0] == '/' && c[1] == '*':
		c = c[2:]
		if len(c) >= 2 && c[len(c)-2] == '*' && c[len(c)-1] == '/' {
			c = c[:len(c)-2]
		}
	case len(c) >= 2 && c[0] == '-' && c[1] == '-':
		c = c[2:]
	case len(c) >= 1 && c[0] == '#':
		c = c[1:]
	}
	return trimSpace(c)
}

// validGroupName accepts the names a configuration file would use: ASCII
// letters, digits, '_', '-' and '.', up to 64 bytes.
func validGroupName(s string) bool {
	if len(s) == 0 || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(isDigit(c) || ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z') || c == '_' || c == '-' || c == '.') {
			return false
		}
	}
	return true
}

func trimSpace(s string) string {
	for len(s) > 0 && isSpace(s[0]) {
		s = s[1:]
	}
	for len(s) > 0 && isSpace(s[len(s)-1]) {
		s = s[:len(s)-1]
	}
	return s
}
