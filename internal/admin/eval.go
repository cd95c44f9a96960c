package admin

import (
	"strings"

	"github.com/galeon-db/galeon/internal/mysqlproto"
)

// Expressions are compiled once per statement into closures over a row.
// Compiling resolves column names and converts constants to the kind of
// the column they are compared with, so "unknown column" and "'abc' is not
// a number" are reported even when the table is empty, and the per-row
// work is a slice index and a comparison.

// tri is SQL's three-valued logic: comparisons with NULL are unknown, and
// WHERE keeps a row only when its condition is true.
type tri uint8

const (
	triFalse tri = iota
	triTrue
	unknown
)

func triOf(b bool) tri {
	if b {
		return triTrue
	}
	return triFalse
}

func (t tri) not() tri {
	switch t {
	case triTrue:
		return triFalse
	case triFalse:
		return triTrue
	}
	return unknown
}

type valueFn func(row []any) any

type condFn func(row []any) tri

// scope is what names in an expression refer to: the columns of t (nil
// for SELECT without FROM) and the session's variables and functions.
type scope struct {
	t   *Table
	env *env
}

// scalar is a compiled scalar expression.
type scalar struct {
	fn    valueFn
	kind  Kind // 0 when unknown (a NULL constant)
	col   int  // column index, or -1
	value any  // the value when constant
	isCon bool
}

func constScalar(v any) scalar {
	v = normalize(v)
	k := Kind(0)
	if v != nil {
		k = kindOf(v)
	}
	return scalar{fn: func([]any) any { return v }, kind: k, col: -1, value: v, isCon: true}
}

func compileScalar(e Expr, sc scope) (scalar, error) {
	switch x := e.(type) {
	case *Literal:
		return constScalar(x.Value), nil
	case *ColumnRef:
		if sc.t == nil {
			return scalar{}, unknownColumn(nil, x.Name)
		}
		i := sc.t.column(x.Name)
		if i < 0 {
			return scalar{}, unknownColumn(sc.t, x.Name)
		}
		return scalar{fn: func(row []any) any { return row[i] }, kind: sc.t.Columns[i].Kind, col: i}, nil
	case *SysVar:
		v, err := sc.env.sysVar(x.Name)
		if err != nil {
			return scalar{}, err
		}
		return constScalar(v), nil
	case *FuncCall:
		v, err := sc.env.call(x)
		if err != nil {
			return scalar{}, err
		}
		return constScalar(v), nil
	}
	return scalar{}, sqlErr(mysqlproto.ErParseError, "You have an error in your SQL syntax: a condition cannot be used as a value here")
}

// coerce converts constant operand c to the kind of column operand col
// when they are compared, so that weight = '10' works and weight = 'abc'
// is refused with the column named. Numbers may be compared across Int
// and Float without conversion.
func coerce(c *scalar, col scalar, t *Table) error {
	if !c.isCon || c.value == nil || col.col < 0 {
		return nil
	}
	colDef := t.Columns[col.col]
	target := colDef.Kind
	if target == Text {
		v, _ := convert(c.value, Text)
		*c = constScalar(v)
		return nil
	}
	if c.kind == Int || c.kind == Float {
		return nil
	}
	if f, ok := parseNumber(strings.TrimSpace(c.value.(string))); ok {
		if i, cerr := convert(c.value, Int); cerr == nil {
			*c = constScalar(i)
		} else {
			*c = constScalar(f)
		}
		return nil
	}
	return wrongValue(colDef, c.value, nil)
}

// compilePair compiles both sides of a comparison and converts constants.
func compilePair(l, r Expr, sc scope) (scalar, scalar, error) {
	a, err := compileScalar(l, sc)
	if err != nil {
		return a, a, err
	}
	b, err := compileScalar(r, sc)
	if err != nil {
		return a, b, err
	}
	if err := coerce(&b, a, sc.t); err != nil {
		return a, b, err
	}
	if err := coerce(&a, b, sc.t); err != nil {
		return a, b, err
	}
	return a, b, nil
}

