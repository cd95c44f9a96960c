package sqlclass

import (
	"errors"
	"reflect"
	"testing"
)

type as = []Assignment

var parseSetTests = []struct {
	sql  string
	want as
}{
	// Plain and scoped system variables.
	{"SET autocommit=0", as{{Scope: ScopeSession, Name: "autocommit", Value: "0"}}},
	{"set AutoCommit = 1", as{{Scope: ScopeSession, Name: "autocommit", Value: "1"}}},
	{"SET autocommit=ON", as{{Scope: ScopeSession, Name: "autocommit", Value: "ON"}}},
	{"SET autocommit = true;", as{{Scope: ScopeSession, Name: "autocommit", Value: "true"}}},
	{"SET autocommit := OFF", as{{Scope: ScopeSession, Name: "autocommit", Value: "OFF"}}},
	{"SET @@session.x = 5", as{{Scope: ScopeSession, Name: "x", Value: "5"}}},
	{"SET @@SESSION.sql_mode = 'TRADITIONAL'", as{{Scope: ScopeSession, Name: "sql_mode", Value: "'TRADITIONAL'"}}},
	{"SET @@local.x = 5", as{{Scope: ScopeSession, Name: "x", Value: "5"}}},
	{"SET @@x = 5", as{{Scope: ScopeSession, Name: "x", Value: "5"}}},
	{"SET @@global.max_connections = 500", as{{Scope: ScopeGlobal, Name: "max_connections", Value: "500"}}},
	{"SET @@persist.x = 1", as{{Scope: ScopePersist, Name: "x", Value: "1"}}},
	{"SET @@persist_only.x = 1", as{{Scope: ScopePersistOnly, Name: "x", Value: "1"}}},
	{"SET LOCAL x = 1", as{{Scope: ScopeSession, Name: "x", Value: "1"}}},
	{"SET SESSION x = 1, y = 2", as{
		{Scope: ScopeSession, Name: "x", Value: "1"},
		{Scope: ScopeSession, Name: "y", Value: "2"},
	}},
	{"SET GLOBAL x = 1, y = 2", as{
		{Scope: ScopeGlobal, Name: "x", Value: "1"},
		{Scope: ScopeGlobal, Name: "y", Value: "2"},
	}},
	{"SET GLOBAL x = 1, SESSION y = 2, z = 3", as{
		{Scope: ScopeGlobal, Name: "x", Value: "1"},
		{Scope: ScopeSession, Name: "y", Value: "2"},
		{Scope: ScopeSession, Name: "z", Value: "3"},
	}},
	{"SET GLOBAL x = 1, @@session.y = 2, z = 3", as{
		{Scope: ScopeGlobal, Name: "x", Value: "1"},
		{Scope: ScopeSession, Name: "y", Value: "2"},
		{Scope: ScopeGlobal, Name: "z", Value: "3"},
	}},
	{"SET PERSIST max_connections = 1000", as{{Scope: ScopePersist, Name: "max_connections", Value: "1000"}}},
	{"SET PERSIST_ONLY back_log = 100", as{{Scope: ScopePersistOnly, Name: "back_log", Value: "100"}}},
	{"SET x := 1", as{{Scope: ScopeSession, Name: "x", Value: "1"}}},
	{"SET `sql_mode` = ''", as{{Scope: ScopeSession, Name: "sql_mode", Value: "''"}}},
	{"SET GLOBAL validate_password.length = 8", as{{Scope: ScopeGlobal, Name: "validate_password.length", Value: "8"}}},
	{"SET @@global.validate_password.length = 8", as{{Scope: ScopeGlobal, Name: "validate_password.length", Value: "8"}}},
	{"SET sql_mode = DEFAULT", as{{Scope: ScopeSession, Name: "sql_mode", Value: "DEFAULT"}}},
	{"SET max_execution_time = @@global.max_execution_time", as{{Scope: ScopeSession, Name: "max_execution_time", Value: "@@global.max_execution_time"}}},

	// User variables.
	{"SET @a = 1", as{{Scope: ScopeUser, Name: "a", Value: "1"}}},
	{"SET @A := 'x'", as{{Scope: ScopeUser, Name: "a", Value: "'x'"}}},
	{"SET @a = 1, @b = 2", as{
		{Scope: ScopeUser, Name: "a", Value: "1"},
		{Scope: ScopeUser, Name: "b", Value: "2"},
	}},
	{"SET @`my var` = 1", as{{Scope: ScopeUser, Name: "my var", Value: "1"}}},
	{"SET @'it''s' = 1", as{{Scope: ScopeUser, Name: "it's", Value: "1"}}},
	{`SET @"q" = 1`, as{{Scope: ScopeUser, Name: "q", Value: "1"}}},
	{"SET @a.b = 1", as{{Scope: ScopeUser, Name: "a.b", Value: "1"}}},
	{"SET @a = 1, autocommit = 0", as{
		{Scope: ScopeUser, Name: "a", Value: "1"},
		{Scope: ScopeSession, Name: "autocommit", Value: "0"},
	}},

	// Values are copied verbatim.
	{"SET @a = CONCAT('a,b', \"c;d\")", as{{Scope: ScopeUser, Name: "a", Value: "CONCAT('a,b', \"c;d\")"}}},
	{"SET @a = 'it''s, ok', @b = 'x\\'y,z'", as{
		{Scope: ScopeUser, Name: "a", Value: "'it''s, ok'"},
		{Scope: ScopeUser, Name: "b", Value: "'x\\'y,z'"},
	}},
	{"SET @a = IF((1 > 0), (SELECT MAX(id) FROM t WHERE a IN (1, 2)), 0), @b = 2", as{
		{Scope: ScopeUser, Name: "a", Value: "IF((1 > 0), (SELECT MAX(id) FROM t WHERE a IN (1, 2)), 0)"},
		{Scope: ScopeUser, Name: "b", Value: "2"},
	}},
	{"SET @a =   1 + 2   ;", as{{Scope: ScopeUser, Name: "a", Value: "1 + 2"}}},
	{"SET sql_mode = CONCAT(@@sql_mode, ',STRICT_ALL_TABLES')", as{{Scope: ScopeSession, Name: "sql_mode", Value: "CONCAT(@@sql_mode, ',STRICT_ALL_TABLES')"}}},
	{"SET @a = 1 /* c */ + 2 -- tail", as{{Scope: ScopeUser, Name: "a", Value: "1 /* c */ + 2"}}},
	{"SET @a = `col`", as{{Scope: ScopeUser, Name: "a", Value: "`col`"}}},
	{"SET @a = -1", as{{Scope: ScopeUser, Name: "a", Value: "-1"}}},
	{"SET @j = '{\"a\": [1, 2]}'", as{{Scope: ScopeUser, Name: "j", Value: "'{\"a\": [1, 2]}'"}}},
	{"  /* lead */ SET @a=1", as{{Scope: ScopeUser, Name: "a", Value: "1"}}},

	// Character sets.
	{"SET NAMES utf8mb4", as{{Scope: ScopeSession, Name: NameNames, Value: "utf8mb4"}}},
	{"set names 'utf8mb4' collate 'utf8mb4_unicode_ci'", as{{Scope: ScopeSession, Name: NameNames, Value: "'utf8mb4'", Collate: "'utf8mb4_unicode_ci'"}}},
	{"SET NAMES utf8mb4 COLLATE utf8mb4_0900_ai_ci", as{{Scope: ScopeSession, Name: NameNames, Value: "utf8mb4", Collate: "utf8mb4_0900_ai_ci"}}},
	{"SET NAMES DEFAULT", as{{Scope: ScopeSession, Name: NameNames, Value: "DEFAULT"}}},
	{"SET NAMES utf8, @a = 1", as{
		{Scope: ScopeSession, Name: NameNames, Value: "utf8"},
		{Scope: ScopeUser, Name: "a", Value: "1"},
	}},
	{"/*!40101 SET NAMES utf8 */", as{{Scope: ScopeSession, Name: NameNames, Value: "utf8"}}},
	{"/*!40101 SET @OLD_SQL_MODE=@@SQL_MODE, SQL_MODE='NO_AUTO_VALUE_ON_ZERO' */;", as{
		{Scope: ScopeUser, Name: "old_sql_mode", Value: "@@SQL_MODE"},
		{Scope: ScopeSession, Name: "sql_mode", Value: "'NO_AUTO_VALUE_ON_ZERO'"},
	}},
	{"SET CHARACTER SET utf8mb4", as{{Scope: ScopeSession, Name: NameCharset, Value: "utf8mb4"}}},
	{"SET CHARSET 'latin1'", as{{Scope: ScopeSession, Name: NameCharset, Value: "'latin1'"}}},
	{"SET character set DEFAULT", as{{Scope: ScopeSession, Name: NameCharset, Value: "DEFAULT"}}},
	{"SET character_set_client = utf8", as{{Scope: ScopeSession, Name: "character_set_client", Value: "utf8"}}},

	// Transaction characteristics.
	{"SET TRANSACTION ISOLATION LEVEL READ COMMITTED", as{{Scope: ScopeNextTxn, Name: NameTxIsolation, Value: "'READ-COMMITTED'"}}},
	{"SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ", as{{Scope: ScopeSession, Name: NameTxIsolation, Value: "'REPEATABLE-READ'"}}},
	{"set global transaction isolation level serializable", as{{Scope: ScopeGlobal, Name: NameTxIsolation, Value: "'SERIALIZABLE'"}}},
	{"SET LOCAL TRANSACTION ISOLATION LEVEL READ UNCOMMITTED", as{{Scope: ScopeSession, Name: NameTxIsolation, Value: "'READ-UNCOMMITTED'"}}},
	{"SET TRANSACTION READ ONLY", as{{Scope: ScopeNextTxn, Name: NameTxReadOnly, Value: "ON"}}},
	{"SET SESSION TRANSACTION READ WRITE", as{{Scope: ScopeSession, Name: NameTxReadOnly, Value: "OFF"}}},
	{"SET TRANSACTION ISOLATION LEVEL READ COMMITTED, READ ONLY", as{
		{Scope: ScopeNextTxn, Name: NameTxIsolation, Value: "'READ-COMMITTED'"},
		{Scope: ScopeNextTxn, Name: NameTxReadOnly, Value: "ON"},
	}},
	{"SET SESSION transaction_isolation = 'READ-COMMITTED'", as{{Scope: ScopeSession, Name: "transaction_isolation", Value: "'READ-COMMITTED'"}}},
	{"SET transaction_isolation = 'READ-COMMITTED'", as{{Scope: ScopeSession, Name: "transaction_isolation", Value: "'READ-COMMITTED'"}}},
	{"SET @@transaction_isolation = 'READ-COMMITTED'", as{{Scope: ScopeNextTxn, Name: "transaction_isolation", Value: "'READ-COMMITTED'"}}},
	{"SET @@tx_read_only = 1", as{{Scope: ScopeNextTxn, Name: "tx_read_only", Value: "1"}}},
	{"SET @@session.tx_isolation = 'SERIALIZABLE'", as{{Scope: ScopeSession, Name: "tx_isolation", Value: "'SERIALIZABLE'"}}},
}

