package sqlclass

// Classify classifies one COM_QUERY or COM_STMT_PREPARE text. It never
// fails: text it does not understand is Other, which IsWrite reports as a
// write. For single statements whose first keyword settles the kind
// (SELECT, INSERT, UPDATE, DELETE, ...) it does not allocate.
func Classify(sql string) Result {
	return classifyText(sql, nil)
}

// classifyText is Classify, logging the tokens it lexes into log if set.
func classifyText(sql string, log *TokenLog) Result {
	t := NewTokenizer(sql)
	t.log = log
	r, _ := classifyStmt(&t)
	if moreStatements(t) {
		return classifyMulti(sql)
	}
	return r
}

// classifyStmt classifies the statement starting at t and consumes it up
// to and including its terminating top-level ';'. It returns the result and
// the offset where the statement text ends (the ';' or the end of input).
//
// A routing hint counts wherever it appears in the statement; the first one
// wins.
func classifyStmt(t *Tokenizer) (Result, int) {
	t.hasHint = false
	r, end := classifyTokens(t)
	if t.hasHint {
		r.addHint(t.src, t.hint)
	}
	return r, end
}

// classifyTokens is classifyStmt without the hints found past the first
// keyword.
func classifyTokens(t *Tokenizer) (Result, int) {
	src := t.src
	var r Result

	// Hints may appear anywhere before the first keyword, so comments are
	// read rather than skipped until it is found. Leading parentheses
	// belong to "(SELECT ...) UNION (...)".
	t.KeepComments(true)
	var first Token
	for {
		tok := t.Next()
		if tok.Kind == TokComment {
			r.addHint(src, tok)
			continue
		}
		if tok.is(src, "(") {
			continue
		}
		first = tok
		break
	}
	// ... or directly after it: SELECT /* galeon:writer */ ...
	if first.Kind == TokWord {
		for {
			save := *t
			tok := t.Next()
			if tok.Kind != TokComment {
				*t = save
				break
			}
			r.addHint(src, tok)
		}
	}
	t.KeepComments(false)

	var sc scanner
	switch {
	case first.Kind == TokEOF:
		r.Kind = Empty
		return r, first.Start
	case first.is(src, ";"):
		r.Kind = Empty
		return r, first.Start
	case first.Kind != TokWord:
		r.Kind = Other
		r.write = true
	default:
		kind, slow := kindOf(first.Text(src))
		r.Kind = kind
		r.write = kind.writes()
		if slow {
			if inner, end, done := classifySlow(t, first, &r, &sc); done {
				return inner, end
			}
		}
	}
	end := sc.scan(t, &r)
	return r, end
}

// addHint records the first routing hint seen; later ones are ignored so
// that a hint cannot be overridden by text further into the statement.
func (r *Result) addHint(src string, tok Token) {
	if r.Hint != HintNone {
		return
	}
	r.Hint, r.HostGroup = parseHint(tok.Text(src))
}

// moreStatements reports whether anything other than ';' follows, i.e.
// whether the text is a multi-statement. t is a copy; the caller's
// position is not moved.
func moreStatements(t Tokenizer) bool {
	for {
		tok := t.Next()
		switch {
		case tok.Kind == TokEOF:
			return false
		case tok.is(t.src, ";"):
			continue
		default:
			return true
		}
	}
}
