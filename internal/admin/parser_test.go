package admin

import (
	"errors"
	"strings"
	"testing"

	"github.com/galeon-db/galeon/internal/mysqlproto"
)

func TestParseSelect(t *testing.T) {
	tests := []struct{ in, want string }{
		{"SELECT * FROM servers", "SELECT * FROM servers"},
		{"select * from SERVERS;", "SELECT * FROM SERVERS"},
		{"SELECT hostname, port FROM servers", "SELECT hostname, port FROM servers"},
		{"SELECT `hostname`, servers.port FROM main.servers", "SELECT hostname, port FROM main.servers"},
		{"SELECT hostname AS h, port p FROM servers", "SELECT hostname AS h, port AS p FROM servers"},
		{"SELECT `select` FROM `from`", "SELECT select FROM from"},
		{"SELECT status, comment FROM servers", "SELECT status, comment FROM servers"},
		{"SELECT COUNT(*) FROM servers", "SELECT count(*) FROM servers"},
		{"SELECT count(*) AS n FROM servers WHERE port = 3306", "SELECT count(*) AS n FROM servers WHERE (port = 3306)"},
		{"SELECT @@version_comment LIMIT 1", "SELECT @@version_comment LIMIT 1"},
		{"SELECT @@session.autocommit, @@GLOBAL.max_allowed_packet", "SELECT @@autocommit, @@max_allowed_packet"},
		{"SELECT DATABASE()", "SELECT database()"},
		{"SELECT 1", "SELECT 1"},
		{"SELECT -1, +2.5, 'x', NULL, TRUE, false", `SELECT -1, 2.5f, "x", NULL, 1, 0`},
		{"SELECT 1e3, .5, 18446744073709551615", "SELECT 1000f, 0.5f, 1.8446744073709552e+19f"},
		{"SELECT * FROM servers ORDER BY port DESC, hostname ASC LIMIT 10", "SELECT * FROM servers ORDER BY port DESC, hostname LIMIT 10"},
		{"SELECT * FROM servers LIMIT 5, 10", "SELECT * FROM servers LIMIT 10 OFFSET 5"},
		{"SELECT * FROM servers LIMIT 10 OFFSET 5", "SELECT * FROM servers LIMIT 10 OFFSET 5"},
		{"SELECT * FROM servers LIMIT 0", "SELECT * FROM servers LIMIT 0"},
		{"  /* leading */ SELECT * -- trailing\nFROM servers # hash\n", "SELECT * FROM servers"},
		{"/*!40101 SELECT 1 */", "SELECT 1"},
	}
	for _, tt := range tests {
		got := parseOne(t, tt.in)
		if got != tt.want {
			t.Errorf("%q:\n got %s\nwant %s", tt.in, got, tt.want)
		}
	}
}

func TestParseWhere(t *testing.T) {
	tests := []struct{ where, want string }{
		{"a = 1", "(a = 1)"},
		{"a == 1", "(a = 1)"},
		{"a != 1 AND b <> 'x'", "((a != 1) AND (b != \"x\"))"},
		{"a < 1 OR a <= 2 OR a > 3 OR a >= 4", "((((a < 1) OR (a <= 2)) OR (a > 3)) OR (a >= 4))"},
		{"a = 1 OR b = 2 AND c = 3", "((a = 1) OR ((b = 2) AND (c = 3)))"},
		{"(a = 1 OR b = 2) AND c = 3", "(((a = 1) OR (b = 2)) AND (c = 3))"},
		{"NOT a = 1 AND b = 2", "((NOT (a = 1)) AND (b = 2))"},
		{"NOT (a = 1 AND b = 2)", "(NOT ((a = 1) AND (b = 2)))"},
		{"a && b || c", "((TRUTH(a) AND TRUTH(b)) OR TRUTH(c))"},
		{"hostname LIKE 'db%'", `(hostname LIKE "db%")`},
		{"hostname NOT LIKE 'db\\_1'", `(hostname NOT LIKE "db\\_1")`},
		{"port IN (3306, 3307)", "(port IN (3306, 3307))"},
		{"status NOT IN ('ONLINE')", `(status NOT IN ("ONLINE"))`},
		{"comment IS NULL", "(comment IS NULL)"},
		{"comment IS NOT NULL", "(comment IS NOT NULL)"},
		{"weight BETWEEN 1 AND 10 AND port = 1", "((weight BETWEEN 1 AND 10) AND (port = 1))"},
		{"weight NOT BETWEEN -1 AND 1", "(weight NOT BETWEEN -1 AND 1)"},
		{"a <=> NULL", "(a <=> NULL)"},
		{"1 = port", "(1 = port)"},
		{"s = 'it''s' AND t = 'it\\'s' AND u = \"dq\"", `(((s = "it's") AND (t = "it's")) AND (u = "dq"))`},
		{"s = 'a\\nb\\tc\\\\d\\0'", `(s = "a\nb\tc\\d\x00")`},
		{"s = _binary'raw' AND t = _utf8mb4'x'", `((s = "raw") AND (t = "x"))`},
		{"`weird col` = 1", "(weird col = 1)"},
		{"`a``b` = 1", "(a`b = 1)"},
		{"x = @@version", "(x = @@version)"},
	}
	for _, tt := range tests {
		in := "SELECT * FROM t WHERE " + tt.where
		got := parseOne(t, in)
		want := "SELECT * FROM t WHERE " + tt.want
		if got != want {
			t.Errorf("%q:\n got %s\nwant %s", tt.where, got, want)
		}
	}
}

