package sqlclass

// scanner is the single pass every statement gets after its first keyword.
// It finds the end of the statement and the few things that can hide
// anywhere in it: variables, locking clauses, INTO, and calls to functions
// with per-connection effects. It looks at words only through a length
// switch and an ASCII case-fold compare, so it allocates nothing.
type scanner struct {
	// compoundOK is set by the DDL handler for stored-program definitions:
	// if their body contains BEGIN, the ';'s inside it do not end the
	// statement. compound is set once that has happened (or for
	// BEGIN NOT ATOMIC), and the statement then runs to the end of input.
	compoundOK, compound bool
}

// word identifies the few words the scanner reacts to.
type word uint8

const (
	wNone word = iota
	wFor
	wIn
	wLock
	wUpdate
	wShare
	wInto
	wNext
	wValue
	wBegin
	wCalcFoundRows
	// Function names: they count only when followed by '('.
	wGetLock
	wReleaseLock
	wInspectLock
	wSameConnFn
	wLastInsertID // LAST_INSERT_ID(): per-connection, and replayable
	wSeqWriteFn
	wConnectionID // CONNECTION_ID(): the proxy answers with its own session id
)

// scan consumes tokens up to and including the statement's top-level ';'
// and records what it sees in r. It returns the offset where the statement
// text ends.
func (sc *scanner) scan(t *Tokenizer, r *Result) int {
	src := t.src
	var prev, prev2, fn word
	into := false
	var end int // set by every exit of the loop below
loop:
	for {
		tok := t.Next()
		switch tok.Kind {
		case TokEOF:
			end = tok.Start
			break loop
		case TokWord:
			w := wordOf(src[tok.Start:tok.End])
			fn = wNone
			switch w {
			case wUpdate:
				if prev == wFor {
					r.Locking = true
				}
			case wShare:
				if prev == wFor || (prev == wIn && prev2 == wLock) {
					r.Locking = true
				}
			case wInto:
				into = true
			case wValue:
				if prev == wNext { // MariaDB NEXT VALUE FOR seq
					r.write = true
				}
			case wBegin:
				if sc.compoundOK {
					sc.compound = true
				}
			case wCalcFoundRows:
				r.NeedsSameConn = true
			case wGetLock, wReleaseLock, wInspectLock, wSameConnFn, wLastInsertID, wSeqWriteFn, wConnectionID:
				fn = w
			}
			prev2, prev = prev, w
			continue
		case TokPunct:
			if fn != wNone && tok.is(src, "(") {
				applyFn(fn, r)
			} else if tok.is(src, ";") && !sc.compound {
				end = tok.Start
				break loop
			}
		case TokUserVar:
			r.UsesUserVars = true
		case TokSysVar:
			if sameConnSysVar(tok.Text(src)) {
				r.NeedsSameConn = true
				r.UsesLastInsertID = r.UsesLastInsertID || lastInsertIDSysVar(tok.Text(src))
			}
		}
		fn, prev, prev2 = wNone, wNone, wNone
	}
	if into && r.Kind == Select {
		r.Into = true
	}
	if r.Locking || r.Into || r.AdvisoryLock != 0 {
		r.write = true
	}
	return end
}

func applyFn(fn word, r *Result) {
	switch fn {
	case wGetLock:
		r.AdvisoryLock |= LockAcquire
	case wReleaseLock:
		r.AdvisoryLock |= LockRelease
	case wInspectLock:
		r.AdvisoryLock |= LockInspect
	case wSameConnFn:
		r.NeedsSameConn = true
	case wLastInsertID:
		r.NeedsSameConn, r.UsesLastInsertID = true, true
	case wSeqWriteFn:
		r.write = true
	case wConnectionID:
		r.UsesConnectionID = true
	}
}

// wordOf maps a word to the scanner's vocabulary; most words are wNone
// after a length switch and at most a couple of compares.
func wordOf(s string) word {
	switch len(s) {
	case 2:
		if eqFold(s, "IN") {
			return wIn
		}
	case 3:
		if eqFold(s, "FOR") {
			return wFor
		}
	case 4:
		switch {
		case eqFold(s, "INTO"):
			return wInto
		case eqFold(s, "LOCK"):
			return wLock
		case eqFold(s, "NEXT"):
			return wNext
		}
	case 5:
		switch {
		case eqFold(s, "SHARE"):
			return wShare
		case eqFold(s, "VALUE"):
			return wValue
		case eqFold(s, "BEGIN"):
			return wBegin
		}
	case 6:
		switch {
		case eqFold(s, "UPDATE"):
			return wUpdate
		case eqFold(s, "SETVAL"):
			return wSeqWriteFn
		}
	case 7:
		switch {
		case eqFold(s, "NEXTVAL"):
			return wSeqWriteFn
		case eqFold(s, "LASTVAL"):
			return wSameConnFn
		}
	case 8:
		if eqFold(s, "GET_LOCK") {
			return wGetLock
		}
	case 9:
		if eqFold(s, "ROW_COUNT") {
			return wSameConnFn
		}
	case 10:
		if eqFold(s, "FOUND_ROWS") {
			return wSameConnFn
		}
	case 12:
		switch {
		case eqFold(s, "RELEASE_LOCK"):
			return wReleaseLock
		case eqFold(s, "IS_USED_LOCK"), eqFold(s, "IS_FREE_LOCK"):
			return wInspectLock
		}
	case 13:
		if eqFold(s, "CONNECTION_ID") {
			return wConnectionID
		}
	case 14:
		if eqFold(s, "LAST_INSERT_ID") {
			return wLastInsertID
		}
	case 17:
		if eqFold(s, "RELEASE_ALL_LOCKS") {
			return wReleaseLock
		}
	case 19:
		if eqFold(s, "SQL_CALC_FOUND_ROWS") {
			return wCalcFoundRows
		}
	}
	return wNone
}

// sysVarName is the variable's name without "@@" and a scope prefix.
func sysVarName(tok string) string {
	name := tok[2:] // drop "@@"
	for i := len(name) - 1; i >= 0; i-- {
		if name[i] == '.' {
			return name[i+1:]
		}
	}
	return name
}

// lastInsertIDSysVar: @@identity and @@last_insert_id are LAST_INSERT_ID().
func lastInsertIDSysVar(tok string) bool {
	name := sysVarName(tok)
	return eqFold(name, "IDENTITY") || eqFold(name, "LAST_INSERT_ID")
}

// sameConnSysVar reports system variables whose value is the outcome of
// the previous statement on this connection (@@last_gtid: the GTID of
// its last transaction, which an operator reads after a statement).
func sameConnSysVar(tok string) bool {
	name := sysVarName(tok)
	return eqFold(name, "WARNING_COUNT") || eqFold(name, "ERROR_COUNT") ||
		eqFold(name, "IDENTITY") || eqFold(name, "LAST_INSERT_ID") || eqFold(name, "LAST_GTID")
}
