package admin

import (
	"strconv"
	"strings"

	"github.com/galeon-db/galeon/internal/mysqlproto"
)

// Conditions, loosest binding first:
//
//	expr      := and { OR and }
//	and       := not { AND not }
//	not       := NOT not | predicate
//	predicate := '(' expr ')'
//	           | scalar [ cmp scalar | [NOT] LIKE scalar | [NOT] IN '(' scalar {, scalar} ')'
//	                    | [NOT] BETWEEN scalar AND scalar | IS [NOT] NULL ]
//	scalar    := number | -number | string | NULL | TRUE | FALSE | column | @@var | name '(' args ')'

func (p *parser) expr() (Expr, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer p.leave()
	l, err := p.andExpr()
	if err != nil {
		return nil, err
	}
	for p.acceptKw("or") || p.acceptPunct("||") {
		r, err := p.andExpr()
		if err != nil {
			return nil, err
		}
		l = &Logical{L: l, R: r}
	}
	return l, nil
}

func (p *parser) andExpr() (Expr, error) {
	l, err := p.notExpr()
	if err != nil {
		return nil, err
	}
	for p.acceptKw("and") || p.acceptPunct("&&") {
		r, err := p.notExpr()
		if err != nil {
			return nil, err
		}
		l = &Logical{And: true, L: l, R: r}
	}
	return l, nil
}

func (p *parser) notExpr() (Expr, error) {
	if p.acceptKw("not") || p.acceptPunct("!") {
		if err := p.enter(); err != nil {
			return nil, err
		}
		defer p.leave()
		x, err := p.notExpr()
		if err != nil {
			return nil, err
		}
		return &Not{X: x}, nil
	}
	return p.predicate()
}

// enter and leave track nesting depth; see maxDepth.
func (p *parser) enter() error {
	p.depth++
	if p.depth > maxDepth {
		return sqlErr(mysqlproto.ErParseError, "You have an error in your SQL syntax: expression nested more than %d levels deep", maxDepth)
	}
	return nil
}

func (p *parser) leave() { p.depth-- }

var compareOps = map[string]string{"=": "=", "==": "=", "!=": "!=", "<>": "!=", "<": "<", "<=": "<=", ">": ">", ">=": ">=", "<=>": "<=>"}

func (p *parser) predicate() (Expr, error) {
	if p.acceptPunct("(") {
		x, err := p.expr()
		if err != nil {
			return nil, err
		}
		if err := p.expectPunct(")"); err != nil {
			return nil, err
		}
		return x, nil
	}
	x, err := p.scalar("a condition (column = value, column LIKE 'pattern', column IN (...), column IS NULL)")
	if err != nil {
		return nil, err
	}
	t := p.peek()
	if t.kind == tokPunct {
		if op, ok := compareOps[t.text]; ok {
			p.i++
			r, err := p.scalar("a value to compare with")
			if err != nil {
				return nil, err
			}
			return &Compare{Op: op, L: x, R: r}, nil
		}
	}
	if p.acceptKw("is") {
		not := p.acceptKw("not")
		if err := p.expectKw("null"); err != nil {
			return nil, err
		}
		return &IsNull{X: x, Not: not}, nil
	}
	not := p.acceptKw("not")
	switch {
	case p.acceptKw("like"):
		pat, err := p.scalar("a pattern after LIKE")
		if err != nil {
			return nil, err
		}
		return &Like{X: x, Pattern: pat, Not: not}, nil
	case p.acceptKw("in"):
		if err := p.expectPunct("("); err != nil {
			return nil, err
		}
		in := &In{X: x, Not: not}
		for {
			v, err := p.scalar("a value in the IN list")
			if err != nil {
				return nil, err
			}
			in.List = append(in.List, v)
			if !p.acceptPunct(",") {
				break
			}
		}
		if err := p.expectPunct(")"); err != nil {
			return nil, err
		}
		return in, nil
	case p.acceptKw("between"):
		lo, err := p.scalar("the lower bound after BETWEEN")
		if err != nil {
			return nil, err
		}
		if err := p.expectKw("and"); err != nil {
			return nil, err
		}
		hi, err := p.scalar("the upper bound after BETWEEN ... AND")
		if err != nil {
			return nil, err
		}
		return &Between{X: x, Lo: lo, Hi: hi, Not: not}, nil
	case not:
		return nil, p.fail("LIKE, IN or BETWEEN after NOT")
	}
	return &Truth{X: x}, nil
}

