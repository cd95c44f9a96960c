package sqlclass

// classifySlow refines r for first keywords that do not settle the kind on
// their own. Handlers look ahead on copies of t, so the scanner still sees
// the whole statement afterwards. It returns done (with the result and end
// offset) only when it has classified and consumed the statement itself,
// which SET STATEMENT ... FOR does by classifying its inner statement.
func classifySlow(t *Tokenizer, first Token, r *Result, sc *scanner) (Result, int, bool) {
	src := t.src
	kw := first.Text(src)
	la := *t
	switch r.Kind {
	case Set:
		return classifySet(t, r)
	case Begin:
		classifyBegin(la, r, sc)
	case Commit, Rollback:
		classifyCompletion(la, r)
	case Savepoint: // RELEASE
		if !isWord(src, la.Next(), "SAVEPOINT") {
			r.Kind, r.write = Other, true
		}
	case DDL:
		classifyDDL(la, kw, r, sc)
	case Select: // WITH
		r.Kind = resolveWith(la)
		r.write = r.Kind.writes()
	case Explain:
		classifyExplain(la, r)
	case Show:
		classifyShow(la, r)
	case LockTables, UnlockTables:
		if w := la.Next(); !isWord(src, w, "TABLES") && !isWord(src, w, "TABLE") {
			r.Kind = Other // LOCK INSTANCE FOR BACKUP, UNLOCK INSTANCE
		} else {
			r.ImplicitCommit = true
		}
	case Load:
		classifyLoad(la, r)
	case Flush:
		classifyFlush(la, r)
	default:
		if eqFold(kw, "START") {
			classifyStart(la, r)
		} else {
			classifyOther(la, kw, r)
		}
	}
	return Result{}, 0, false
}

// classifyBegin tells BEGIN [WORK] from MariaDB's anonymous compound
// statement BEGIN NOT ATOMIC ... END, whose body holds ';'s.
func classifyBegin(la Tokenizer, r *Result, sc *scanner) {
	src := la.src
	tok := la.Next()
	if isWord(src, tok, "WORK") {
		tok = la.Next()
	}
	switch {
	case tok.Kind == TokEOF || tok.is(src, ";"):
		r.ImplicitCommit = true
		r.write = true
	case isWord(src, tok, "NOT"):
		r.Kind, r.write = Other, true
		sc.compound = true
	default:
		r.Kind, r.write = Other, true
	}
}

// classifyStart handles START TRANSACTION [characteristic, ...] and the
// replication START statements.
func classifyStart(la Tokenizer, r *Result) {
	src := la.src
	tok := la.Next()
	switch {
	case isWord(src, tok, "TRANSACTION"):
	case isWord(src, tok, "SLAVE"), isWord(src, tok, "REPLICA"):
		r.ImplicitCommit = true
		return
	default:
		return
	}
	r.Kind = Begin
	r.ImplicitCommit = true
	readOnly, readWrite := false, false
	for {
		tok := la.Next()
		switch {
		case tok.is(src, ","):
		case isWord(src, tok, "READ"):
			next := la.Next()
			readOnly = readOnly || isWord(src, next, "ONLY")
			readWrite = readWrite || isWord(src, next, "WRITE")
		case isWord(src, tok, "WITH"): // WITH CONSISTENT SNAPSHOT
			la.Next()
			la.Next()
		default:
			r.ReadOnlyTxn = readOnly && !readWrite
			r.write = !r.ReadOnlyTxn
			return
		}
	}
}

// classifyCompletion parses COMMIT|ROLLBACK [WORK] [AND [NO] CHAIN]
// [[NO] RELEASE] and ROLLBACK [WORK] TO [SAVEPOINT] name, which undoes part
// of a transaction without ending it.
func classifyCompletion(la Tokenizer, r *Result) {
	src := la.src
	for {
		tok := la.Next()
		switch {
		case isWord(src, tok, "WORK"):
		case isWord(src, tok, "TO") && r.Kind == Rollback:
			r.Kind = Savepoint
			return
		case isWord(src, tok, "AND"):
			next := la.Next()
			if isWord(src, next, "NO") {
				la.Next()
			} else if isWord(src, next, "CHAIN") {
				r.Chain = true
			}
		case isWord(src, tok, "NO"):
			la.Next() // NO RELEASE
		case isWord(src, tok, "RELEASE"):
			r.Release = true
		default:
			return
		}
	}
}

// resolveWith finds the statement a WITH clause belongs to: the first
// SELECT/TABLE/VALUES/UPDATE/DELETE/INSERT/REPLACE outside the CTE bodies'
// parentheses, or a '(' directly after a CTE body, which starts a
// parenthesized query. Anything else stays Other.
func resolveWith(la Tokenizer) Kind {
	src := la.src
	depth := 0
	afterBody := false
	for {
		tok := la.Next()
		switch {
		case tok.Kind == TokEOF, depth == 0 && tok.is(src, ";"):
			return Other
		case tok.is(src, "("):
			if depth == 0 && afterBody {
				return Select
			}
			depth++
		case tok.is(src, ")"):
			if depth > 0 {
				depth--
			}
			afterBody = depth == 0
			continue
		case depth == 0 && tok.Kind == TokWord:
			switch k, _ := kindOf(tok.Text(src)); k {
			case Select, Update, Delete, Insert, Replace:
				if !isWord(src, tok, "WITH") {
					return k
				}
			}
		}
		afterBody = false
	}
}

