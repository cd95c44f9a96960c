package sqlclass

// rawAssign is one assignment as parseSetBody finds it. Everything in it is
// a substring of the statement, so Classify can inspect SET statements
// without allocating; ParseSet normalises it into an Assignment.
type rawAssign struct {
	scope   Scope
	name    string // without @, @@scope. prefix or enclosing quotes
	quote   byte   // quote the name was written in, 0 if none
	value   string // expression text as written, trimmed
	collate string // SET NAMES ... COLLATE only
}

// parseSetBody parses what follows the SET keyword and calls emit for each
// assignment, in order. It stops after the end of input or a top-level ';'.
// t must be positioned just after
// SET. Anything it does not understand is an error, and emit may already
// have been called for the assignments before the error.
func parseSetBody(t *Tokenizer, emit func(rawAssign)) error {
	src := t.src
	carry := ScopeSession // last scope keyword, applies to later names
	for first := true; ; first = false {
		tok := t.Next()
		explicit := false
		if tok.Kind == TokWord {
			if s, ok := scopeKeyword(tok.Text(src)); ok {
				carry, explicit = s, true
				tok = t.Next()
			}
		}
		a := rawAssign{scope: carry}
		switch {
		case first && isWord(src, tok, "TRANSACTION"):
			if !explicit {
				a.scope = ScopeNextTxn
			}
			return parseTxnCharacteristics(t, a.scope, emit)
		case !explicit && isWord(src, tok, "NAMES"):
			if err := parseNames(t, &a); err != nil {
				return err
			}
		case !explicit && (isWord(src, tok, "CHARSET") || isWord(src, tok, "CHARACTER")):
			if isWord(src, tok, "CHARACTER") {
				if s := t.Next(); !isWord(src, s, "SET") {
					return &SetError{Offset: s.Start, Reason: "expected SET after CHARACTER"}
				}
			}
			v := t.Next()
			if !isCharsetName(v) {
				return &SetError{Offset: v.Start, Reason: "expected character set name"}
			}
			a.scope, a.name, a.value = ScopeSession, NameCharset, v.Text(src)
		case first && !explicit && unsupportedSet(src, tok):
			return &SetError{Offset: tok.Start, Reason: "unsupported SET " + tok.Text(src)}
		default:
			if err := parseVarName(t, tok, explicit, &a); err != nil {
				return err
			}
			op := t.Next()
			if !op.is(src, "=") && !op.is(src, ":=") {
				return &SetError{Offset: op.Start, Reason: "expected = or :="}
			}
			v, err := parseSetValue(t)
			if err != nil {
				return err
			}
			a.value = v
		}
		emit(a)
		if done, err := endOfAssignment(t); done || err != nil {
			return err
		}
	}
}

// scopeKeyword maps GLOBAL, SESSION, LOCAL, PERSIST and PERSIST_ONLY (also
// the @@scope. prefixes without their punctuation) to a Scope.
func scopeKeyword(w string) (Scope, bool) {
	switch {
	case eqFold(w, "SESSION"), eqFold(w, "LOCAL"):
		return ScopeSession, true
	case eqFold(w, "GLOBAL"):
		return ScopeGlobal, true
	case eqFold(w, "PERSIST"):
		return ScopePersist, true
	case eqFold(w, "PERSIST_ONLY"):
		return ScopePersistOnly, true
	}
	return 0, false
}

// unsupportedSet reports SET forms that are not variable assignments and
// whose effect the proxy cannot replay: SET PASSWORD, SET ROLE,
// SET DEFAULT ROLE, SET RESOURCE GROUP, MariaDB's SET STATEMENT ... FOR.
func unsupportedSet(src string, tok Token) bool {
	for _, kw := range [...]string{"PASSWORD", "ROLE", "DEFAULT", "RESOURCE", "STATEMENT"} {
		if isWord(src, tok, kw) {
			return true
		}
	}
	return false
}

