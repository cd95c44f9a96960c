package sqlclass

// classifySet refines a SET statement for Classify, with t just after SET.
// It reuses the ParseSet grammar through parseSetBody, on a copy of t, so
// that the scanner still sees the whole statement afterwards (a value may
// hold a locking subquery or a GET_LOCK call).
//
// A session-scope SET is not a write: the proxy tracks it and replays it.
// GLOBAL and PERSIST change the server, so they go to the writer, and so
// does every SET this package cannot parse, because the proxy will pin the
// session for it anyway. SET autocommit to anything but a constant false
// may commit. MariaDB's SET STATEMENT ... FOR stmt is classified as stmt,
// since its assignments last only for that statement.
func classifySet(t *Tokenizer, r *Result) (Result, int, bool) {
	src := t.src
	if la := *t; isWord(src, la.Next(), "STATEMENT") {
		return classifySetStatement(la, t, r)
	}
	la := *t
	err := parseSetBody(&la, func(a rawAssign) {
		switch a.scope {
		case ScopeGlobal, ScopePersist, ScopePersistOnly:
			r.write = true
		case ScopeSession:
			if eqFold(a.name, "AUTOCOMMIT") {
				if on, ok := boolValue(a.value); on || !ok {
					r.ImplicitCommit = true
				}
			}
		}
	})
	if err != nil {
		r.write = true
		la = *t
		// SET PASSWORD and SET DEFAULT ROLE modify the mysql schema and,
		// like the account statements, commit implicitly.
		if w := la.Next(); isWord(src, w, "PASSWORD") || isWord(src, w, "DEFAULT") {
			r.ImplicitCommit = true
		}
	}
	return Result{}, 0, false
}

// classifySetStatement handles SET STATEMENT var=value, ... FOR stmt, with
// la just after STATEMENT. It finds the top-level FOR and classifies what
// follows as a statement of its own, consuming it from t. Without a FOR
// the statement is Other and left to the scanner.
func classifySetStatement(la Tokenizer, t *Tokenizer, r *Result) (Result, int, bool) {
	src := la.src
	depth := 0
	vars := false
	for {
		tok := la.Next()
		switch {
		case tok.Kind == TokEOF, depth == 0 && tok.is(src, ";"):
			r.Kind, r.write = Other, true
			return Result{}, 0, false
		case tok.is(src, "("):
			depth++
		case tok.is(src, ")"):
			if depth > 0 {
				depth--
			}
		case tok.Kind == TokUserVar:
			vars = true
		case depth == 0 && isWord(src, tok, "FOR"):
			inner, end := classifyStmt(&la)
			*t = la
			if inner.Kind == Empty {
				inner.Kind, inner.write = Other, true
			}
			inner.UsesUserVars = inner.UsesUserVars || vars
			if inner.Hint == HintNone {
				inner.Hint, inner.HostGroup = r.Hint, r.HostGroup
			}
			return inner, end, true
		}
	}
}
