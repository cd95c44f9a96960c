package sqlclass

import "testing"

func TestConstantValue(t *testing.T) {
	for _, tc := range []struct {
		v    string
		want bool
	}{
		{"'NO_ENGINE_SUBSTITUTION'", true},
		{"'+05:00'", true},
		{"1", true},
		{"1.5", true},
		{"0x1F", true},
		{"ON", true},
		{"utf8mb4", true},
		{"NULL", true},
		{"DEFAULT", false},
		{"default", false},
		{"CURRENT_TIMESTAMP", false},
		{"CONCAT(@@sql_mode, ',ANSI_QUOTES')", false},
		{"REPLACE(@@sql_mode, 'STRICT_TRANS_TABLES', '')", false},
		{"UNIX_TIMESTAMP('2011-01-01 01:01:01')", false},
		{"@@global.sql_mode", false},
		{"@x", false},
		{`"ANSI"`, false},
		{`'a\'b'`, false},
		{"_utf8mb4'x'", false},
		{"N'x'", false},
		{"-1", false},
		{"1+1", false},
	} {
		if got := ConstantValue(tc.v); got != tc.want {
			t.Errorf("ConstantValue(%q) = %v, want %v", tc.v, got, tc.want)
		}
	}
}

func TestReplaceConnectionID(t *testing.T) {
	for _, tc := range []struct {
		q, want, spelling string
		n                 int
	}{
		{"SELECT CONNECTION_ID()", "SELECT 1073741825", "CONNECTION_ID()", 1},
		{"select connection_id ( ) as id", "select 1073741825 as id", "connection_id ( )", 1},
		{"KILL QUERY CONNECTION_ID()", "KILL QUERY 1073741825", "CONNECTION_ID()", 1},
		{"SELECT 'CONNECTION_ID()', `CONNECTION_ID`, CONNECTION_ID() /* CONNECTION_ID() */",
			"SELECT 'CONNECTION_ID()', `CONNECTION_ID`, 1073741825 /* CONNECTION_ID() */", "CONNECTION_ID()", 1},
		{"SELECT CONNECTION_ID() = CONNECTION_ID()", "SELECT 1073741825 = 1073741825", "CONNECTION_ID()", 2},
		{"SELECT CONNECTION_ID", "SELECT CONNECTION_ID", "", 0},
		{"SELECT CONNECTION_ID(1)", "SELECT CONNECTION_ID(1)", "", 0},
	} {
		got, sp, n := ReplaceConnectionID(tc.q, 1073741825)
		if got != tc.want || sp != tc.spelling || n != tc.n {
			t.Errorf("ReplaceConnectionID(%q) = %q, %q, %d; want %q, %q, %d", tc.q, got, sp, n, tc.want, tc.spelling, tc.n)
		}
	}
	if r := Classify("SELECT connection_id()"); !r.UsesConnectionID {
		t.Error("Classify: UsesConnectionID not set")
	}
	if r := Classify("SELECT 'connection_id()'"); r.UsesConnectionID {
		t.Error("Classify: UsesConnectionID set for a string")
	}
}
