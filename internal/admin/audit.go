package admin

import (
	"errors"
	"log/slog"
	"slices"
	"strings"

	mp "github.com/galeon-db/galeon/internal/mysqlproto"
)

// Every attempted change is logged: who, from where, what, and the
// outcome. It is the trail an operator needs after "who drained that
// node?". Statements that name a table with a Sensitive column are logged
// with their literals replaced by '?', so passwords typed into the admin
// interface do not end up in log files.

// audit logs one write statement of query q.
func (sc *sqlConn) audit(q string, st *statement, res *result, err error) {
	auditWrite(sc.log, sc.srv.eng.cat, sc.sess.user, q, st, res, err)
}

// auditWrite logs one write statement of query q run by user, over SQL or
// from the dashboard.
func auditWrite(log *slog.Logger, cat *catalog, user, q string, st *statement, res *result, err error) {
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

// mentionsSensitive reports whether a statement names a table that has a
// Sensitive column. It errs on the side of withholding: a statement can
// reach a column without naming it (INSERT without a column list, SET
// with an expression), so naming the table is enough.
func mentionsSensitive(cat *catalog, st *statement) bool {
	for _, t := range st.toks {
		if t.kind != tokWord && t.kind != tokQuoted {
			continue
		}
		if tb := cat.lookup(t.text); tb != nil && slices.ContainsFunc(tb.Columns, func(c Column) bool { return c.Sensitive }) {
			return true
		}
	}
	return false
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
