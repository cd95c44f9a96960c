package admin

import (
	"math"
	"strings"
	"testing"
	"time"
)

func TestLikeMatch(t *testing.T) {
	tests := []struct {
		s, pat string
		want   bool
	}{
		{"db1", "db1", true},
		{"db1", "DB1", true},
		{"db1", "db%", true},
		{"db1", "%1", true},
		{"db1", "%", true},
		{"", "%", true},
		{"", "", true},
		{"", "_", false},
		{"db1", "d_1", true},
		{"db1", "d_", false},
		{"db12", "db_", false},
		{"a%b", `a\%b`, true},
		{"axb", `a\%b`, false},
		{"a_b", `a\_b`, true},
		{"axb", `a\_b`, false},
		{"mississippi", "%iss%ppi", true},
		{"mississippi", "%iss%x%", false},
		{"ÉCOLE", "éc%", true},
		{"aaa", "a%%%a", true},
		{strings.Repeat("a", 5000), strings.Repeat("%a", 200) + "b", false},
	}
	for _, tt := range tests {
		if got := likeMatch(tt.s, tt.pat); got != tt.want {
			t.Errorf("%q LIKE %q = %v, want %v", tt.s, tt.pat, got, tt.want)
		}
	}
}

func TestConvert(t *testing.T) {
	tests := []struct {
		v     any
		k     Kind
		want  any
		fails bool
		rng   bool
	}{
		{int64(5), Int, int64(5), false, false},
		{"5", Int, int64(5), false, false},
		{" 5 ", Int, int64(5), false, false},
		{"5.0", Int, int64(5), false, false},
		{5.0, Int, int64(5), false, false},
		{"1e3", Int, int64(1000), false, false},
		{5.5, Int, nil, true, false},
		{"abc", Int, nil, true, false},
		{"", Int, nil, true, false},
		{"0x10", Int, nil, true, false},
		{"inf", Float, nil, true, false},
		{1e19, Int, nil, true, true},
		{"9223372036854775808", Int, nil, true, true},
		{math.NaN(), Int, nil, true, false},
		{int64(5), Float, 5.0, false, false},
		{"2.5", Float, 2.5, false, false},
		{"-1e-3", Float, -0.001, false, false},
		{"x", Float, nil, true, false},
		{"1e999", Float, nil, true, false},
		{math.Inf(1), Float, nil, true, true},
		{int64(5), Text, "5", false, false},
		{2.5, Text, "2.5", false, false},
		{"s", Text, "s", false, false},
		{nil, Int, nil, false, false},
	}
	for _, tt := range tests {
		got, cerr := convert(tt.v, tt.k)
		if (cerr != nil) != tt.fails {
			t.Errorf("convert(%#v, %v): error %v", tt.v, tt.k, cerr)
			continue
		}
		if cerr != nil {
			if cerr.outOfRange != tt.rng {
				t.Errorf("convert(%#v, %v): outOfRange = %v", tt.v, tt.k, cerr.outOfRange)
			}
			continue
		}
		if got != tt.want {
			t.Errorf("convert(%#v, %v) = %#v, want %#v", tt.v, tt.k, got, tt.want)
		}
	}
}

func TestNormalize(t *testing.T) {
	ts := time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC)
	tests := []struct {
		in, want any
	}{
		{int(3), int64(3)},
		{int8(-3), int64(-3)},
		{uint16(3), int64(3)},
		{uint64(math.MaxUint64), float64(math.MaxUint64)},
		{float32(0.5), 0.5},
		{true, int64(1)},
		{[]byte("x"), "x"},
		{ts, "2024-05-06 07:08:09"},
		{2 * time.Second, "2s"},
		{struct{ A int }{1}, "{1}"},
	}
	for _, tt := range tests {
		if got := normalize(tt.in); got != tt.want {
			t.Errorf("normalize(%#v) = %#v, want %#v", tt.in, got, tt.want)
		}
	}
	if r := normalizeRow([]any{1}, 3); len(r) != 3 || r[0] != int64(1) || r[1] != nil {
		t.Errorf("normalizeRow padded to %#v", r)
	}
}

func TestFormatValue(t *testing.T) {
	tests := []struct {
		v    any
		want string
		null bool
	}{
		{nil, "", true},
		{int64(-5), "-5", false},
		{0.1, "0.1", false},
		{1e21, "1e+21", false},
		{100.0, "100", false},
		{"x", "x", false},
	}
	for _, tt := range tests {
		s, null := formatValue(tt.v)
		if s != tt.want || null != tt.null {
			t.Errorf("formatValue(%#v) = %q, %v", tt.v, s, null)
		}
	}
}
