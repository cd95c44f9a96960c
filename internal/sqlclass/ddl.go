package sqlclass

// classifyDDL refines CREATE/ALTER/DROP/TRUNCATE/RENAME. All of them commit
// implicitly except CREATE/DROP TEMPORARY TABLE, which instead create or
// drop connection-local state. DROP PREPARE is not DDL at all but a synonym
// for DEALLOCATE PREPARE. Stored-program definitions may carry a
// BEGIN ... END body whose ';'s must not split the statement.
func classifyDDL(la Tokenizer, kw string, r *Result, sc *scanner) {
	src := la.src
	r.ImplicitCommit = true
	switch {
	case eqFold(kw, "DROP"):
		tok := la.Next()
		switch {
		case isWord(src, tok, "TEMPORARY"):
			r.TempTable = TempDrop
			r.ImplicitCommit = false
		case isWord(src, tok, "PREPARE"):
			r.Kind = Deallocate
			r.ImplicitCommit = false
		}
	case eqFold(kw, "CREATE"), eqFold(kw, "ALTER"):
		temp := false
		for {
			tok := la.Next()
			if tok.Kind != TokWord {
				return
			}
			w := tok.Text(src)
			switch {
			case eqFold(w, "TEMPORARY"):
				temp = true
			case eqFold(w, "OR"), eqFold(w, "REPLACE"), eqFold(w, "AGGREGATE"),
				eqFold(w, "UNIQUE"), eqFold(w, "FULLTEXT"), eqFold(w, "SPATIAL"),
				eqFold(w, "ONLINE"), eqFold(w, "OFFLINE"), eqFold(w, "IGNORE"),
				eqFold(w, "UNDEFINED"), eqFold(w, "MERGE"), eqFold(w, "TEMPTABLE"),
				eqFold(w, "SQL"), eqFold(w, "SECURITY"), eqFold(w, "INVOKER"):
				// modifiers before the object type
			case eqFold(w, "DEFINER"):
				if t := la; t.Next().is(src, "=") {
					la = t
					skipAccount(&la)
				}
				// else SQL SECURITY DEFINER: the keyword alone
			case eqFold(w, "ALGORITHM"):
				la.Next() // =
				la.Next() // value
			case eqFold(w, "TABLE"):
				if temp && eqFold(kw, "CREATE") {
					r.TempTable = TempCreate
					r.ImplicitCommit = false
				}
				return
			case eqFold(w, "PROCEDURE"), eqFold(w, "FUNCTION"), eqFold(w, "TRIGGER"),
				eqFold(w, "EVENT"), eqFold(w, "PACKAGE"):
				sc.compoundOK = true
				return
			default:
				return
			}
		}
	}
}

// skipAccount consumes an account name: 'user'@'host', `u`@`h`, u@h
// (lexed as a word and a variable), or CURRENT_USER[()].
func skipAccount(la *Tokenizer) {
	src := la.src
	la.Next()
	t := *la
	switch tok := t.Next(); {
	case tok.is(src, "@"):
		t.Next()
		*la = t
	case tok.Kind == TokUserVar:
		*la = t
	case tok.is(src, "("):
		if t.Next().is(src, ")") {
			*la = t
		}
	}
}
