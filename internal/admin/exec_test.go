package admin

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/galeon-db/galeon/internal/mysqlproto"
)

// render shows a result as "col,col: v|v; v|v" for compact expectations.
func render(r *result) string {
	if !r.isSet() {
		return "OK " + formatInt(int64(r.affected))
	}
	var cols []string
	for _, c := range r.cols {
		cols = append(cols, c.name)
	}
	var rows []string
	for _, row := range r.rows {
		var vals []string
		for _, v := range row {
			s, null := formatValue(v)
			if null {
				s = "NULL"
			}
			vals = append(vals, s)
		}
		rows = append(rows, strings.Join(vals, "|"))
	}
	return strings.Join(cols, ",") + ": " + strings.Join(rows, "; ")
}

func TestExecSelect(t *testing.T) {
	tests := []struct{ sql, want string }{
		{"SELECT hostname FROM servers", "hostname: db1; db2; db3"},
		{"SELECT `HOSTNAME`, servers.port AS p FROM SERVERS", "hostname,p: db1|3306; db2|3306; db3|3307"},
		{"SELECT hostname FROM servers WHERE hostgroup = 10", "hostname: db1; db2"},
		{"SELECT hostname FROM servers WHERE hostgroup = '10'", "hostname: db1; db2"},
		{"SELECT hostname FROM servers WHERE weight > 1.5", "hostname: db1; db2"},
		{"SELECT hostname FROM servers WHERE weight >= 50 AND weight <= 100", "hostname: db1; db2"},
		{"SELECT hostname FROM servers WHERE weight < 50 OR hostname = 'db1'", "hostname: db1; db3"},
		{"SELECT hostname FROM servers WHERE hostname != 'db1' AND hostname <> 'db2'", "hostname: db3"},
		{"SELECT hostname FROM servers WHERE hostname = 'DB1'", "hostname: "},
		{"SELECT hostname FROM servers WHERE hostname LIKE 'DB%'", "hostname: db1; db2; db3"},
		{"SELECT hostname FROM servers WHERE hostname LIKE 'db_'", "hostname: db1; db2; db3"},
		{"SELECT hostname FROM servers WHERE hostname NOT LIKE '%1'", "hostname: db2; db3"},
		{"SELECT hostname FROM servers WHERE port LIKE '%7'", "hostname: db3"},
		{"SELECT hostname FROM servers WHERE status IN ('OFFLINE_SOFT', 'OFFLINE_HARD')", "hostname: db3"},
		{"SELECT hostname FROM servers WHERE port NOT IN (3306)", "hostname: db3"},
		{"SELECT hostname FROM servers WHERE port IN ('3307', 1)", "hostname: db3"},
		{"SELECT hostname FROM servers WHERE port NOT IN (3306, NULL)", "hostname: "},
		{"SELECT hostname FROM servers WHERE comment IS NULL", "hostname: db2"},
		{"SELECT hostname FROM servers WHERE comment IS NOT NULL", "hostname: db1; db3"},
		{"SELECT hostname FROM servers WHERE comment = NULL", "hostname: "},
		{"SELECT hostname FROM servers WHERE comment <=> NULL", "hostname: db2"},
		{"SELECT hostname FROM servers WHERE NOT comment = 'primary'", "hostname: db3"},
		{"SELECT hostname FROM servers WHERE max_lag BETWEEN 0.1 AND 1", "hostname: db3"},
		{"SELECT hostname FROM servers WHERE weight NOT BETWEEN 2 AND 60", "hostname: db1; db3"},
		{"SELECT hostname FROM servers WHERE (hostgroup = 20 OR weight = 100) AND port = 3306", "hostname: db1"},
		{"SELECT hostname FROM servers WHERE max_lag", "hostname: db1; db3"},
		{"SELECT hostname FROM servers WHERE 1 = 1 AND TRUE", "hostname: db1; db2; db3"},
		{"SELECT hostname FROM servers WHERE 3307 = port AND 'db2' < hostname", "hostname: db3"},
		{"SELECT hostname, weight FROM servers ORDER BY weight", "hostname,weight: db3|1; db2|50; db1|100"},
		{"SELECT hostname, weight FROM servers ORDER BY weight DESC LIMIT 2", "hostname,weight: db1|100; db2|50"},
		{"SELECT hostname FROM servers ORDER BY port DESC, hostname DESC", "hostname: db3; db2; db1"},
		{"SELECT hostname, max_lag FROM servers ORDER BY max_lag", "hostname,max_lag: db2|NULL; db3|0.25; db1|1.5"},
		{"SELECT hostname AS h FROM servers ORDER BY h DESC", "h: db3; db2; db1"},
		{"SELECT hostname FROM servers LIMIT 1, 1", "hostname: db2"},
		{"SELECT hostname FROM servers LIMIT 1 OFFSET 5", "hostname: "},
		{"SELECT hostname FROM servers LIMIT 0", "hostname: "},
		{"SELECT COUNT(*) FROM servers", "COUNT(*): 3"},
		{"SELECT count(*) AS n, 'x' FROM servers WHERE hostgroup = 10", "n,'x': 2|x"},
		{"SELECT COUNT(1) FROM stats", "COUNT(1): 4"},
		{"SELECT * FROM stats", "name,value,ratio: queries|42|0.5; errors|3|0.25; up|1|NULL; short row|NULL|NULL"},
		{"SELECT name FROM stats WHERE value > 2", "name: queries; errors"},
		{"SELECT * FROM main.stats WHERE name = 'up'", "name,value,ratio: up|1|NULL"},
		{"SELECT 1", "1: 1"},
		{"SELECT 1 AS one, 'two', 3.5, NULL, -7", "one,'two',3.5,NULL,-7: 1|two|3.5|NULL|-7"},
		{"SELECT @@version_comment LIMIT 1", "@@version_comment: galeon admin interface"},
		{"SELECT @@session.autocommit, @@max_allowed_packet", "@@session.autocommit,@@max_allowed_packet: 1|1048576"},
		{"SELECT DATABASE(), USER(), CONNECTION_ID()", "DATABASE(),USER(),CONNECTION_ID(): main|admin@127.0.0.1|7"},
		{"SELECT @@version", "@@version: " + serverVersion},
		{"SELECT 1 WHERE 1 = 0", "1: "},
		{"SHOW TABLES", "Tables_in_main: servers; stats"},
		{"SHOW FULL TABLES LIKE 'SE%'", "Tables_in_main,Table_type: servers|BASE TABLE"},
		{"SHOW TABLES WHERE Tables_in_main = 'stats'", "Tables_in_main: stats"},
		{"SHOW DATABASES", "Database: main"},
		{"DESCRIBE stats", "Field,Type,Null,Key,Default,Extra: name|text|NO||NULL|; value|bigint|NO||NULL|; ratio|double|NO||NULL|"},
		{"SHOW COLUMNS FROM servers LIKE 'host%'", "Field,Type,Null,Key,Default,Extra: hostgroup|bigint|NO||NULL|; hostname|text|NO||NULL|"},
		{"SHOW FULL COLUMNS FROM stats WHERE Field = 'name'", "Field,Type,Null,Key,Default,Extra,Privileges: name|text|NO||NULL||select"},
		{"DESC servers comment", "Field,Type,Null,Key,Default,Extra: comment|text|YES||NULL|"},
		{"SHOW VARIABLES LIKE 'version_comment'", "Variable_name,Value: version_comment|galeon admin interface"},
		{"SHOW VARIABLES WHERE Variable_name = 'autocommit'", "Variable_name,Value: autocommit|1"},
		{"SHOW VARIABLES LIKE 'nothing%'", "Variable_name,Value: "},
		{"SHOW WARNINGS", "Level,Code,Message: "},
		{"SHOW STATUS LIKE 'Tables'", "Variable_name,Value: Tables|2"},
		{"SHOW CREATE TABLE stats", "Table,Create Table: stats|CREATE TABLE `stats` (\n  `name` text NOT NULL,\n  `value` bigint NOT NULL,\n  `ratio` double NOT NULL\n) COMMENT='accepts: SELECT'"},
		{"SET NAMES utf8mb4", "OK 0"},
		{"USE anything", "OK 0"},
		{"COMMIT", "OK 0"},
		{"ROLLBACK", "OK 0"},
	}
	checkQueries(t, tests)
}

