package admin

import (
	"fmt"

	"github.com/galeon-db/galeon/internal/mysqlproto"
)

// Error codes the admin interface sends that mysqlproto does not name
// (it lists those a relaying proxy needs). Numbers and SQLSTATEs are
// MySQL's, so clients and drivers classify them as usual.
const (
	erOpenAsReadOnly        mysqlproto.ErrorCode = 1036 // ER_OPEN_AS_READONLY: table is read only
	erBadNull               mysqlproto.ErrorCode = 1048 // ER_BAD_NULL_ERROR: column cannot be null
	erBadField              mysqlproto.ErrorCode = 1054 // ER_BAD_FIELD_ERROR: unknown column
	erNonUniq               mysqlproto.ErrorCode = 1052 // ER_NON_UNIQ_ERROR: ambiguous column
	erEmptyQuery            mysqlproto.ErrorCode = 1065 // ER_EMPTY_QUERY
	erNoTablesUsed          mysqlproto.ErrorCode = 1096 // ER_NO_TABLES_USED: SELECT * without FROM
	erInvalidGroupFuncUse   mysqlproto.ErrorCode = 1111 // ER_INVALID_GROUP_FUNC_USE
	erWrongValueCount       mysqlproto.ErrorCode = 1136 // ER_WRONG_VALUE_COUNT_ON_ROW
	erTableAccessDenied     mysqlproto.ErrorCode = 1142 // ER_TABLEACCESS_DENIED_ERROR
	erNoSuchTable           mysqlproto.ErrorCode = 1146 // ER_NO_SUCH_TABLE
	erUnknownSystemVariable mysqlproto.ErrorCode = 1193 // ER_UNKNOWN_SYSTEM_VARIABLE
	erOutOfRange            mysqlproto.ErrorCode = 1264 // ER_WARN_DATA_OUT_OF_RANGE
	erUnsupportedPS         mysqlproto.ErrorCode = 1295 // ER_UNSUPPORTED_PS
	erSPDoesNotExist        mysqlproto.ErrorCode = 1305 // ER_SP_DOES_NOT_EXIST: unknown function
	erTruncatedWrongValue   mysqlproto.ErrorCode = 1366 // ER_TRUNCATED_WRONG_VALUE_FOR_FIELD
	erWrongParamCount       mysqlproto.ErrorCode = 1582 // ER_WRONG_PARAMCOUNT_TO_NATIVE_FCT
)

// sqlStates for the codes above whose SQLSTATE is not HY000.
var localSQLStates = map[mysqlproto.ErrorCode]string{
	erBadNull:             "23000",
	erBadField:            "42S22",
	erNonUniq:             "23000",
	erTableAccessDenied:   "42000",
	erEmptyQuery:          "42000",
	erWrongValueCount:     "21S01",
	erNoSuchTable:         "42S02",
	erOutOfRange:          "22003",
	erSPDoesNotExist:      "42000",
	erTruncatedWrongValue: "22007",
	erWrongParamCount:     "42000",
}

// sqlErr builds the error sent to the client. Everything the SQL layer
// returns to an operator is an *mysqlproto.SQLError, so the connection
// code never has to guess a code.
func sqlErr(code mysqlproto.ErrorCode, format string, args ...any) *mysqlproto.SQLError {
	e := mysqlproto.NewSQLError(code, format, args...)
	if s, ok := localSQLStates[code]; ok {
		e.State = s
	}
	return e
}

// syntaxErrAt reports a parse error at byte offset pos of src, quoting the
// text there the way MySQL's "near '...'" does and saying what the parser
// expected, which is what an operator needs to fix a typo.
func syntaxErrAt(src string, pos int, expected string) *mysqlproto.SQLError {
	if pos >= len(src) {
		return sqlErr(mysqlproto.ErParseError, "You have an error in your SQL syntax: expected %s at the end of the query", expected)
	}
	near := src[pos:]
	if len(near) > 40 {
		near = near[:40] + "..."
	}
	return sqlErr(mysqlproto.ErParseError, "You have an error in your SQL syntax: expected %s near '%s' (position %d)", expected, near, pos)
}

// unknownTable lists the tables so the operator can see what exists.
func (c *catalog) unknownTable(name string) *mysqlproto.SQLError {
	return sqlErr(erNoSuchTable, "Table 'main.%s' doesn't exist; tables: %s", name, c.names())
}

// wrongValue reports a literal that does not fit a column's kind.
func wrongValue(col Column, v any, cerr *convertError) *mysqlproto.SQLError {
	if cerr != nil && cerr.outOfRange {
		return sqlErr(erOutOfRange, "Out of range value for column '%s'", col.Name)
	}
	what := map[Kind]string{Int: "integer", Float: "double", Text: "string"}[col.Kind]
	s, _ := formatValue(v)
	return sqlErr(erTruncatedWrongValue, "Incorrect %s value: '%s' for column '%s'", what, s, col.Name)
}

// internalErr wraps a failure that is not the operator's doing (a table
// function panicked) without hiding it.
func internalErr(v any) *mysqlproto.SQLError {
	return sqlErr(mysqlproto.ErUnknownError, "internal error in the admin interface: %s", fmt.Sprint(v))
}
