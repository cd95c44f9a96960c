package sqlclass

// classifyMulti splits a multi-statement text at its top-level ';'s,
// classifies each part and merges the results. It is the slow path: the
// per-part results are kept, which allocates. Parts holding only comments
// or ';' are dropped; if a single real statement remains (as in
// "; SELECT 1") its result is returned as a plain single statement.
func classifyMulti(sql string) Result {
	t := NewTokenizer(sql)
	var parts []Statement
	// Every round consumes at least one token, and an Empty part at the
	// end of input leaves the offset at len(sql), so this is linear even
	// for a long run of ';'s.
	for t.Offset() < len(sql) {
		start := t.Offset()
		r, end := classifyStmt(&t)
		if r.Kind != Empty {
			parts = append(parts, Statement{Text: trimSpace(sql[start:end]), Result: r})
		}
	}
	switch len(parts) {
	case 0:
		return Result{Kind: Empty}
	case 1:
		return parts[0].Result
	}
	return merge(parts)
}

// merge combines the parts' results into the most conservative one: it
// writes if any part writes, carries every state effect of every part, and
// takes its Kind from the first part that writes (or the first part when
// none does). TempTable is TempCreate if any part creates a temporary
// table; callers that count temporary tables should walk Statements.
func merge(parts []Statement) Result {
	m := Result{MultiStatement: true, parts: parts}
	for i := range parts {
		p := &parts[i].Result
		if i == 0 || (p.write && !m.write) {
			m.Kind = p.Kind
		}
		if m.Hint == HintNone {
			m.Hint, m.HostGroup = p.Hint, p.HostGroup
		}
		m.write = m.write || p.write
		m.ReadOnlyTxn = m.ReadOnlyTxn || p.ReadOnlyTxn
		m.Chain = m.Chain || p.Chain
		m.Release = m.Release || p.Release
		m.Locking = m.Locking || p.Locking
		m.Into = m.Into || p.Into
		m.Local = m.Local || p.Local
		m.ImplicitCommit = m.ImplicitCommit || p.ImplicitCommit
		m.UsesUserVars = m.UsesUserVars || p.UsesUserVars
		m.NeedsSameConn = m.NeedsSameConn || p.NeedsSameConn
		m.UsesLastInsertID = m.UsesLastInsertID || p.UsesLastInsertID
		m.UsesConnectionID = m.UsesConnectionID || p.UsesConnectionID
		m.AdvisoryLock |= p.AdvisoryLock
		if p.TempTable == TempCreate || m.TempTable == TempNone {
			if p.TempTable != TempNone {
				m.TempTable = p.TempTable
			}
		}
	}
	if m.write {
		// A read-only transaction cannot hold a write; let the server say
		// so on the writer rather than route the lot to a reader.
		m.ReadOnlyTxn = false
	}
	return m
}
