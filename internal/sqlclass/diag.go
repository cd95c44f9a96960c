package sqlclass

import "strconv"

// ShowDiagnostics is a SHOW WARNINGS, SHOW ERRORS or SHOW COUNT(*)
// WARNINGS|ERRORS statement: one that only reads the diagnostics the
// previous statement left.
type ShowDiagnostics struct {
	// Errors: SHOW ERRORS (only Error-level conditions); else WARNINGS.
	Errors bool
	// Count: SHOW COUNT(*) ..., which reads @@warning_count or
	// @@error_count.
	Count bool
	// Limit and Offset of a LIMIT clause (HasLimit).
	HasLimit      bool
	Offset, Limit uint64
}

// ParseShowDiagnostics recognises q as SHOW WARNINGS / SHOW ERRORS [LIMIT
// [offset,] count] or SHOW COUNT(*) WARNINGS / ERRORS, comments and a
// trailing ';' allowed.
func ParseShowDiagnostics(q string) (ShowDiagnostics, bool) {
	var d ShowDiagnostics
	t := NewTokenizer(q)
	word := func(kw string) bool {
		tok := t.Next()
		return tok.Kind == TokWord && eqFold(tok.Text(q), kw)
	}
	punct := func(p string) bool { return t.Next().is(q, p) }
	if !word("SHOW") {
		return d, false
	}
	tok := t.Next()
	if tok.Kind == TokWord && eqFold(tok.Text(q), "COUNT") {
		if !punct("(") || !punct("*") || !punct(")") {
			return d, false
		}
		d.Count = true
		tok = t.Next()
	}
	switch {
	case tok.Kind == TokWord && eqFold(tok.Text(q), "WARNINGS"):
	case tok.Kind == TokWord && eqFold(tok.Text(q), "ERRORS"):
		d.Errors = true
	default:
		return d, false
	}
	number := func() (uint64, bool) {
		tok := t.Next()
		if tok.Kind != TokNumber {
			return 0, false
		}
		n, err := strconv.ParseUint(tok.Text(q), 10, 64)
		return n, err == nil
	}
	tok = t.Next()
	if !d.Count && tok.Kind == TokWord && eqFold(tok.Text(q), "LIMIT") {
		n, ok := number()
		if !ok {
			return d, false
		}
		d.HasLimit, d.Limit = true, n
		la := t
		if la.Next().is(q, ",") {
			t = la
			if d.Offset, ok = d.Limit, true; !ok {
				return d, false
			}
			if d.Limit, ok = number(); !ok {
				return d, false
			}
		}
		tok = t.Next()
	}
	for tok.is(q, ";") {
		tok = t.Next()
	}
	return d, tok.Kind == TokEOF
}

// Diagnostics are the values a statement about the previous one reads.
type Diagnostics struct {
	// RowCount is ROW_COUNT() (Rows: it is known).
	Rows     bool
	RowCount int64
	// Counts: WarningCount and ErrorCount are known (else
	// @@warning_count and @@error_count are left to the server).
	Counts                   bool
	WarningCount, ErrorCount uint64
}

// Replacement is one expression ReplaceDiagnostics replaced: as the
// client spelled it, and the value put in its place (which a result
// column selecting it is named after).
type Replacement struct{ Spelling, Value string }

// ReplaceDiagnostics returns q with every ROW_COUNT() call (with d.Rows)
// and every @@warning_count and @@error_count (with d.Counts) outside
// strings, identifiers and comments replaced by its value in d, and the
// replacements in the order of the text; with none, q comes back
// unchanged.
//
// A proxy that ran the previous statement as part of a sequence of its
// own (see package outcome: wrapped autocommit writes) uses it so that
// the client reads what the statement alone would have left.
func ReplaceDiagnostics(q string, d Diagnostics) (out string, done []Replacement) {
	t := NewTokenizer(q)
	var b []byte
	last := 0
	for {
		tok := t.Next()
		if tok.Kind == TokEOF {
			break
		}
		var v string
		end := tok.End
		switch {
		case tok.Kind == TokWord && d.Rows && eqFold(tok.Text(q), "ROW_COUNT"):
			la := t
			if !la.Next().is(q, "(") {
				continue
			}
			closing := la.Next()
			if !closing.is(q, ")") {
				continue
			}
			t, end = la, closing.End
			v = strconv.FormatInt(d.RowCount, 10)
		case tok.Kind == TokSysVar && d.Counts:
			text := tok.Text(q)
			name := sysVarName(text)
			switch {
			case len(text) > 9 && eqFold(text[2:9], "GLOBAL."):
				continue
			case eqFold(name, "WARNING_COUNT"):
				v = strconv.FormatUint(d.WarningCount, 10)
			case eqFold(name, "ERROR_COUNT"):
				v = strconv.FormatUint(d.ErrorCount, 10)
			default:
				continue
			}
		default:
			continue
		}
		done = append(done, Replacement{Spelling: q[tok.Start:end], Value: v})
		b = append(b, q[last:tok.Start]...)
		b = append(b, v...)
		last = end
	}
	if len(done) == 0 {
		return q, nil
	}
	b = append(b, q[last:]...)
	return string(b), done
}

// UsesNoTable says whether a statement of class r certainly reads and
// writes no table: a SELECT, DO or SET without FROM (nor a TABLE or
// VALUES statement). The server keeps the previous statement's warnings
// across such a statement when it raises none itself.
func UsesNoTable(q string, r Result) bool {
	if r.MultiStatement || (r.Kind != Select && r.Kind != Do && r.Kind != Set) {
		return false
	}
	t := NewTokenizer(q)
	first := true
	for {
		tok := t.Next()
		switch {
		case tok.Kind == TokEOF:
			return true
		case tok.Kind != TokWord:
		case eqFold(tok.Text(q), "FROM"), first && (eqFold(tok.Text(q), "TABLE") || eqFold(tok.Text(q), "VALUES") || eqFold(tok.Text(q), "WITH")):
			return false
		}
		first = false
	}
}

// HasReturning says whether a statement has the word RETURNING outside
// strings, identifiers and comments: INSERT, REPLACE or DELETE ...
// RETURNING answer with a result set.
func HasReturning(q string) bool {
	t := NewTokenizer(q)
	for {
		switch tok := t.Next(); {
		case tok.Kind == TokEOF:
			return false
		case tok.Kind == TokWord && eqFold(tok.Text(q), "RETURNING"):
			return true
		}
	}
}
