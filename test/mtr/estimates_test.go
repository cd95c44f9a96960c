package mtr_test

import (
	"strings"
	"testing"
)

func TestRowEstimatesOnly(t *testing.T) {
	const header = "id\tselect_type\ttable\ttype\tpossible_keys\tkey\tkey_len\tref\trows\tfiltered\tExtra\n"
	row := func(rows string) string {
		return "1\tSIMPLE\tt1\tALL\tNULL\tNULL\tNULL\tNULL\t" + rows + "\t100.00\tUsing filesort\n"
	}
	explain := "explain extended select * from t1;\n" + header
	json := func(rows string) string {
		return "EXPLAIN\n{\n  \"query_block\": {\n    \"table\": {\n      \"rows\": " + rows + ",\n      \"filtered\": 100\n    }\n  }\n}\n"
	}
	for _, c := range []struct {
		name           string
		result, reject string
		ok             bool
	}{
		{"olap in one CI run: 14 for 15", explain + row("15") + "Warnings:\n", explain + row("14") + "Warnings:\n", true},
		{"a tenth of 57 apart", explain + row("57"), explain + row("52"), true},
		{"more than a tenth apart", explain + row("57"), explain + row("50"), false},
		{"another column differs too", explain + row("15"), explain + strings.Replace(row("14"), "filesort", "where", 1), false},
		{"a row count in a result, not an EXPLAIN", "select count(*) from t1;\ncount(*)\n15\n", "select count(*) from t1;\ncount(*)\n14\n", false},
		{"a result row after the EXPLAIN's table ended", explain + row("15") + "select a, b from t1;\na\tb\n15\t1\n", explain + row("15") + "select a, b from t1;\na\tb\n14\t1\n", false},
		{"FORMAT=JSON rows", json("15"), json("14"), true},
		{"FORMAT=JSON r_rows is not an estimate", strings.Replace(json("15"), `"rows"`, `"r_rows"`, 1), strings.Replace(json("14"), `"rows"`, `"r_rows"`, 1), false},
		{"a line more", explain + row("15"), explain + row("14") + "x\n", false},
		{"identical: nothing to accept", explain + row("15"), explain + row("15"), false},
	} {
		got := rowEstimatesOnly([]byte(c.result), []byte(c.reject))
		if (got != "") != c.ok {
			t.Errorf("%s: rowEstimatesOnly = %q, want accepted=%v", c.name, got, c.ok)
		}
	}
}