// classifyExplain makes EXPLAIN of a data-changing statement a write:
// EXPLAIN ANALYZE executes it, and the plain form is cheap on the writer.
// DESCRIBE tbl and EXPLAIN SELECT stay reads.
func classifyExplain(la Tokenizer, r *Result) {
	src := la.src
	for {
		tok := la.Next()
		if tok.Kind != TokWord {
			return
		}
		w := tok.Text(src)
		switch {
		case eqFold(w, "EXTENDED"), eqFold(w, "PARTITIONS"), eqFold(w, "ANALYZE"):
			continue
		case eqFold(w, "FORMAT"):
			la.Next() // =
			la.Next() // TRADITIONAL|JSON|TREE
			continue
		case eqFold(w, "WITH"):
			r.write = resolveWith(la).writes()
		default:
			switch k, _ := kindOf(w); k {
			case Insert, Update, Delete, Replace:
				r.write = true
			}
		}
		return
	}
}

// classifyShow flags SHOW statements that report on the previous statement
// of this connection.
func classifyShow(la Tokenizer, r *Result) {
	src := la.src
	tok := la.Next()
	for _, kw := range [...]string{"WARNINGS", "ERRORS", "COUNT", "PROFILE", "PROFILES"} {
		if isWord(src, tok, kw) {
			r.NeedsSameConn = true
			return
		}
	}
}

// classifyLoad tells LOAD DATA/XML [LOCAL] INFILE from LOAD INDEX INTO
// CACHE, an administrative statement with an implicit commit.
func classifyLoad(la Tokenizer, r *Result) {
	src := la.src
	tok := la.Next()
	if !isWord(src, tok, "DATA") && !isWord(src, tok, "XML") {
		r.Kind = Other
		r.ImplicitCommit = isWord(src, tok, "INDEX")
		return
	}
	for {
		tok := la.Next()
		switch {
		case isWord(src, tok, "LOCAL"):
			r.Local = true
		case isWord(src, tok, "LOW_PRIORITY"), isWord(src, tok, "CONCURRENT"):
		default:
			return
		}
	}
}

// classifyFlush marks FLUSH as committing, and treats FLUSH TABLES ...
// WITH READ LOCK and ... FOR EXPORT as LockTables: like LOCK TABLES they
// leave a lock on the connection that only UNLOCK TABLES releases.
func classifyFlush(la Tokenizer, r *Result) {
	src := la.src
	r.ImplicitCommit = true
	prevFor := false
	for {
		tok := la.Next()
		if tok.Kind == TokEOF || tok.is(src, ";") {
			return
		}
		if isWord(src, tok, "LOCK") || (prevFor && isWord(src, tok, "EXPORT")) {
			r.Kind = LockTables
			return
		}
		prevFor = isWord(src, tok, "FOR")
	}
}

// classifyOther handles first keywords with no Kind of their own, marking
// those MySQL lists as causing an implicit commit, and GET DIAGNOSTICS,
// which reads the previous statement's diagnostics area.
func classifyOther(la Tokenizer, kw string, r *Result) {
	src := la.src
	r.Kind, r.write = Other, true
	next := la.Next()
	switch {
	case eqFold(kw, "GRANT"), eqFold(kw, "REVOKE"), eqFold(kw, "INSTALL"),
		eqFold(kw, "UNINSTALL"), eqFold(kw, "OPTIMIZE"), eqFold(kw, "REPAIR"),
		eqFold(kw, "CHECK"), eqFold(kw, "CACHE"), eqFold(kw, "SHUTDOWN"):
		r.ImplicitCommit = true
	case eqFold(kw, "ANALYZE"):
		// ANALYZE TABLE, not MariaDB's ANALYZE SELECT/UPDATE/...
		r.ImplicitCommit = isWord(src, next, "TABLE") || isWord(src, next, "TABLES") ||
			isWord(src, next, "NO_WRITE_TO_BINLOG") || isWord(src, next, "LOCAL")
	case eqFold(kw, "RESET"):
		r.ImplicitCommit = !isWord(src, next, "PERSIST")
	case eqFold(kw, "STOP"):
		r.ImplicitCommit = isWord(src, next, "SLAVE") || isWord(src, next, "REPLICA")
	case eqFold(kw, "CHANGE"):
		r.ImplicitCommit = isWord(src, next, "MASTER") || isWord(src, next, "REPLICATION")
	case eqFold(kw, "GET"):
		if isWord(src, next, "CURRENT") || isWord(src, next, "STACKED") {
			next = la.Next()
		}
		r.NeedsSameConn = isWord(src, next, "DIAGNOSTICS")
	}
}
