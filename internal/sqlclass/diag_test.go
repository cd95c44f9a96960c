package sqlclass

import (
	"slices"
	"testing"
)

func TestParseShowDiagnostics(t *testing.T) {
	for _, c := range []struct {
		q    string
		want ShowDiagnostics
		ok   bool
	}{
		{"SHOW WARNINGS", ShowDiagnostics{}, true},
		{"show warnings;", ShowDiagnostics{}, true},
		{"/* x */ SHOW ERRORS", ShowDiagnostics{Errors: true}, true},
		{"SHOW WARNINGS LIMIT 2", ShowDiagnostics{HasLimit: true, Limit: 2}, true},
		{"SHOW ERRORS LIMIT 1, 3", ShowDiagnostics{Errors: true, HasLimit: true, Offset: 1, Limit: 3}, true},
		{"SHOW COUNT(*) WARNINGS", ShowDiagnostics{Count: true}, true},
		{"SHOW COUNT ( * ) ERRORS ;", ShowDiagnostics{Count: true, Errors: true}, true},
		{"SHOW COUNT(*) WARNINGS LIMIT 1", ShowDiagnostics{}, false},
		{"SHOW WARNINGS LIMIT x", ShowDiagnostics{}, false},
		{"SHOW WARNING", ShowDiagnostics{}, false},
		{"SHOW WARNINGS; SELECT 1", ShowDiagnostics{}, false},
		{"SELECT 'SHOW WARNINGS'", ShowDiagnostics{}, false},
		{"SHOW VARIABLES", ShowDiagnostics{}, false},
	} {
		got, ok := ParseShowDiagnostics(c.q)
		if ok != c.ok || (ok && got != c.want) {
			t.Errorf("%q: got %+v %v, want %+v %v", c.q, got, ok, c.want, c.ok)
		}
	}
}

func TestReplaceDiagnostics(t *testing.T) {
	d := Diagnostics{Rows: true, RowCount: -1, Counts: true, WarningCount: 3, ErrorCount: 1}
	rows2 := Diagnostics{Rows: true, RowCount: 2}
	for _, c := range []struct {
		q, out string
		done   []Replacement
		d      Diagnostics
	}{
		{"SELECT ROW_COUNT()", "SELECT -1", []Replacement{{"ROW_COUNT()", "-1"}}, d},
		{"select row_count ( ) AS r, @@warning_count, @@SESSION.error_count", "select -1 AS r, 3, 1",
			[]Replacement{{"row_count ( )", "-1"}, {"@@warning_count", "3"}, {"@@SESSION.error_count", "1"}}, d},
		{"SELECT @@warning_count", "SELECT @@warning_count", nil, rows2},
		{"SELECT ROW_COUNT()", "SELECT ROW_COUNT()", nil, Diagnostics{Counts: true}},
		{"SELECT ROW_COUNT() /* ROW_COUNT() */, 'ROW_COUNT()', `ROW_COUNT`", "SELECT 2 /* ROW_COUNT() */, 'ROW_COUNT()', `ROW_COUNT`", []Replacement{{"ROW_COUNT()", "2"}}, rows2},
		{"SELECT @@global.warning_count, ROW_COUNT", "SELECT @@global.warning_count, ROW_COUNT", nil, d},
	} {
		out, done := ReplaceDiagnostics(c.q, c.d)
		if out != c.out || !slices.Equal(done, c.done) {
			t.Errorf("%q: got %q %v, want %q %v", c.q, out, done, c.out, c.done)
		}
	}
}

func TestUsesNoTable(t *testing.T) {
	for q, want := range map[string]bool{
		"SELECT 1":                             true,
		"select @@warning_count, ROW_COUNT()":  true,
		"SET sql_mode = ''":                    true,
		"DO SLEEP(0)":                          true,
		"SELECT 'FROM' AS `from`":              true,
		"SELECT v FROM t":                      false,
		"SELECT (SELECT 1 FROM t)":             false,
		"SET @x = (SELECT COUNT(*) FROM t)":    false,
		"TABLE t":                              false,
		"WITH c AS (SELECT 1) SELECT * FROM c": false,
		"UPDATE t SET v = 1":                   false,
		"SELECT 1; SELECT 2":                   false,
	} {
		if got := UsesNoTable(q, Classify(q)); got != want {
			t.Errorf("%q: %v, want %v", q, got, want)
		}
	}
}

func TestHasReturning(t *testing.T) {
	for q, want := range map[string]bool{
		"INSERT INTO t VALUES (1) RETURNING id":  true,
		"delete from t where id = 1 returning *": true,
		"INSERT INTO t VALUES ('RETURNING')":     false,
		"INSERT INTO `returning` VALUES (1)":     false,
		"UPDATE t SET v = 1 /* RETURNING */":     false,
	} {
		if got := HasReturning(q); got != want {
			t.Errorf("%q: %v, want %v", q, got, want)
		}
	}
}