// introducers are charset prefixes drivers put before string literals
// (go-sql-driver writes []byte arguments as _binary'...').
var introducers = map[string]bool{"_binary": true, "_utf8": true, "_utf8mb4": true, "_utf8mb3": true, "_latin1": true, "_ascii": true}

// scalar reads a value or column; what describes the expected thing for
// the error message.
func (p *parser) scalar(what string) (Expr, error) {
	t := p.peek()
	switch t.kind {
	case tokNumber:
		p.i++
		return &Literal{Value: numberLiteral(t.text)}, nil
	case tokString:
		p.i++
		return &Literal{Value: t.text}, nil
	case tokSysVar:
		p.i++
		name := t.text
		for _, scope := range []string{"session.", "global.", "local."} {
			name = strings.TrimPrefix(name, scope)
		}
		return &SysVar{Name: name}, nil
	case tokUserVar:
		return nil, sqlErr(mysqlproto.ErNotSupportedYet, "user variables (@%s) are not supported on the admin interface", t.text)
	case tokPunct:
		switch t.text {
		case "-", "+":
			n := p.peekAt(1)
			if n.kind != tokNumber {
				p.i++
				return nil, p.fail("a number after " + t.text)
			}
			p.i += 2
			v := numberLiteral(n.text)
			if t.text == "-" {
				v = negate(v)
			}
			return &Literal{Value: v}, nil
		case "?":
			return nil, sqlErr(mysqlproto.ErParseError,
				"You have an error in your SQL syntax: placeholders (?) need prepared statements, which the admin interface does not support; write the values into the query (go-sql-driver: interpolateParams=true)")
		}
	case tokWord:
		lw := strings.ToLower(t.text)
		switch lw {
		case "null":
			p.i++
			return &Literal{Value: nil}, nil
		case "true", "false":
			p.i++
			return &Literal{Value: map[string]int64{"true": 1, "false": 0}[lw]}, nil
		}
		if n := p.peekAt(1); introducers[lw] && n.kind == tokString {
			p.i += 2
			return &Literal{Value: n.text}, nil
		}
		if n := p.peekAt(1); n.kind == tokPunct && n.text == "(" && n.pos == t.end {
			return p.funcCall()
		}
	}
	if t.kind == tokWord || t.kind == tokQuoted {
		name, pos, err := p.columnName()
		if err != nil {
			return nil, p.fail(what)
		}
		return &ColumnRef{Name: name, Pos: pos}, nil
	}
	return nil, p.fail(what)
}

// funcCall reads name(args) or name(*).
func (p *parser) funcCall() (Expr, error) {
	t := p.next()
	p.next() // (
	fc := &FuncCall{Name: strings.ToLower(t.text), Pos: t.pos}
	switch {
	case p.acceptPunct("*"):
		fc.Star = true
	case p.atPunct(")"):
	default:
		for {
			a, err := p.scalar("a function argument")
			if err != nil {
				return nil, err
			}
			fc.Args = append(fc.Args, a)
			if !p.acceptPunct(",") {
				break
			}
		}
	}
	if err := p.expectPunct(")"); err != nil {
		return nil, err
	}
	return fc, nil
}

// numberLiteral converts a lexed number: int64 when written without a
// fraction or exponent and in range, float64 otherwise.
func numberLiteral(s string) any {
	if !strings.ContainsAny(s, ".eE") {
		if i, err := strconv.ParseInt(s, 10, 64); err == nil {
			return i
		}
	}
	f, _ := strconv.ParseFloat(s, 64) // the lexer only produces valid numbers; overflow gives ±Inf
	return f
}

func negate(v any) any {
	switch x := v.(type) {
	case int64:
		if x == -x && x != 0 { // MinInt64 cannot be negated
			return -float64(x)
		}
		return -x
	case float64:
		return -x
	}
	return v
}
