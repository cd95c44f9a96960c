package sessionvars

import (
	"testing"

	"github.com/galeon-db/galeon/internal/backend"
)

func TestLiteral(t *testing.T) {
	for _, tc := range []struct {
		v    backend.Value
		want string
	}{
		{backend.Value{Text: "ANSI_QUOTES,NO_ENGINE_SUBSTITUTION"}, "'ANSI_QUOTES,NO_ENGINE_SUBSTITUTION'"},
		{backend.Value{Text: "it's"}, "'it''s'"},
		{backend.Value{Text: `a\b`}, "X'615c62'"},
		{backend.Value{Text: "1293829261.000000", Numeric: true}, "1293829261.000000"},
		{backend.Value{Null: true}, "NULL"},
		{backend.Value{Text: ""}, "''"},
	} {
		if got := Literal(tc.v); got != tc.want {
			t.Errorf("Literal(%+v) = %s, want %s", tc.v, got, tc.want)
		}
	}
}

func TestQuoteName(t *testing.T) {
	for in, want := range map[string]string{
		"sql_mode":                 "sql_mode",
		"validate_password.length": "validate_password.length",
		"odd name":                 "`odd name`",
		"a`b":                      "`a``b`",
	} {
		if got := QuoteName(in); got != want {
			t.Errorf("QuoteName(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestTxnFragment(t *testing.T) {
	for _, tc := range []struct{ name, value, want string }{
		{"transaction_isolation", "'READ-COMMITTED'", "SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED"},
		{"transaction_isolation", "'serializable'", "SESSION TRANSACTION ISOLATION LEVEL SERIALIZABLE"},
		{"transaction_read_only", "ON", "SESSION TRANSACTION READ ONLY"},
		{"transaction_read_only", "1", "SESSION TRANSACTION READ ONLY"},
		{"transaction_read_only", "OFF", "SESSION TRANSACTION READ WRITE"},
	} {
		if got := TxnFragment(tc.name, tc.value); got != tc.want {
			t.Errorf("TxnFragment(%s, %s) = %q, want %q", tc.name, tc.value, got, tc.want)
		}
	}
}