// checkQueries runs each query on fresh fake tables and compares the
// rendered result.
func checkQueries(t *testing.T, tests []struct{ sql, want string }) {
	t.Helper()
	for _, tt := range tests {
		eng, _ := newTestEngine(t)
		res, err := run(eng, tt.sql)
		if err != nil {
			t.Errorf("%s: %v", tt.sql, err)
			continue
		}
		if got := render(res); got != tt.want {
			t.Errorf("%s:\n got %s\nwant %s", tt.sql, got, tt.want)
		}
	}
}

func TestExecResultMetadata(t *testing.T) {
	eng, _ := newTestEngine(t)
	res, err := run(eng, "SELECT hostname AS h, port, max_lag, 'x', 1, 2.5, NULL, COUNT(*) OVER () FROM servers LIMIT 1")
	if err != nil {
		t.Fatal(err)
	}
	want := []resultCol{
		{name: "h", kind: Text},
		{name: "port", kind: Int},
		{name: "max_lag", kind: Float},
		{name: "'x'", kind: Text},
		{name: "1", kind: Int},
		{name: "2.5", kind: Float},
		{name: "NULL", kind: Text},
		{name: "COUNT(*) OVER ()", kind: Int},
	}
	for i, c := range res.cols {
		if c != want[i] {
			t.Errorf("column %d: got %+v, want %+v", i, c, want[i])
		}
	}
}

