package sqlclass

import "strconv"

// ReplaceConnectionID returns q with every call CONNECTION_ID() (outside
// strings, identifiers and comments) replaced by id, and the spelling of
// the first call as the client wrote it (for the column name a
// "SELECT CONNECTION_ID()" result carries). n is how many calls were
// replaced; with none, q comes back unchanged.
//
// A proxy that multiplexes sessions over pooled connections must do this:
// the server's CONNECTION_ID() names whichever pooled connection runs the
// statement, while the client's session, its KILL target and its
// processlist entry are the proxy's.
func ReplaceConnectionID(q string, id uint32) (out, spelling string, n int) {
	t := NewTokenizer(q)
	var b []byte
	last := 0
	for {
		tok := t.Next()
		if tok.Kind == TokEOF {
			break
		}
		if tok.Kind != TokWord || !eqFold(tok.Text(q), "CONNECTION_ID") {
			continue
		}
		la := t
		open := la.Next()
		if !open.is(q, "(") {
			continue
		}
		closing := la.Next()
		if !closing.is(q, ")") {
			continue
		}
		t = la
		if n == 0 {
			spelling = q[tok.Start:closing.End]
		}
		b = append(b, q[last:tok.Start]...)
		b = strconv.AppendUint(b, uint64(id), 10)
		last = closing.End
		n++
	}
	if n == 0 {
		return q, "", 0
	}
	b = append(b, q[last:]...)
	return string(b), spelling, n
}
