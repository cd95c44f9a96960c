package sqlclass

// Digest normalises a statement for per-query statistics and returns the
// FNV-1a 64-bit hash of the normalised text together with the text.
//
// Normalisation is lexical, done on the same tokens Classify uses:
//
//   - string, number, hex and bit literals become ?, including a leading
//     unary sign and a character-set introducer (_utf8mb4'x');
//   - IN (literal, ...) becomes IN (?,...) whatever the list's length, and
//     runs of identical rows in INSERT ... VALUES collapse into (row),...,
//     so that batches of different sizes share a digest (a single-row
//     INSERT keeps its own, as in MySQL's statement digests);
//   - comments are dropped (routing hints included), executable comments
//     keep their content, and a trailing ';' is dropped;
//   - tokens are separated by exactly one space, except none after '(' and
//     '.', none before ')', ',', '.' and ';', and none between a name and
//     the '(' directly following it in the source (a function call).
//
// Words keep their case: lower-casing would merge identifiers that are
// case-sensitive on the server, and clients send one statement shape with
// one spelling anyway. The hash is stable across processes and versions
// of this package as long as the normalised text is.
func Digest(sql string) (hash uint64, text string) {
	hash, out := DigestInto(make([]byte, 0, len(sql)), sql)
	return hash, string(out)
}

// DigestInto is Digest writing the normalised text into buf (from its
// start; it grows if needed) and returning it: with a buffer kept by the
// caller, a statement's digest allocates nothing.
func DigestInto(buf []byte, sql string) (hash uint64, text []byte) {
	return digestFrom(buf, NewTokenizer(sql))
}

// digestFrom digests the tokens t returns, from the start of its text.
func digestFrom(buf []byte, t Tokenizer) (hash uint64, text []byte) {
	d := digester{
		src:         t.src,
		t:           t,
		out:         buf[:0],
		valuesDepth: -1,
	}
	d.run()
	return fnv1a64(d.out), d.out
}

// fnv1a64 is FNV-1a, 64 bit, written out to avoid hash/fnv's allocation.
func fnv1a64(s []byte) uint64 {
	const (
		offset64 = 14695981039346656037
		prime64  = 1099511628211
	)
	h := uint64(offset64)
	for _, c := range s {
		h ^= uint64(c)
		h *= prime64
	}
	return h
}

// digester holds the output and the little state the spacing, sign and
// VALUES-row rules need.
type digester struct {
	src string
	t   Tokenizer
	out []byte

	last    Token // last source token emitted; Kind TokEOF before the first
	glue    bool  // no space before the next token: after '(' '.' '@'
	semi    bool  // a ';' is pending; written only if more follows
	depth   int   // parenthesis depth of the output
	literal bool  // last emitted token was a literal (?), for binary signs

	// INSERT ... VALUES row collapsing; see values.
	valuesDepth         int // depth of the VALUES list, -1 outside one
	expectRow, inRow    bool
	afterRow, collapsed bool
	markRow             bool // the next emitted token opens a row
	rowOpen, commaAt    int
	prevRow             [2]int // out[prevRow[0]:prevRow[1]] is the last row kept
}

func (d *digester) run() {
	src := d.src
	for {
		tok := d.t.Next()
		switch {
		case tok.Kind == TokEOF:
			return
		case tok.is(src, ";"):
			d.semi = len(d.out) > 0
			d.depth, d.valuesDepth = 0, -1
			continue
		}
		if d.semi {
			d.out = append(d.out, ';')
			d.semi, d.glue = false, false
			d.last, d.literal = Token{Kind: TokPunct}, false
		}
		d.values(tok)
		switch tok.Kind {
		case TokString, TokNumber:
			d.emitLiteral(tok)
		case TokPunct:
			d.punct(tok)
		case TokWord:
			d.word(tok)
		default:
			d.emit(tok, tok.Text(src))
		}
	}
}

// sep writes the single space that goes before tok, if any.
func (d *digester) sep(tok Token) {
	if len(d.out) == 0 || d.glue {
		return
	}
	if tok.Kind == TokPunct {
		switch d.src[tok.Start] {
		case ')', ',', '.', ';', '@':
			return
		case '(':
			if (d.last.Kind == TokWord || d.last.Kind == TokQuotedIdent) && d.last.End == tok.Start {
				return
			}
		}
	}
	d.out = append(d.out, ' ')
}

func (d *digester) emit(tok Token, text string) {
	d.sep(tok)
	if d.markRow {
		d.rowOpen, d.markRow = len(d.out), false
	}
	d.out = append(d.out, text...)
	d.last, d.literal = tok, false
	d.glue = false
	if tok.Kind == TokPunct {
		switch text {
		case "(", ".", "@":
			d.glue = true
		}
	}
}

func (d *digester) emitLiteral(tok Token) {
	d.emit(tok, "?")
	d.literal = true
}