// TestExecSQLEngine checks what the home-made dialect could not do: the
// statements operators run on ProxySQL's admin interface all day.
func TestExecSQLEngine(t *testing.T) {
	tests := []struct{ sql, want string }{
		{"SELECT SUM(weight) FROM servers", "SUM(weight): 151"},
		{"SELECT hostgroup, COUNT(*) AS n, MAX(weight) FROM servers GROUP BY hostgroup ORDER BY hostgroup DESC",
			"hostgroup,n,MAX(weight): 20|1|1; 10|2|100"},
		{"SELECT s.hostname, t.value FROM servers s JOIN stats t ON t.value = s.hostgroup * 4 + 2", "hostname,value: db1|42; db2|42"},
		{"SELECT hostname FROM servers WHERE weight > (SELECT AVG(weight) FROM servers)", "hostname: db1"},
		{"SELECT hostname FROM servers ORDER BY weight % 7, hostname", "hostname: db2; db3; db1"},
		{"SELECT hostname || ':' || port FROM servers WHERE status REGEXP '^OFF'", "hostname || ':' || port: db3:3307"},
		{"SELECT GROUP_CONCAT(hostname) FROM servers WHERE comment IS NOT NULL", "GROUP_CONCAT(hostname): db1,db3"},
		{"WITH big AS (SELECT * FROM servers WHERE weight >= 50) SELECT COUNT(*) FROM big", "COUNT(*): 2"},
		{"SELECT CASE WHEN weight > 10 THEN 'heavy' ELSE 'light' END AS w FROM servers LIMIT 1 OFFSET 2", "w: light"},
		{"SELECT hostname FROM servers WHERE hostname = \"db2\"", "hostname: db2"},
		{"SELECT 'it\\'s', 'a''b'", "'it''s','a''b': it's|a'b"},
		{"SELECT 1 /* comment */ + 1 -- trailing", "1 + 1: 2"},
		{"SELECT hostname AS $h FROM servers WHERE hostgroup = 20", "$h: db3"},
		{"SELECT 5--1, 6-/*c*/-1", "5- -1,6- -1: 6|7"}, // MySQL: 5 - -1, never a comment
		{"SELECT 1, @@autocommit, @@max_allowed_packet/1024, @@version_comment AS vc", "1,@@autocommit,1048576/1024,vc: 1|1|1024|galeon admin interface"},
		{"SELECT hostname FROM servers WHERE weight IN (1, @@autocommit) AND (SELECT @@autocommit) = 1", "hostname: db3"},
		{"SELECT (SELECT @@autocommit), CURRENT_TIMESTAMP() IS NOT NULL AS ts", "(SELECT 1),ts: 1|1"},
	}
	checkQueries(t, tests)
}

