package admin

import (
	"errors"
	"log/slog"
	"strings"

	mp "github.com/galeon-db/galeon/internal/mysqlproto"
)

// Every attempted change is logged: who, from where, what, and the
// outcome. It is the trail an operator needs after "who drained that
// node?". Statements that mention a Sensitive column are logged with
// their literals replaced by '?', so passwords typed into the admin
// interface do not end up in log files.

func isWrite(st Statement) bool {
	switch st.(type) {
	case *UpdateStmt, *InsertStmt, *DeleteStmt:
		return true
	}
	return false
}

// audit logs one write statement of query q.
func (sc *sqlConn) audit(q string, st Statement, res *result, err error) {
	auditWrite(sc.log, sc.srv.eng.cat, sc.sess.user, q, st, res, err)
}

// auditWrite logs one write statement of query q run by user, over SQL or
// from the dashboard.
func auditWrite(log *slog.Logger, cat *catalog, user, q string, st Statement, res *result, err error) {
	redact := mentionsSensitive(cat, st)
	if redact {
		q = redactLiterals(q)
	}
	if err != nil {
		msg := err.Error()
		var se *mp.SQLError
		if redact && errors.As(err, &se) {
			// Conversion errors quote the rejected value.
			msg = "error " + formatInt(int64(se.Code))
		}
		log.Info("admin change refused", "user", user, "query", q, "err", msg)
		return
	}
	log.Info("admin change", "user", user, "query", q, "rows", res.affected)
}

// mentionsSensitive reports whether a write statement names a Sensitive
// column (INSERT without a column list names them all).
func mentionsSensitive(cat *catalog, st Statement) bool {
	var tn TableName
	var cols []*ColumnRef
	var where Expr
	switch s := st.(type) {
	case *UpdateStmt:
		tn, where = s.Table, s.Where
		for _, a := range s.Set {
			cols = append(cols, a.Col)
		}
	case *InsertStmt:
		tn, cols = s.Table, s.Columns
		if cols == nil {
			cols = []*ColumnRef{{Name: "*"}}
		}
	case *DeleteStmt:
		tn, where = s.Table, s.Where
	default:
		return false
	}
	t := cat.lookup(tn.Name)
	if t == nil {
		return false
	}
	cols = appendColumnRefs(cols, where)
	for _, c := range cols {
		for _, def := range t.Columns {
			if def.Sensitive && (c.Name == "*" || strings.EqualFold(c.Name, def.Name)) {
				return true
			}
		}
	}
	return false
}

// appendColumnRefs collects the columns an expression refers to.
func appendColumnRefs(dst []*ColumnRef, e Expr) []*ColumnRef {
	switch x := e.(type) {
	case *ColumnRef:
		dst = append(dst, x)
	case *Compare:
		dst = appendColumnRefs(appendColumnRefs(dst, x.L), x.R)
	case *Logical:
		dst = appendColumnRefs(appendColumnRefs(dst, x.L), x.R)
	case *Not:
		dst = appendColumnRefs(dst, x.X)
	case *Like:
		dst = appendColumnRefs(appendColumnRefs(dst, x.X), x.Pattern)
	case *In:
		dst = appendColumnRefs(dst, x.X)
		for _, v := range x.List {
			dst = appendColumnRefs(dst, v)
		}
	case *IsNull:
		dst = appendColumnRefs(dst, x.X)
	case *Between:
		dst = appendColumnRefs(appendColumnRefs(appendColumnRefs(dst, x.X), x.Lo), x.Hi)
	case *Truth:
		dst = appendColumnRefs(dst, x.X)
	}
	return dst
}

// redactLiterals replaces every string and number literal in q by '?'.
func redactLiterals(q string) string {
	toks, err := lex(q)
	if err != nil {
		return "(query withheld)"
	}
	var b strings.Builder
	last := 0
	for _, t := range toks {
		if t.kind == tokString || t.kind == tokNumber {
			b.WriteString(q[last:t.pos])
			b.WriteByte('?')
			last = t.end
		}
	}
	b.WriteString(q[last:])
	return b.String()
}