func TestParseStatements(t *testing.T) {
	tests := []struct{ in, want string }{
		{"UPDATE servers SET weight = 10", "UPDATE servers SET weight = 10"},
		{"update servers set weight=10, status='OFFLINE_SOFT' where hostname='db1' and port=3306",
			`UPDATE servers SET weight = 10, status = "OFFLINE_SOFT" WHERE ((hostname = "db1") AND (port = 3306))`},
		{"UPDATE main.servers SET comment = NULL", "UPDATE main.servers SET comment = NULL"},
		{"INSERT INTO servers (hostname, port) VALUES ('db4', 3306)", `INSERT INTO servers (hostname, port) VALUES ("db4", 3306)`},
		{"insert servers values (1, 'x')", `INSERT INTO servers VALUES (1, "x")`},
		{"INSERT INTO servers SET hostname = 'db5', port = 1", `INSERT INTO servers (hostname, port) VALUES ("db5", 1)`},
		{"DELETE FROM servers", "DELETE FROM servers"},
		{"DELETE FROM servers WHERE hostname = 'db1'", `DELETE FROM servers WHERE (hostname = "db1")`},
		{"SHOW TABLES", "SHOW TABLES"},
		{"SHOW FULL TABLES FROM main LIKE 'se%'", `SHOW FULL TABLES LIKE "se%"`},
		{"SHOW DATABASES", "SHOW DATABASES"},
		{"show schemas", "SHOW DATABASES"},
		{"SHOW COLUMNS FROM servers", "SHOW COLUMNS servers"},
		{"SHOW FULL FIELDS IN servers FROM main WHERE Field = 'port'", `SHOW FULL COLUMNS servers WHERE (Field = "port")`},
		{"DESCRIBE servers", "SHOW COLUMNS servers"},
		{"desc servers port", `SHOW COLUMNS servers LIKE "port"`},
		{"EXPLAIN servers", "SHOW COLUMNS servers"},
		{"SHOW VARIABLES LIKE 'max_allowed_packet'", `SHOW VARIABLES LIKE "max_allowed_packet"`},
		{"SHOW SESSION VARIABLES", "SHOW VARIABLES"},
		{"SHOW GLOBAL STATUS", "SHOW STATUS"},
		{"SHOW WARNINGS", "SHOW WARNINGS"},
		{"SHOW WARNINGS LIMIT 10", "SHOW WARNINGS"},
		{"SHOW CREATE TABLE servers", "SHOW CREATE TABLE servers"},
		{"SET NAMES utf8mb4", "SET"},
		{"SET autocommit=1, sql_mode = 'x;y'", "SET"},
		{"/*!40101 SET character_set_client = utf8 */", "SET"},
		{"USE main", "USE main"},
		{"BEGIN", "BEGIN"},
		{"START TRANSACTION READ ONLY", "BEGIN"},
		{"COMMIT WORK", "COMMIT"},
		{"rollback", "ROLLBACK"},
	}
	for _, tt := range tests {
		got := parseOne(t, tt.in)
		if got != tt.want {
			t.Errorf("%q:\n got %s\nwant %s", tt.in, got, tt.want)
		}
	}
}

