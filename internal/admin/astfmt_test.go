package admin

import (
	"fmt"
	"strconv"
	"strings"
)

// formatStmt renders a statement in a canonical, fully parenthesised
// form, so parser tests can state the expected tree as one readable line
// and precedence mistakes show up as misplaced parentheses.
func formatStmt(st Statement) string {
	switch s := st.(type) {
	case *SelectStmt:
		var b strings.Builder
		b.WriteString("SELECT ")
		if s.Star {
			b.WriteString("*")
		}
		for i, it := range s.Items {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(formatExpr(it.Expr))
			if it.Alias != "" {
				b.WriteString(" AS " + it.Alias)
			}
		}
		if s.From != nil {
			b.WriteString(" FROM " + formatTable(*s.From))
		}
		if s.Where != nil {
			b.WriteString(" WHERE " + formatExpr(s.Where))
		}
		for i, o := range s.OrderBy {
			if i == 0 {
				b.WriteString(" ORDER BY ")
			} else {
				b.WriteString(", ")
			}
			b.WriteString(o.Col.Name)
			if o.Desc {
				b.WriteString(" DESC")
			}
		}
		if s.Limit >= 0 {
			fmt.Fprintf(&b, " LIMIT %d", s.Limit)
		}
		if s.Offset > 0 {
			fmt.Fprintf(&b, " OFFSET %d", s.Offset)
		}
		return b.String()
	case *UpdateStmt:
		var sets []string
		for _, a := range s.Set {
			sets = append(sets, a.Col.Name+" = "+formatExpr(a.Value))
		}
		out := "UPDATE " + formatTable(s.Table) + " SET " + strings.Join(sets, ", ")
		if s.Where != nil {
			out += " WHERE " + formatExpr(s.Where)
		}
		return out
	case *InsertStmt:
		var cols, vals []string
		for _, c := range s.Columns {
			cols = append(cols, c.Name)
		}
		for _, v := range s.Values {
			vals = append(vals, formatExpr(v))
		}
		out := "INSERT INTO " + formatTable(s.Table)
		if s.Columns != nil {
			out += " (" + strings.Join(cols, ", ") + ")"
		}
		return out + " VALUES (" + strings.Join(vals, ", ") + ")"
	case *DeleteStmt:
		out := "DELETE FROM " + formatTable(s.Table)
		if s.Where != nil {
			out += " WHERE " + formatExpr(s.Where)
		}
		return out
	case *ShowStmt:
		kinds := map[ShowKind]string{ShowTables: "TABLES", ShowDatabases: "DATABASES", ShowColumns: "COLUMNS",
			ShowVariables: "VARIABLES", ShowStatus: "STATUS", ShowWarnings: "WARNINGS", ShowCreateTable: "CREATE TABLE"}
		out := "SHOW "
		if s.Full {
			out += "FULL "
		}
		out += kinds[s.Kind]
		if s.Table != nil {
			out += " " + formatTable(*s.Table)
		}
		if s.Like != nil {
			out += " LIKE " + strconv.Quote(*s.Like)
		}
		if s.Where != nil {
			out += " WHERE " + formatExpr(s.Where)
		}
		return out
	case *SetStmt:
		return "SET"
	case *UseStmt:
		return "USE " + s.DB
	case *TxStmt:
		return map[TxKind]string{TxBegin: "BEGIN", TxCommit: "COMMIT", TxRollback: "ROLLBACK"}[s.Kind]
	}
	return fmt.Sprintf("%T", st)
}

func formatTable(t TableName) string {
	if t.Schema != "" {
		return t.Schema + "." + t.Name
	}
	return t.Name
}

func formatExpr(e Expr) string {
	not := func(b bool) string {
		if b {
			return "NOT "
		}
		return ""
	}
	switch x := e.(type) {
	case *ColumnRef:
		return x.Name
	case *Literal:
		switch v := x.Value.(type) {
		case nil:
			return "NULL"
		case string:
			return strconv.Quote(v)
		case float64:
			return strconv.FormatFloat(v, 'g', -1, 64) + "f"
		}
		return fmt.Sprint(x.Value)
	case *SysVar:
		return "@@" + x.Name
	case *FuncCall:
		if x.Star {
			return x.Name + "(*)"
		}
		var args []string
		for _, a := range x.Args {
			args = append(args, formatExpr(a))
		}
		return x.Name + "(" + strings.Join(args, ", ") + ")"
	case *Compare:
		return "(" + formatExpr(x.L) + " " + x.Op + " " + formatExpr(x.R) + ")"
	case *Logical:
		op := " OR "
		if x.And {
			op = " AND "
		}
		return "(" + formatExpr(x.L) + op + formatExpr(x.R) + ")"
	case *Not:
		return "(NOT " + formatExpr(x.X) + ")"
	case *Like:
		return "(" + formatExpr(x.X) + " " + not(x.Not) + "LIKE " + formatExpr(x.Pattern) + ")"
	case *In:
		var items []string
		for _, v := range x.List {
			items = append(items, formatExpr(v))
		}
		return "(" + formatExpr(x.X) + " " + not(x.Not) + "IN (" + strings.Join(items, ", ") + "))"
	case *IsNull:
		return "(" + formatExpr(x.X) + " IS " + not(x.Not) + "NULL)"
	case *Between:
		return "(" + formatExpr(x.X) + " " + not(x.Not) + "BETWEEN " + formatExpr(x.Lo) + " AND " + formatExpr(x.Hi) + ")"
	case *Truth:
		return "TRUTH(" + formatExpr(x.X) + ")"
	}
	return fmt.Sprintf("%T", e)
}