func compileCond(e Expr, sc scope) (condFn, error) {
	switch x := e.(type) {
	case *Logical:
		l, err := compileCond(x.L, sc)
		if err != nil {
			return nil, err
		}
		r, err := compileCond(x.R, sc)
		if err != nil {
			return nil, err
		}
		if x.And {
			return func(row []any) tri {
				a := l(row)
				if a == triFalse {
					return triFalse
				}
				return and3(a, r(row))
			}, nil
		}
		return func(row []any) tri {
			a := l(row)
			if a == triTrue {
				return triTrue
			}
			b := r(row)
			switch {
			case b == triTrue:
				return triTrue
			case a == triFalse && b == triFalse:
				return triFalse
			}
			return unknown
		}, nil
	case *Not:
		c, err := compileCond(x.X, sc)
		if err != nil {
			return nil, err
		}
		return func(row []any) tri { return c(row).not() }, nil
	case *Compare:
		a, b, err := compilePair(x.L, x.R, sc)
		if err != nil {
			return nil, err
		}
		return compareCond(x.Op, a.fn, b.fn), nil
	case *IsNull:
		a, err := compileScalar(x.X, sc)
		if err != nil {
			return nil, err
		}
		return func(row []any) tri { return triOf((a.fn(row) == nil) != x.Not) }, nil
	case *Like:
		return compileLike(x, sc)
	case *In:
		return compileIn(x, sc)
	case *Between:
		lo, err := compileCond(&Compare{Op: ">=", L: x.X, R: x.Lo}, sc)
		if err != nil {
			return nil, err
		}
		hi, err := compileCond(&Compare{Op: "<=", L: x.X, R: x.Hi}, sc)
		if err != nil {
			return nil, err
		}
		return func(row []any) tri {
			t := and3(lo(row), hi(row))
			if x.Not {
				return t.not()
			}
			return t
		}, nil
	case *Truth:
		a, err := compileScalar(x.X, sc)
		if err != nil {
			return nil, err
		}
		return func(row []any) tri { return truthy(a.fn(row)) }, nil
	}
	a, err := compileScalar(e, sc)
	if err != nil {
		return nil, err
	}
	return func(row []any) tri { return truthy(a.fn(row)) }, nil
}

func and3(a, b tri) tri {
	switch {
	case a == triFalse || b == triFalse:
		return triFalse
	case a == triTrue && b == triTrue:
		return triTrue
	}
	return unknown
}

func compareCond(op string, l, r valueFn) condFn {
	return func(row []any) tri {
		a, b := l(row), r(row)
		if op == "<=>" {
			if a == nil || b == nil {
				return triOf(a == nil && b == nil)
			}
			return triOf(compareValues(a, b) == 0)
		}
		if a == nil || b == nil {
			return unknown
		}
		c := compareValues(a, b)
		switch op {
		case "=":
			return triOf(c == 0)
		case "!=":
			return triOf(c != 0)
		case "<":
			return triOf(c < 0)
		case "<=":
			return triOf(c <= 0)
		case ">":
			return triOf(c > 0)
		case ">=":
			return triOf(c >= 0)
		}
		return unknown
	}
}

func compileLike(x *Like, sc scope) (condFn, error) {
	a, err := compileScalar(x.X, sc)
	if err != nil {
		return nil, err
	}
	p, err := compileScalar(x.Pattern, sc)
	if err != nil {
		return nil, err
	}
	return func(row []any) tri {
		v, pat := a.fn(row), p.fn(row)
		if v == nil || pat == nil {
			return unknown
		}
		vs, _ := formatValue(v)
		ps, _ := formatValue(pat)
		return triOf(likeMatch(vs, ps) != x.Not)
	}, nil
}

func compileIn(x *In, sc scope) (condFn, error) {
	a, err := compileScalar(x.X, sc)
	if err != nil {
		return nil, err
	}
	list := make([]valueFn, len(x.List))
	for i, e := range x.List {
		b, err := compileScalar(e, sc)
		if err != nil {
			return nil, err
		}
		if err := coerce(&b, a, sc.t); err != nil {
			return nil, err
		}
		list[i] = b.fn
	}
	return func(row []any) tri {
		v := a.fn(row)
		if v == nil {
			return unknown
		}
		res := triFalse
		for _, f := range list {
			w := f(row)
			if w == nil {
				res = unknown
				continue
			}
			if compareValues(v, w) == 0 {
				res = triTrue
				break
			}
		}
		if x.Not {
			return res.not()
		}
		return res
	}, nil
}

// matchFunc turns a compiled WHERE into the match function a Table's
// Update and Delete receive: it normalises the table's own row first, so
// the condition sees the same values a SELECT would.
func matchFunc(cond condFn, ncols int) func(row []any) bool {
	if cond == nil {
		return func([]any) bool { return true }
	}
	return func(row []any) bool { return cond(normalizeRow(row, ncols)) == triTrue }
}