func TestParseSet(t *testing.T) {
	for _, tc := range parseSetTests {
		got, err := ParseSet(tc.sql)
		if err != nil {
			t.Errorf("ParseSet(%q): %v", tc.sql, err)
			continue
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("ParseSet(%q)\n got %+v\nwant %+v", tc.sql, got, tc.want)
		}
	}
}

var parseSetErrors = []string{
	"",
	"SELECT 1",
	"SET",
	"SET ;",
	"SET x",
	"SET x =",
	"SET x = ;",
	"SET x = 1,",
	"SET x = 1, ",
	"SET = 1",
	"SET x 1",
	"SET x == 1",
	"SET @a = (1",
	"SET @a = 1)",
	"SET @a = (1))",
	"SET @a = 1; SELECT 2",
	"SET PASSWORD = 'secret'",
	"SET PASSWORD FOR 'u'@'h' = 'x'",
	"SET ROLE ALL",
	"SET DEFAULT ROLE ALL TO u",
	"SET RESOURCE GROUP rg",
	"SET STATEMENT max_statement_time=1 FOR SELECT 1",
	"SET GLOBAL @a = 1",
	"SET SESSION @@x = 1",
	"SET GLOBAL NAMES utf8",
	"SET NAMES",
	"SET NAMES utf8 COLLATE",
	"SET NAMES utf8 x",
	"SET NAMES = utf8",
	"SET CHARACTER utf8",
	"SET CHARACTER SET",
	"SET TRANSACTION",
	"SET TRANSACTION ISOLATION",
	"SET TRANSACTION ISOLATION LEVEL",
	"SET TRANSACTION ISOLATION LEVEL READ",
	"SET TRANSACTION ISOLATION LEVEL REPEATABLE",
	"SET TRANSACTION ISOLATION LEVEL CHAOS",
	"SET TRANSACTION READ",
	"SET TRANSACTION READ ONLY, x = 1",
	"SET x = 1, TRANSACTION READ ONLY",
	"SET @ = 1",
	"SET @'unterminated = 1",
	"SET @'' = 1",
	"SET @@ = 1",
	"SET @@session. = 1",
	"SET 'x' = 1",
	"SET 1 = 1",
	"SET @a = 1 /*!, @b = (2 */ )",
}

