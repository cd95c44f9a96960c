package admin

// The syntax tree of the admin dialect. It records what was written, not
// what it means: table and column names are resolved, and literals
// checked against column kinds, when a statement is executed (see
// exec.go), because the same text may be valid against one table and not
// another.

// Statement is one parsed statement.
type Statement interface{ stmt() }

// TableName is a possibly schema-qualified table name.
type TableName struct {
	Schema string // "" when not written
	Name   string
	Pos    int
}

// SelectStmt is SELECT items [FROM t] [WHERE] [ORDER BY] [LIMIT].
type SelectStmt struct {
	Star    bool         // SELECT *
	Items   []SelectItem // when not Star
	From    *TableName   // nil for SELECT 1, SELECT @@version ...
	Where   Expr         // nil when absent
	OrderBy []OrderItem
	Limit   int64 // -1 when absent
	Offset  int64
}

// SelectItem is one expression of a select list.
type SelectItem struct {
	Expr  Expr
	Alias string // "" when not given
	Text  string // the expression as written: the default column name
}

// OrderItem is one ORDER BY key.
type OrderItem struct {
	Col  *ColumnRef
	Desc bool
}

// UpdateStmt is UPDATE t SET col = value, ... [WHERE].
type UpdateStmt struct {
	Table TableName
	Set   []Assignment
	Where Expr
}

// Assignment is col = value in SET.
type Assignment struct {
	Col   *ColumnRef
	Value Expr
}

// InsertStmt is INSERT INTO t [(cols)] VALUES (...) or INSERT INTO t SET ...
// Columns is nil when the statement lists values for every column.
type InsertStmt struct {
	Table   TableName
	Columns []*ColumnRef
	Values  []Expr
}

// DeleteStmt is DELETE FROM t [WHERE].
type DeleteStmt struct {
	Table TableName
	Where Expr
}

// ShowKind says which SHOW (or DESCRIBE) statement was given.
type ShowKind uint8

// SHOW variants.
const (
	ShowTables ShowKind = iota + 1
	ShowDatabases
	ShowColumns // also DESCRIBE t
	ShowVariables
	ShowStatus
	ShowWarnings // also SHOW ERRORS
	ShowCreateTable
)

// ShowStmt is SHOW ... [LIKE 'pattern' | WHERE expr], or DESCRIBE t.
type ShowStmt struct {
	Kind  ShowKind
	Full  bool
	Table *TableName // SHOW COLUMNS, DESCRIBE, SHOW CREATE TABLE
	Like  *string    // pattern on the first column
	Where Expr
}

// SetStmt is any SET statement. Clients send SET NAMES, SET autocommit and
// similar on connect; the admin interface has no session state, so they
// are accepted and ignored.
type SetStmt struct{}

// UseStmt is USE db; any name is accepted.
type UseStmt struct{ DB string }

// TxKind is a transaction-control statement.
type TxKind uint8

// Transaction statements.
const (
	TxBegin TxKind = iota + 1
	TxCommit
	TxRollback
)

// TxStmt is BEGIN / START TRANSACTION / COMMIT / ROLLBACK.
type TxStmt struct{ Kind TxKind }

func (*SelectStmt) stmt() {}
func (*UpdateStmt) stmt() {}
func (*InsertStmt) stmt() {}
func (*DeleteStmt) stmt() {}
func (*ShowStmt) stmt()   {}
func (*SetStmt) stmt()    {}
func (*UseStmt) stmt()    {}
func (*TxStmt) stmt()     {}

// Expr is a condition or scalar expression.
type Expr interface{ expr() }

// ColumnRef names a column; a table qualifier (t.col) is dropped by the
// parser since every statement reads one table.
type ColumnRef struct {
	Name string
	Pos  int
}

// Literal is a constant: int64, float64, string or nil (NULL).
type Literal struct{ Value any }

// SysVar is @@name (scope prefixes such as @@session. removed).
type SysVar struct{ Name string }

// FuncCall is name(args) or COUNT(*). Name is lower-case.
type FuncCall struct {
	Name string
	Star bool
	Args []Expr
	Pos  int
}

// Compare is l op r with op one of = != < <= > >= <=>.
type Compare struct {
	Op   string
	L, R Expr
}

// Logical is l AND r or l OR r.
type Logical struct {
	And  bool
	L, R Expr
}

// Not negates a condition.
type Not struct{ X Expr }

// Like is x [NOT] LIKE pattern.
type Like struct {
	X, Pattern Expr
	Not        bool
}

// In is x [NOT] IN (list).
type In struct {
	X    Expr
	List []Expr
	Not  bool
}

// IsNull is x IS [NOT] NULL.
type IsNull struct {
	X   Expr
	Not bool
}

// Between is x [NOT] BETWEEN lo AND hi.
type Between struct {
	X, Lo, Hi Expr
	Not       bool
}

// Truth is a scalar used as a condition (WHERE active).
type Truth struct{ X Expr }

func (*ColumnRef) expr() {}
func (*Literal) expr()   {}
func (*SysVar) expr()    {}
func (*FuncCall) expr()  {}
func (*Compare) expr()   {}
func (*Logical) expr()   {}
func (*Not) expr()       {}
func (*Like) expr()      {}
func (*In) expr()        {}
func (*IsNull) expr()    {}
func (*Between) expr()   {}
func (*Truth) expr()     {}
