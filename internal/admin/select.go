package admin

import (
	"slices"
	"strings"

	"github.com/galeon-db/galeon/internal/mysqlproto"
)

// selectStmt runs a SELECT: read the rows once, filter, sort, cut, then
// project. Tables are small (servers, users, rules), so doing it all in
// memory on a fresh copy is simpler and more predictable than anything
// incremental.
func (en *env) selectStmt(s *SelectStmt) (*result, error) {
	var t *Table
	if s.From != nil {
		var err error
		if t, err = en.table(*s.From); err != nil {
			return nil, err
		}
	}
	return en.selectFrom(t, s)
}

// output is one compiled select-list item.
type output struct {
	col   resultCol
	fn    valueFn
	count bool // COUNT(*)
}

// selectFrom runs s over t; t == nil is a SELECT without FROM, which sees
// one row without columns.
func (en *env) selectFrom(t *Table, s *SelectStmt) (*result, error) {
	outs, aggregate, err := en.outputs(t, s)
	if err != nil {
		return nil, err
	}
	cond, err := en.where(s.Where, t)
	if err != nil {
		return nil, err
	}
	order, err := orderKeys(t, s)
	if err != nil {
		return nil, err
	}

	rows := [][]any{{}}
	if t != nil {
		rows = t.readRows()
	}
	if cond != nil {
		kept := rows[:0:0]
		for _, r := range rows {
			if cond(r) == triTrue {
				kept = append(kept, r)
			}
		}
		rows = kept
	}

	res := &result{cols: make([]resultCol, len(outs))}
	for i, o := range outs {
		res.cols[i] = o.col
	}
	if aggregate {
		row := make([]any, len(outs))
		for i, o := range outs {
			if o.count {
				row[i] = int64(len(rows))
			} else {
				row[i] = o.fn(nil)
			}
		}
		rows = [][]any{row}
		res.rows = cut(rows, s.Offset, s.Limit)
		return res, nil
	}

	if len(order) > 0 {
		slices.SortStableFunc(rows, func(a, b []any) int {
			for _, k := range order {
				if c := compareNullsFirst(a[k.col], b[k.col]); c != 0 {
					if k.desc {
						return -c
					}
					return c
				}
			}
			return 0
		})
	}
	rows = cut(rows, s.Offset, s.Limit)
	res.rows = make([][]any, len(rows))
	for i, r := range rows {
		out := make([]any, len(outs))
		for j, o := range outs {
			out[j] = o.fn(r)
		}
		res.rows[i] = out
	}
	return res, nil
}

// outputs compiles the select list. aggregate is true when it contains
// COUNT(*), which then may only be combined with constants.
func (en *env) outputs(t *Table, s *SelectStmt) ([]output, bool, error) {
	if s.Star {
		if t == nil {
			return nil, false, sqlErr(erNoTablesUsed, "No tables used")
		}
		outs := make([]output, len(t.Columns))
		for i, c := range t.Columns {
			outs[i] = output{
				col: resultCol{name: c.Name, table: t.Name, orgName: c.Name, kind: c.Kind},
				fn:  func(row []any) any { return row[i] },
			}
		}
		return outs, false, nil
	}
	sc := scope{t: t, env: en}
	outs := make([]output, len(s.Items))
	aggregate, perRow := false, false
	for i, item := range s.Items {
		name := item.Text
		if item.Alias != "" {
			name = item.Alias
		}
		if fc, ok := item.Expr.(*FuncCall); ok && fc.Name == "count" {
			if !fc.Star && len(fc.Args) != 1 {
				return nil, false, sqlErr(mysqlproto.ErParseError, "You have an error in your SQL syntax: expected COUNT(*)")
			}
			if !fc.Star {
				// COUNT(col) counts non-NULL values: not worth it here.
				if _, isLit := fc.Args[0].(*Literal); !isLit {
					return nil, false, sqlErr(mysqlproto.ErNotSupportedYet, "only COUNT(*) is supported on the admin interface")
				}
			}
			aggregate = true
			outs[i] = output{col: resultCol{name: name, kind: Int}, count: true}
			continue
		}
		v, err := compileScalar(item.Expr, sc)
		if err != nil {
			return nil, false, err
		}
		col := resultCol{name: name, kind: v.kind}
		if v.kind == 0 {
			col.kind = Text // NULL constant
		}
		if v.col >= 0 {
			perRow = true
			c := t.Columns[v.col]
			col.table, col.orgName = t.Name, c.Name
			if item.Alias == "" {
				col.name = c.Name // not `quoted` or t.qualified as written
			}
		}
		outs[i] = output{col: col, fn: v.fn}
	}
	if aggregate && perRow {
		return nil, false, sqlErr(erMixOfGroupFunc, "COUNT(*) cannot be combined with columns (there is no GROUP BY on the admin interface)")
	}
	return outs, aggregate, nil
}

// orderKey is a resolved ORDER BY key.
type orderKey struct {
	col  int
	desc bool
}

// orderKeys resolves ORDER BY names against the table's columns, or
// against the alias of a selected column.
func orderKeys(t *Table, s *SelectStmt) ([]orderKey, error) {
	keys := make([]orderKey, 0, len(s.OrderBy))
	for _, o := range s.OrderBy {
		i := -1
		if t != nil {
			i = t.column(o.Col.Name)
			if i < 0 {
				for _, item := range s.Items {
					if cr, ok := item.Expr.(*ColumnRef); ok && item.Alias != "" && strings.EqualFold(item.Alias, o.Col.Name) {
						i = t.column(cr.Name)
					}
				}
			}
		}
		if i < 0 {
			return nil, unknownColumn(t, o.Col.Name)
		}
		keys = append(keys, orderKey{col: i, desc: o.Desc})
	}
	return keys, nil
}

// compareNullsFirst orders NULL before every value, as MySQL does.
func compareNullsFirst(a, b any) int {
	switch {
	case a == nil && b == nil:
		return 0
	case a == nil:
		return -1
	case b == nil:
		return 1
	}
	return compareValues(a, b)
}

// cut applies OFFSET and LIMIT (limit < 0: none).
func cut(rows [][]any, offset, limit int64) [][]any {
	if offset >= int64(len(rows)) {
		return rows[:0]
	}
	rows = rows[offset:]
	if limit >= 0 && limit < int64(len(rows)) {
		rows = rows[:limit]
	}
	return rows
}