func TestParseSetErrors(t *testing.T) {
	for _, sql := range parseSetErrors {
		got, err := ParseSet(sql)
		if err == nil {
			t.Errorf("ParseSet(%q) = %+v, want error", sql, got)
			continue
		}
		var se *SetError
		if !errors.As(err, &se) {
			t.Errorf("ParseSet(%q): error %T, want *SetError", sql, err)
		} else if se.Offset < 0 || se.Offset > len(sql) {
			t.Errorf("ParseSet(%q): offset %d out of range", sql, se.Offset)
		}
		if got != nil {
			t.Errorf("ParseSet(%q): returned assignments with an error", sql)
		}
	}
}

func TestAutocommit(t *testing.T) {
	tests := []struct {
		sql       string
		value, ok bool
	}{
		{"SET autocommit=0", false, true},
		{"SET autocommit=1", true, true},
		{"SET autocommit=ON", true, true},
		{"SET autocommit=off", false, true},
		{"SET autocommit=true", true, true},
		{"SET autocommit=FALSE", false, true},
		{"SET autocommit='ON'", true, true},
		{"SET @@session.autocommit = 0", false, true},
		{"SET @@autocommit = 1", true, true},
		{"SET LOCAL autocommit = 0", false, true},
		{"SET SESSION autocommit = 1", true, true},
		{"SET autocommit = 0, autocommit = 1", true, true},
		{"SET autocommit = 1, @a = 0", true, true},
		{"SET GLOBAL autocommit = 0", false, false},
		{"SET @autocommit = 0", false, false},
		{"SET autocommit = @x", false, false},
		{"SET autocommit = DEFAULT", false, false},
		{"SET autocommit = 2", false, false},
		{"SET sql_mode = ''", false, false},
		{"SET NAMES utf8", false, false},
	}
	for _, tc := range tests {
		a, err := ParseSet(tc.sql)
		if err != nil {
			t.Fatalf("ParseSet(%q): %v", tc.sql, err)
		}
		v, ok := Autocommit(a)
		if v != tc.value || ok != tc.ok {
			t.Errorf("Autocommit(%q) = %v, %v; want %v, %v", tc.sql, v, ok, tc.value, tc.ok)
		}
	}
}

func TestScopeString(t *testing.T) {
	for s := ScopeSession; s <= ScopeNextTxn; s++ {
		if str := s.String(); str == "" || str == "Scope(?)" {
			t.Errorf("Scope(%d).String() = %q", s, str)
		}
	}
	if Scope(200).String() != "Scope(?)" {
		t.Error("unknown scope should print as Scope(?)")
	}
}