func TestExecWrites(t *testing.T) {
	tests := []struct {
		sql, want string // want: OK n
		check     string // a SELECT run afterwards and its rendering
		checkWant string
	}{
		{"UPDATE servers SET weight = 7 WHERE hostname = 'db1'", "OK 1",
			"SELECT weight FROM servers WHERE hostname = 'db1'", "weight: 7"},
		{"UPDATE servers SET weight = '8', max_lag = 2 WHERE hostgroup = 10", "OK 2",
			"SELECT weight, max_lag FROM servers WHERE hostgroup = 10", "weight,max_lag: 8|2; 8|2"},
		{"UPDATE servers SET weight = 9.0", "OK 3",
			"SELECT COUNT(*) FROM servers WHERE weight = 9", "COUNT(*): 3"},
		{"UPDATE servers SET weight = weight * 2 WHERE hostgroup = 10", "OK 2",
			"SELECT weight FROM servers ORDER BY hostname", "weight: 200; 100; 1"},
		{"UPDATE servers SET comment = NULL WHERE hostname LIKE 'db%'", "OK 3",
			"SELECT COUNT(*) FROM servers WHERE comment IS NULL", "COUNT(*): 3"},
		{"UPDATE servers SET comment = 42 WHERE hostname = 'db2'", "OK 1",
			"SELECT comment FROM servers WHERE hostname = 'db2'", "comment: 42"},
		{"UPDATE servers SET status = 'OFFLINE_HARD' WHERE hostname = 'nope'", "OK 0",
			"SELECT COUNT(*) FROM servers WHERE status = 'OFFLINE_HARD'", "COUNT(*): 0"},
		{"UPDATE servers SET weight = 1 WHERE comment = 'it''s \"quoted\"\\tand tabbed'", "OK 1",
			"SELECT hostname FROM servers WHERE weight = 1", "hostname: db3"},
		{"UPDATE servers SET weight = (SELECT value FROM stats WHERE name = 'queries') WHERE hostgroup = 20", "OK 1",
			"SELECT weight FROM servers WHERE hostname = 'db3'", "weight: 42"},
		{"INSERT INTO servers (hostname, port, hostgroup) VALUES ('db4', '3310', 30)", "OK 1",
			"SELECT hostgroup, hostname, port, status FROM servers WHERE hostname = 'db4'", "hostgroup,hostname,port,status: 30|db4|3310|ONLINE"},
		{"INSERT INTO servers (hostname) VALUES ('db5'), ('db6')", "OK 2",
			"SELECT COUNT(*) FROM servers", "COUNT(*): 5"},
		{"INSERT INTO servers (hostname, hostgroup) SELECT hostname || '-copy', 40 FROM servers WHERE hostgroup = 10", "OK 2",
			"SELECT hostname FROM servers WHERE hostgroup = 40", "hostname: db1-copy; db2-copy"},
		{"INSERT INTO servers VALUES (1, 'db6', 1, 1, 'ONLINE', NULL, NULL)", "OK 1",
			"SELECT hostname FROM servers WHERE hostgroup = 1", "hostname: db6"},
		{"DELETE FROM servers WHERE hostgroup = 10", "OK 2",
			"SELECT hostname FROM servers", "hostname: db3"},
		{"DELETE FROM servers WHERE weight < (SELECT MAX(weight) FROM servers)", "OK 2",
			"SELECT hostname FROM servers", "hostname: db1"},
		{"DELETE FROM servers", "OK 3",
			"SELECT COUNT(*) FROM servers", "COUNT(*): 0"},
	}
	for _, tt := range tests {
		eng, _ := newTestEngine(t)
		res, err := run(eng, tt.sql)
		if err != nil {
			t.Errorf("%s: %v", tt.sql, err)
			continue
		}
		if got := render(res); got != tt.want {
			t.Errorf("%s: got %s, want %s", tt.sql, got, tt.want)
		}
		res, err = run(eng, tt.check)
		if err != nil {
			t.Errorf("%s: %v", tt.check, err)
			continue
		}
		if got := render(res); got != tt.checkWant {
			t.Errorf("after %s: %s:\n got %s\nwant %s", tt.sql, tt.check, got, tt.checkWant)
		}
	}
}