// parseVarName reads the variable being assigned, starting at tok: a user
// variable, a system variable written @@[scope.]name, or a bare (possibly
// dotted, possibly back-quoted) system variable name. explicit says a scope
// keyword preceded it, which only bare names may follow.
func parseVarName(t *Tokenizer, tok Token, explicit bool, a *rawAssign) error {
	src := t.src
	text := tok.Text(src)
	switch tok.Kind {
	case TokUserVar:
		if explicit {
			return &SetError{Offset: tok.Start, Reason: "scope keyword before a user variable"}
		}
		name, q, ok := unquoteName(text[1:])
		if !ok {
			return &SetError{Offset: tok.Start, Reason: "malformed user variable"}
		}
		a.scope, a.name, a.quote = ScopeUser, name, q
		return nil
	case TokSysVar:
		if explicit {
			return &SetError{Offset: tok.Start, Reason: "scope keyword before @@variable"}
		}
		return parseSysVar(tok, text, a)
	case TokWord, TokQuotedIdent:
		name, q, ok := unquoteName(text)
		if !ok {
			return &SetError{Offset: tok.Start, Reason: "malformed variable name"}
		}
		a.name, a.quote = name, q
		// Component variables are dotted: validate_password.length.
		for q == 0 {
			la := *t
			dot := la.Next()
			part := la.Next()
			if !dot.is(src, ".") || part.Kind != TokWord || dot.Start != tok.End || part.Start != dot.End {
				break
			}
			*t = la
			tok.End = part.End
			a.name = src[tok.Start:tok.End]
		}
		return nil
	}
	return &SetError{Offset: tok.Start, Reason: "expected variable name"}
}

// parseSysVar splits @@[scope.]name. Without a scope, the transaction
// characteristics apply to the next transaction only, as SET TRANSACTION
// does; every other variable is session scope.
func parseSysVar(tok Token, text string, a *rawAssign) error {
	body := text[2:]
	a.scope = ScopeSession
	for i := 0; i < len(body); i++ {
		if body[i] == '.' {
			if s, ok := scopeKeyword(body[:i]); ok {
				a.scope = s
				body = body[i+1:]
			}
			break
		}
	}
	name, q, ok := unquoteName(body)
	if !ok {
		return &SetError{Offset: tok.Start, Reason: "malformed system variable"}
	}
	if len(body) == len(text)-2 && q == 0 && isTxnVar(name) {
		a.scope = ScopeNextTxn
	}
	a.name, a.quote = name, q
	return nil
}

func isTxnVar(name string) bool {
	return eqFold(name, "TRANSACTION_ISOLATION") || eqFold(name, "TX_ISOLATION") ||
		eqFold(name, "TRANSACTION_READ_ONLY") || eqFold(name, "TX_READ_ONLY")
}

// unquoteName strips one level of quotes from a variable name and reports
// the quote used. It fails on empty names, unterminated quotes and quotes
// in the middle of a name.
func unquoteName(s string) (name string, quote byte, ok bool) {
	if s == "" {
		return "", 0, false
	}
	switch q := s[0]; q {
	case '\'', '"', '`':
		end, closed := scanQuoted(s, 1, q, q != '`')
		if !closed || end != len(s) || len(s) < 3 {
			return "", 0, false
		}
		return s[1 : len(s)-1], q, true
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c == '\'' || c == '"' || c == '`' {
			return "", 0, false
		}
	}
	return s, 0, true
}

// parseNames reads SET NAMES cs [COLLATE coll] | DEFAULT.
func parseNames(t *Tokenizer, a *rawAssign) error {
	src := t.src
	v := t.Next()
	if !isCharsetName(v) {
		return &SetError{Offset: v.Start, Reason: "expected character set name after NAMES"}
	}
	a.scope, a.name, a.value = ScopeSession, NameNames, v.Text(src)
	la := *t
	if isWord(src, la.Next(), "COLLATE") {
		c := la.Next()
		if !isCharsetName(c) {
			return &SetError{Offset: c.Start, Reason: "expected collation name after COLLATE"}
		}
		a.collate = c.Text(src)
		*t = la
	}
	return nil
}

// isCharsetName accepts the spellings of a character set or collation
// name: a word, a 'string' or a `quoted identifier`.
func isCharsetName(tok Token) bool {
	return tok.Kind == TokWord || tok.Kind == TokString || tok.Kind == TokQuotedIdent
}