func TestParseMultiple(t *testing.T) {
	stmts, err := Parse("SET NAMES utf8; SELECT 1;; SELECT * FROM t;")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range stmts {
		got = append(got, formatStmt(s))
	}
	if want := "SET|SELECT 1|SELECT * FROM t"; strings.Join(got, "|") != want {
		t.Errorf("got %q, want %q", strings.Join(got, "|"), want)
	}
}

func TestParseErrors(t *testing.T) {
	deep := strings.Repeat("(", maxDepth+5) + "a = 1" + strings.Repeat(")", maxDepth+5)
	tests := []struct {
		in   string
		code mysqlproto.ErrorCode
		msg  string // substring of the message
	}{
		{"", erEmptyQuery, "Query was empty"},
		{" ; ;", erEmptyQuery, "Query was empty"},
		{"-- only a comment", erEmptyQuery, "Query was empty"},
		{"SELEC 1", mysqlproto.ErParseError, "expected SELECT, UPDATE, INSERT, DELETE, SHOW, DESCRIBE, SET or USE near 'SELEC 1'"},
		{"SELECT", mysqlproto.ErParseError, "expected '*' or a column name or value to select at the end of the query"},
		{"SELECT FROM t", mysqlproto.ErParseError, "near 'FROM t'"},
		{"SELECT * FORM t", mysqlproto.ErParseError, "expected ',', FROM, WHERE, ORDER BY, LIMIT or the end of the statement near 'FORM t'"},
		{"SELECT * FROM", mysqlproto.ErParseError, "expected a table name at the end"},
		{"SELECT * FROM t WHER a = 1", mysqlproto.ErParseError, "expected WHERE, ORDER BY, LIMIT or the end of the statement near 'WHER a = 1'"},
		{"SELECT * FROM t WHERE", mysqlproto.ErParseError, "expected a condition"},
		{"SELECT * FROM t WHERE a = ", mysqlproto.ErParseError, "expected a value to compare with at the end"},
		{"SELECT * FROM t WHERE a = 1 b = 2", mysqlproto.ErParseError, "expected AND, OR, ORDER BY, LIMIT or the end of the statement near 'b = 2'"},
		{"SELECT * FROM t WHERE a NOT = 1", mysqlproto.ErParseError, "expected LIKE, IN or BETWEEN after NOT"},
		{"SELECT * FROM t WHERE a IS 1", mysqlproto.ErParseError, "expected NULL near '1'"},
		{"SELECT * FROM t WHERE a IN 1", mysqlproto.ErParseError, "expected '(' near '1'"},
		{"SELECT * FROM t WHERE a IN (1, 2", mysqlproto.ErParseError, "expected ')' at the end"},
		{"SELECT * FROM t WHERE (a = 1", mysqlproto.ErParseError, "expected ')'"},
		{"SELECT * FROM t WHERE a BETWEEN 1 OR 2", mysqlproto.ErParseError, "expected AND near 'OR 2'"},
		{"SELECT * FROM t WHERE a = 'unterminated", mysqlproto.ErParseError, "expected a closing ' for the string near ''unterminated'"},
		{"SELECT * FROM t WHERE `a = 1", mysqlproto.ErParseError, "closing `"},
		{"SELECT * FROM t WHERE a = 1 /* open", mysqlproto.ErParseError, "*/ to close the comment"},
		{"SELECT * FROM t WHERE a = ?", mysqlproto.ErParseError, "interpolateParams=true"},
		{"SELECT * FROM t WHERE a = @x", mysqlproto.ErNotSupportedYet, "user variables (@x)"},
		{"SELECT * FROM t WHERE a = - 'x'", mysqlproto.ErParseError, "expected a number after -"},
		{"SELECT * FROM t WHERE a ~ 1", mysqlproto.ErParseError, "near '~ 1'"},
		{"SELECT * FROM t ORDER port", mysqlproto.ErParseError, "expected BY near 'port'"},
		{"SELECT * FROM t LIMIT -1", mysqlproto.ErParseError, "expected a non-negative integer near '-1'"},
		{"SELECT * FROM t LIMIT 1.5", mysqlproto.ErParseError, "expected a non-negative integer"},
		{"SELECT * FROM t LIMIT 1 2", mysqlproto.ErParseError, "expected the end of the statement near '2'"},
		{"SELECT a AS FROM t", mysqlproto.ErParseError, "expected an alias after AS"},
		{"SELECT * FROM t WHERE " + deep, mysqlproto.ErParseError, "nested more than"},
		{"SELECT * FROM t WHERE " + strings.Repeat("NOT ", 200) + "a", mysqlproto.ErParseError, "nested more than"},
		{"UPDATE t weight = 1", mysqlproto.ErParseError, "expected SET near 'weight = 1'"},
		{"UPDATE t SET weight 1", mysqlproto.ErParseError, "expected '=' near '1'"},
		{"UPDATE t SET weight = 1 WHERE", mysqlproto.ErParseError, "expected a condition"},
		{"UPDATE t SET weight = 1 hostname = 'x'", mysqlproto.ErParseError, "expected ',', WHERE or the end of the statement"},
		{"INSERT INTO t (a) VALUES (1), (2)", mysqlproto.ErNotSupportedYet, "one row per statement"},
		{"INSERT INTO t (a) (1)", mysqlproto.ErParseError, "expected VALUES"},
		{"DELETE t", mysqlproto.ErParseError, "expected FROM near 't'"},
		{"SHOW ENGINES", mysqlproto.ErParseError, "expected TABLES, DATABASES, COLUMNS, CREATE TABLE, VARIABLES, STATUS or WARNINGS near 'ENGINES'"},
		{"SHOW COLUMNS servers", mysqlproto.ErParseError, "expected FROM near 'servers'"},
		{"SHOW VARIABLES LIKE x", mysqlproto.ErParseError, "expected a quoted pattern after LIKE"},
		{"EXPLAIN SELECT 1", mysqlproto.ErNotSupportedYet, "EXPLAIN is not supported"},
		{"LOAD MYSQL SERVERS TO RUNTIME", mysqlproto.ErNotSupportedYet, "LOAD is not needed"},
		{"save mysql servers to disk", mysqlproto.ErNotSupportedYet, "SAVE is not needed"},
		{"SELECT 1 SELECT 2", mysqlproto.ErParseError, "near 'SELECT 2'"},
		{"SELECT 1; SELEC 2", mysqlproto.ErParseError, "near 'SELEC 2'"},
		{"SELECT ~", mysqlproto.ErParseError, "expected a keyword, identifier, literal or operator near '~'"},
	}
	for _, tt := range tests {
		_, err := Parse(tt.in)
		var se *mysqlproto.SQLError
		if !errors.As(err, &se) {
			t.Errorf("%q: got %v, want SQL error %d", tt.in, err, tt.code)
			continue
		}
		if se.Code != tt.code || !strings.Contains(se.Message, tt.msg) {
			t.Errorf("%q:\n got %d %s\nwant %d ...%s...", tt.in, se.Code, se.Message, tt.code, tt.msg)
		}
	}
}

func TestParseSelectItemText(t *testing.T) {
	stmts, err := Parse("SELECT @@version_comment, COUNT(*), database(), 'x' FROM t")
	if err != nil {
		t.Fatal(err)
	}
	var texts []string
	for _, it := range stmts[0].(*SelectStmt).Items {
		texts = append(texts, it.Text)
	}
	if got, want := strings.Join(texts, "|"), "@@version_comment|COUNT(*)|database()|'x'"; got != want {
		t.Errorf("item texts %q, want %q", got, want)
	}
}

func parseOne(t *testing.T, in string) string {
	t.Helper()
	stmts, err := Parse(in)
	if err != nil {
		t.Errorf("%q: %v", in, err)
		return ""
	}
	if len(stmts) != 1 {
		t.Errorf("%q: %d statements", in, len(stmts))
		return ""
	}
	return formatStmt(stmts[0])
}