// TestExecChanges checks what Apply receives: one change per row that
// really changed, values converted to the column kinds.
func TestExecChanges(t *testing.T) {
	var got []Change
	rows := [][]any{{"a", int64(1), 1.0}, {"b", 2, nil}, {"c", int64(3), 3.5}}
	tbl := Table{
		Name:    "t",
		Columns: []Column{{Name: "Name", Kind: Text}, {Name: "N", Kind: Int}, {Name: "F", Kind: Float, Nullable: true}},
		Rows:    func() [][]any { return rows },
		Accepts: OpUpdate | OpInsert | OpDelete,
		Apply: func(ch []Change) error {
			got = append(got, ch...)
			return nil
		},
	}
	cat, err := newCatalog([]Table{tbl})
	if err != nil {
		t.Fatal(err)
	}
	eng := newEngine(cat, serverVersion, maxPacketSize, false)
	defer eng.store.close()
	for _, tc := range []struct{ sql, want string }{
		{"UPDATE t SET n = '12', F = 3, name = 5 WHERE N >= 2", "OK 2 [b 2 <nil>]->[5 12 3] [c 3 3.5]->[5 12 3]"},
		{"UPDATE t SET n = n WHERE name = 'a'", "OK 1"}, // matched, unchanged: Apply not called
		{"UPDATE t SET f = f + 1", "OK 3 [a 1 1]->[a 1 2] [c 3 3.5]->[c 3 4.5]"},
		{"INSERT INTO t (name) VALUES ('d')", "OK 1 []->[d <nil> <nil>]"},
		{"DELETE FROM t WHERE f IS NULL", "OK 1 [b 2 <nil>]->[]"},
	} {
		got = nil
		res, err := run(eng, tc.sql)
		if err != nil {
			t.Errorf("%s: %v", tc.sql, err)
			continue
		}
		s := render(res)
		for _, ch := range got {
			s += fmt.Sprintf(" %v->%v", ch.Old, ch.New)
		}
		s = strings.ReplaceAll(s, "[]", "[]")
		if s != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.sql, s, tc.want)
		}
	}
}

