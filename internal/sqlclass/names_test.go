package sqlclass

import "testing"

func TestNamesAny(t *testing.T) {
	names := map[string]bool{"hits": true, "odd name": true}
	for q, want := range map[string]bool{
		"SELECT * FROM hits":                          true,
		"SELECT * FROM app.HITS h JOIN t ON 1":        true,
		"SELECT * FROM `odd name`":                    true,
		"SELECT 'hits' FROM t":                        false,
		"SELECT * FROM t /* hits */":                  false,
		"SELECT * FROM hitsx":                         false,
		"SELECT (SELECT COUNT(*) FROM `hits`) FROM t": true,
	} {
		if got := NamesAny(q, names); got != want {
			t.Errorf("NamesAny(%q) = %v, want %v", q, got, want)
		}
	}
	if NamesAny("SELECT * FROM hits", nil) {
		t.Error("no names matched")
	}
}
