package sqlclass

// maxLogged is the most tokens a TokenLog keeps. A longer statement is
// lexed again by its digest; the bound keeps what a session holds small.
const maxLogged = 128

// TokenLog keeps the tokens Classify lexed, so that the statement's
// digest reads them instead of lexing the text a second time (one
// tokenizer pass per statement). It is usable only when it holds every
// token of the text, in order, up to its end; otherwise DigestLogged
// lexes the text itself. A TokenLog is reused statement after statement:
// ClassifyLogged starts it afresh. Its zero value is an empty log.
type TokenLog struct {
	src      string
	toks     []Token
	complete bool // every token up to the end of input is logged
	broken   bool // a token went unlogged (a gap, or more than maxLogged)
}

// Reset empties the log, keeping its storage (at most maxLogged tokens).
// A caller whose text lives in a buffer it reuses resets the log before
// reusing the buffer, so that no log outlives the text it was made from.
func (l *TokenLog) Reset() {
	l.src, l.toks, l.complete, l.broken = "", l.toks[:0], false, false
}

// covers reports whether the log holds every token of sql.
func (l *TokenLog) covers(sql string) bool {
	return l.complete && !l.broken && l.src == sql
}

// add logs tok, which a tokenizer returned after prev (both not
// comments). Parsers look ahead on copies of a tokenizer and go back, so
// a token already logged is seen again and skipped; a token that does not
// follow the last one logged would leave a gap, and breaks the log.
func (l *TokenLog) add(prev, tok Token) {
	if l.broken || l.complete {
		return
	}
	n := len(l.toks)
	if n > 0 && tok.Start < l.toks[n-1].End {
		return // logged already
	}
	var last Token
	if n > 0 {
		last = l.toks[n-1]
	}
	if prev != last {
		l.broken = true
		return
	}
	switch {
	case tok.Kind == TokEOF:
		l.complete = true
	case n == maxLogged:
		l.broken = true
	default:
		l.toks = append(l.toks, tok)
	}
}

// ClassifyLogged is Classify that also logs the tokens it lexes into log
// (emptied first), for DigestLogged.
func ClassifyLogged(sql string, log *TokenLog) Result {
	log.Reset()
	log.src = sql
	return classifyText(sql, log)
}

// DigestLogged is DigestInto reading sql's tokens from log when it holds
// them all (ClassifyLogged of the same text, which ran to its end), and
// lexing sql otherwise. The digest is the same either way.
func DigestLogged(buf []byte, sql string, log *TokenLog) (hash uint64, text []byte) {
	t := NewTokenizer(sql)
	if log != nil && log.covers(sql) {
		t.replay = log.toks
	}
	return digestFrom(buf, t)
}