func TestExecErrors(t *testing.T) {
	tests := []struct {
		sql  string
		code mysqlproto.ErrorCode
		msg  string
	}{
		{"SELECT * FROM nope", erNoSuchTable, "Table 'main.nope' doesn't exist; tables: servers, stats"},
		{"SELECT * FROM other.servers", erNoSuchTable, "one database, main"},
		{"UPDATE nope SET a = 1", erNoSuchTable, "tables: servers, stats"},
		{"SELECT nope FROM servers", erBadField, "Unknown column 'nope'; columns of servers: hostgroup, hostname, port, weight, status, comment, max_lag"},
		{"SELECT * FROM servers WHERE nope = 1", erBadField, "Unknown column 'nope'"},
		{"SELECT * FROM servers ORDER BY nope", erBadField, "Unknown column 'nope'"},
		{"SELECT * FROM servers a JOIN servers b ON a.port = b.port WHERE hostname = 'x'", erNonUniq, "Column 'hostname' is ambiguous"},
		{"SELECT *", erNoTablesUsed, "No tables used"},
		{"SELECT @@nope", erUnknownSystemVariable, "Unknown system variable 'nope'"},
		{"SELECT @x", mysqlproto.ErNotSupportedYet, "user variables"},
		{"SELECT * FROM servers WHERE hostname = ?", erUnsupportedPS, "placeholders"},
		{"SELECT nope()", erSPDoesNotExist, "FUNCTION main.nope does not exist"},
		{"SELECT * FROM servers WHERE COUNT(*) > 1", erInvalidGroupFuncUse, "Invalid use of group function"},
		{"SELEKT 1", mysqlproto.ErParseError, "'SELEKT 1' is not supported"},
		{"SELECT FROM WHERE", mysqlproto.ErParseError, "syntax error"},
		{"SELECT 'unterminated", mysqlproto.ErParseError, "closing '"},
		{"UPDATE servers SET weight = 'abc'", erTruncatedWrongValue, "Incorrect integer value: 'abc' for column 'weight'"},
		{"UPDATE servers SET weight = 1.5", erTruncatedWrongValue, "Incorrect integer value: '1.5' for column 'weight'"},
		{"UPDATE servers SET weight = 1e30", erOutOfRange, "Out of range value for column 'weight'"},
		{"UPDATE servers SET weight = '99999999999999999999'", erOutOfRange, "Out of range value for column 'weight'"},
		{"UPDATE servers SET max_lag = 'fast'", erTruncatedWrongValue, "Incorrect double value: 'fast' for column 'max_lag'"},
		{"UPDATE servers SET weight = NULL", erBadNull, "Column 'weight' cannot be null"},
		{"UPDATE servers SET nope = 1", erBadField, "Unknown column 'nope'"},
		{"UPDATE servers SET rowid = 9", erTableAccessDenied, "servers.ROWID cannot be changed"},
		{"UPDATE servers SET weight = 1 WHERE nope = 2", erBadField, "Unknown column 'nope'"},
		{"UPDATE servers SET status = 'BROKEN'", mysqlproto.ErUnknownError, "status must be ONLINE, OFFLINE_SOFT or OFFLINE_HARD, not BROKEN"},
		{"UPDATE servers SET weight = -1", mysqlproto.ErUnknownError, "weight must not be negative"},
		{"UPDATE servers SET weight = 200 - weight * 3", mysqlproto.ErUnknownError, "weight must not be negative"},
		{"UPDATE stats SET value = 1", erOpenAsReadOnly, "Table 'stats' is read only"},
		{"INSERT INTO stats (name) VALUES ('x')", erOpenAsReadOnly, "Table 'stats' is read only"},
		{"INSERT INTO servers (hostname) VALUES ('a', 'b')", erWrongValueCount, "Column count doesn't match value count"},
		{"INSERT INTO servers VALUES ('a')", erWrongValueCount, "7 columns"},
		{"INSERT INTO servers (nope) VALUES (1)", erBadField, "Unknown column 'nope'"},
		{"INSERT INTO servers (port) VALUES (1)", mysqlproto.ErUnknownError, "hostname is required"},
		{"DELETE FROM servers WHERE nope IS NULL", erBadField, "Unknown column 'nope'"},
		{"DESCRIBE nope", erNoSuchTable, "doesn't exist"},
		{"SHOW CREATE TABLE nope", erNoSuchTable, "doesn't exist"},
		{"SHOW NONSENSE", mysqlproto.ErParseError, "expected TABLES"},
		{"BEGIN", mysqlproto.ErNotSupportedYet, "transactions are not supported"},
		// The engine runs nothing but reads and row changes on galeon's tables.
		{"ATTACH DATABASE '/tmp/x.db' AS x", mysqlproto.ErNotSupportedYet, "is not supported"},
		{"PRAGMA table_info(servers)", mysqlproto.ErNotSupportedYet, "is not supported"},
		{"CREATE TABLE x (a INT)", mysqlproto.ErNotSupportedYet, "is not supported"},
		{"SELECT * FROM sqlite_master", erTableAccessDenied, "sqlite_master is not an admin table"},
		{"SELECT * FROM pragma_table_info('servers')", erTableAccessDenied, "pragma_table_info is not an admin table"},
		{"SELECT load_extension('/tmp/evil.so')", erTableAccessDenied, "function load_extension is not available"},
		{"WITH x AS (SELECT 1) SELECT * FROM temp.sqlite_master", erTableAccessDenied, "not an admin table"},
	}
	for _, tt := range tests {
		eng, fs := newTestEngine(t)
		before := render(&result{cols: []resultCol{{}}, rows: fs.snapshot()})
		_, err := run(eng, tt.sql)
		var se *mysqlproto.SQLError
		if !errors.As(err, &se) {
			t.Errorf("%s: got %v, want error %d", tt.sql, err, tt.code)
			continue
		}
		if se.Code != tt.code || !strings.Contains(se.Message, tt.msg) {
			t.Errorf("%s:\n got %d %s\nwant %d ...%s...", tt.sql, se.Code, se.Message, tt.code, tt.msg)
		}
		if after := render(&result{cols: []resultCol{{}}, rows: fs.snapshot()}); after != before {
			t.Errorf("%s: a failed statement changed the table:\n%s\n%s", tt.sql, before, after)
		}
	}
}