// punct tracks depth and folds unary signs into the literal they precede.
func (d *digester) punct(tok Token) {
	src := d.src
	switch {
	case tok.is(src, "("):
		d.depth++
	case tok.is(src, ")"):
		if d.depth > 0 {
			d.depth--
		}
	case (tok.is(src, "-") || tok.is(src, "+")) && d.unaryPosition():
		if la := d.t; la.Next().Kind == TokNumber {
			return // the number that follows emits the ?
		}
	}
	d.emit(tok, tok.Text(src))
	if tok.is(src, ")") {
		d.rowClosed()
	}
}

// unaryPosition reports whether a sign here would be unary: at the start,
// after an operator or '(' or ',', or after a keyword that cannot end an
// operand.
func (d *digester) unaryPosition() bool {
	switch {
	case len(d.out) == 0:
		return true
	case d.literal:
		return false
	case d.last.Kind == TokPunct:
		return !d.last.is(d.src, ")")
	case d.last.Kind == TokWord:
		return operatorKeyword(d.last.Text(d.src))
	}
	return false
}

// word handles introducers and IN lists; other words are copied.
func (d *digester) word(tok Token) {
	src := d.src
	w := tok.Text(src)
	if w[0] == '_' {
		la := d.t
		if s := la.Next(); s.Kind == TokString && s.Start == tok.End {
			d.t = la
			d.emitLiteral(s)
			return
		}
	}
	d.emit(tok, w)
	if eqFold(w, "IN") {
		if la, ok := literalList(d.t); ok {
			d.t = la
			d.out = append(d.out, " (?,...)"...)
			d.last, d.literal, d.glue = la.last, false, false
		}
	}
}

// literalList reports whether t stands before "(literal, ...)" and returns
// the tokenizer just past the ')'.
func literalList(t Tokenizer) (Tokenizer, bool) {
	src := t.src
	if !t.Next().is(src, "(") {
		return t, false
	}
	for {
		tok := t.Next()
		if tok.is(src, "-") || tok.is(src, "+") {
			tok = t.Next()
		}
		switch tok.Kind {
		case TokNumber, TokString, TokParam:
		case TokWord:
			w := tok.Text(src)
			if w[0] == '_' { // introducer: _utf8mb4'text'
				if s := t.Next(); s.Kind != TokString || s.Start != tok.End {
					return t, false
				}
			} else if !eqFold(w, "NULL") {
				return t, false
			}
		default:
			return t, false
		}
		switch sep := t.Next(); {
		case sep.is(src, ")"):
			return t, true
		case !sep.is(src, ","):
			return t, false
		}
	}
}

// operatorKeyword lists keywords after which + or - can only be unary.
func operatorKeyword(w string) bool {
	for _, kw := range [...]string{
		"SELECT", "WHERE", "AND", "OR", "NOT", "XOR", "BETWEEN", "LIKE",
		"WHEN", "THEN", "ELSE", "LIMIT", "OFFSET", "BY", "IS", "IN",
		"INTERVAL", "RETURN", "DIV", "MOD", "HAVING", "ON", "SET",
		"VALUES", "VALUE", "DEFAULT", "DO", "CASE", "ROW",
	} {
		if eqFold(w, kw) {
			return true
		}
	}
	return false
}

// values drives the collapsing of INSERT ... VALUES rows. It is called with
// every token before it is emitted; rowClosed runs after each ')'. A row
// whose normalised text equals the previous row's is cut from the output and
// replaced, once per run of equal rows, by ",...". The kept row stays in
// place in the output (truncation never reaches back that far), so rows
// are compared by offset without copying.
func (d *digester) values(tok Token) {
	src := d.src
	if tok.Kind == TokWord && (eqFold(tok.Text(src), "VALUES") || eqFold(tok.Text(src), "VALUE")) {
		d.valuesDepth, d.expectRow = d.depth, true
		d.inRow, d.afterRow, d.collapsed, d.prevRow = false, false, false, [2]int{}
		return
	}
	if d.valuesDepth < 0 || d.depth != d.valuesDepth || d.inRow {
		return
	}
	switch {
	case d.expectRow && tok.is(src, "("):
		d.expectRow, d.inRow, d.markRow = false, true, true
	case d.afterRow && tok.is(src, ","):
		d.afterRow, d.expectRow = false, true
		d.commaAt = len(d.out)
	default:
		d.valuesDepth = -1
	}
}

func (d *digester) rowClosed() {
	if !d.inRow || d.depth != d.valuesDepth {
		return
	}
	d.inRow, d.afterRow = false, true
	row := d.out[d.rowOpen:]
	prev := d.out[d.prevRow[0]:d.prevRow[1]]
	if d.prevRow[1] > 0 && string(row) == string(prev) {
		d.out = d.out[:d.commaAt]
		if !d.collapsed {
			d.out = append(d.out, ",..."...)
			d.collapsed = true
		}
		return
	}
	d.prevRow = [2]int{d.rowOpen, len(d.out)}
	d.collapsed = false
}