// parseTxnCharacteristics reads ISOLATION LEVEL ... and READ ONLY|WRITE,
// separated by commas, and emits them as transaction_isolation and
// transaction_read_only assignments in the variables' value syntax.
func parseTxnCharacteristics(t *Tokenizer, scope Scope, emit func(rawAssign)) error {
	src := t.src
	for {
		tok := t.Next()
		a := rawAssign{scope: scope}
		switch {
		case isWord(src, tok, "ISOLATION"):
			if l := t.Next(); !isWord(src, l, "LEVEL") {
				return &SetError{Offset: l.Start, Reason: "expected LEVEL after ISOLATION"}
			}
			a.name = NameTxIsolation
			w := t.Next()
			switch {
			case isWord(src, w, "SERIALIZABLE"):
				a.value = "'SERIALIZABLE'"
			case isWord(src, w, "REPEATABLE"):
				if r := t.Next(); !isWord(src, r, "READ") {
					return &SetError{Offset: r.Start, Reason: "expected READ after REPEATABLE"}
				}
				a.value = "'REPEATABLE-READ'"
			case isWord(src, w, "READ"):
				switch r := t.Next(); {
				case isWord(src, r, "COMMITTED"):
					a.value = "'READ-COMMITTED'"
				case isWord(src, r, "UNCOMMITTED"):
					a.value = "'READ-UNCOMMITTED'"
				default:
					return &SetError{Offset: r.Start, Reason: "expected COMMITTED or UNCOMMITTED"}
				}
			default:
				return &SetError{Offset: w.Start, Reason: "unknown isolation level"}
			}
		case isWord(src, tok, "READ"):
			a.name = NameTxReadOnly
			switch r := t.Next(); {
			case isWord(src, r, "ONLY"):
				a.value = "ON"
			case isWord(src, r, "WRITE"):
				a.value = "OFF"
			default:
				return &SetError{Offset: r.Start, Reason: "expected ONLY or WRITE after READ"}
			}
		default:
			return &SetError{Offset: tok.Start, Reason: "expected transaction characteristic"}
		}
		emit(a)
		if done, err := endOfAssignment(t); done || err != nil {
			return err
		}
	}
}

// endOfAssignment consumes what follows an assignment: ',' (more follow),
// or the end of the statement: a ';' or the end of input. What comes after
// a ';' is the caller's business (ParseSet refuses it, Classify reads it as
// the next statement).
func endOfAssignment(t *Tokenizer) (done bool, err error) {
	src := t.src
	tok := t.Next()
	switch {
	case tok.is(src, ","):
		return false, nil
	case tok.Kind == TokEOF, tok.is(src, ";"):
		return true, nil
	}
	return true, &SetError{Offset: tok.Start, Reason: "expected , or end of statement"}
}

// parseSetValue reads an expression up to the next top-level ',', any ';'
// (the server ends a statement there whatever the nesting, as Classify
// does) or the end of input, leaving t before that terminator, and returns
// its text as written. Parentheses must balance. A value that an executable-comment
// marker cuts through is refused: its text would not replay.
func parseSetValue(t *Tokenizer) (string, error) {
	src := t.src
	depth := 0
	start, end := -1, -1
	var marks int
	for {
		la := *t
		tok := la.Next()
		if tok.Kind == TokEOF || tok.is(src, ";") || (depth == 0 && tok.is(src, ",")) {
			break
		}
		*t = la
		if start < 0 {
			if !startsOperand(src, tok) {
				return "", &SetError{Offset: tok.Start, Reason: "expected a value"}
			}
			start, marks = tok.Start, t.marks
		} else if t.marks != marks {
			return "", &SetError{Offset: tok.Start, Reason: "executable comment inside a value"}
		}
		end = tok.End
		switch {
		case tok.is(src, "("):
			depth++
		case tok.is(src, ")"):
			if depth == 0 {
				return "", &SetError{Offset: tok.Start, Reason: "unbalanced )"}
			}
			depth--
		}
	}
	if start < 0 {
		return "", &SetError{Offset: t.Offset(), Reason: "missing value"}
	}
	if depth != 0 {
		return "", &SetError{Offset: end, Reason: "unbalanced ("}
	}
	return src[start:end], nil
}

// startsOperand reports whether an expression can begin with tok: any
// operand, '(' or a unary operator, but not a binary operator.
func startsOperand(src string, tok Token) bool {
	if tok.Kind != TokPunct {
		return true
	}
	switch src[tok.Start:tok.End] {
	case "(", "-", "+", "!", "~":
		return true
	}
	return false
}