// TestExecTableSQLError checks that a table can choose the error code
// itself by returning a *mysqlproto.SQLError.
func TestExecTableSQLError(t *testing.T) {
	tbl := Table{
		Name:    "t",
		Columns: []Column{{Name: "a", Kind: Int}},
		Rows:    func() [][]any { return [][]any{{1}} },
		Accepts: OpDelete,
		Apply: func([]Change) error {
			return mysqlproto.NewSQLError(mysqlproto.ErOptionPreventsStatement, "the last writer cannot be removed")
		},
	}
	cat, _ := newCatalog([]Table{tbl})
	eng := newEngine(cat, serverVersion, maxPacketSize, false)
	defer eng.store.close()
	_, err := run(eng, "DELETE FROM t")
	var se *mysqlproto.SQLError
	if !errors.As(err, &se) || se.Code != mysqlproto.ErOptionPreventsStatement {
		t.Errorf("got %v", err)
	}
}

func TestNewCatalogRejects(t *testing.T) {
	rows := func() [][]any { return nil }
	tests := []struct {
		name   string
		tables []Table
	}{
		{"empty name", []Table{{Name: "", Columns: []Column{{Name: "a", Kind: Int}}, Rows: rows}}},
		{"bad name", []Table{{Name: "a-b", Columns: []Column{{Name: "a", Kind: Int}}, Rows: rows}}},
		{"duplicate table", []Table{
			{Name: "t", Columns: []Column{{Name: "a", Kind: Int}}, Rows: rows},
			{Name: "T", Columns: []Column{{Name: "a", Kind: Int}}, Rows: rows}}},
		{"no columns", []Table{{Name: "t", Rows: rows}}},
		{"no rows func", []Table{{Name: "t", Columns: []Column{{Name: "a", Kind: Int}}}}},
		{"no kind", []Table{{Name: "t", Columns: []Column{{Name: "a"}}, Rows: rows}}},
		{"duplicate column", []Table{{Name: "t", Columns: []Column{{Name: "a", Kind: Int}, {Name: "A", Kind: Text}}, Rows: rows}}},
		{"bad column", []Table{{Name: "t", Columns: []Column{{Name: "1a", Kind: Int}}, Rows: rows}}},
		{"rowid column", []Table{{Name: "t", Columns: []Column{{Name: "ROWID", Kind: Int}}, Rows: rows}}},
		{"apply without accepts", []Table{{Name: "t", Columns: []Column{{Name: "a", Kind: Int}}, Rows: rows, Apply: func([]Change) error { return nil }}}},
	}
	for _, tt := range tests {
		if _, err := newCatalog(tt.tables); err == nil {
			t.Errorf("%s: accepted", tt.name)
		}
	}
	defer func() {
		if recover() == nil {
			t.Error("NewServer accepted invalid tables")
		}
	}()
	NewServer(Config{}, tests[0].tables, nil)
}

// TestSecondStatementNeverRuns checks both guards against a statement
// smuggled behind another: the rewrite keeps MySQL's reading of "--'"
// (minus, minus, a string: one statement), and should a text still reach
// SQLite with a tail, the authorizer refuses everything prepared while a
// statement runs.
func TestSecondStatementNeverRuns(t *testing.T) {
	eng, fs := newTestEngine(t)
	before := render(&result{cols: []resultCol{{}}, rows: fs.snapshot()})
	for _, q := range []string{
		"UPDATE servers SET weight=weight WHERE 0 --'\n;UPDATE servers SET weight=999;--'",
		"SHOW TABLES WHERE 0 --'\n;SELECT * FROM sqlite_master;--'",
	} {
		res, err := run(eng, q)
		if err != nil || len(res.rows) != 0 {
			t.Errorf("%q: %v %v, want one statement that matches nothing", q, err, res)
		}
	}
	for _, sqlText := range []string{
		"SELECT 1; ATTACH ':memory:' AS y",
		"UPDATE servers SET weight = 1 WHERE 0; UPDATE servers SET weight = 999",
	} {
		st := &statement{sql: sqlText}
		_, err := eng.store.inTx(func(ctx context.Context, lc *liteConn) (*result, error) { return lc.run(ctx, eng, st) })
		var se *mysqlproto.SQLError
		if !errors.As(err, &se) || se.Code != erTableAccessDenied || !strings.Contains(se.Message, "one statement at a time") {
			t.Errorf("%q reached SQLite with a tail: got %v, want 1142 one statement at a time", sqlText, err)
		}
	}
	if after := render(&result{cols: []resultCol{{}}, rows: fs.snapshot()}); after != before {
		t.Errorf("a smuggled statement changed the table:\n%s\n%s", before, after)
	}
}
