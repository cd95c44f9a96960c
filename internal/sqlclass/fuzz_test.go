package sqlclass

import (
	"errors"
	"hash/fnv"
	"reflect"
	"strings"
	"testing"
)

// fuzzSeeds gives every fuzz target the statements of the unit tables.
func fuzzSeeds(f *testing.F) {
	for _, tc := range classifyTests {
		f.Add(tc.sql)
	}
	for _, tc := range parseSetTests {
		f.Add(tc.sql)
	}
	for _, sql := range parseSetErrors {
		f.Add(sql)
	}
	for _, tc := range digestTests {
		f.Add(tc.sql)
	}
}

// FuzzClassify checks that Classify never panics and that its result is
// self-consistent: kinds in range, unknown means write, parts are pieces
// of the input, and a multi-statement is as conservative as its parts.
func FuzzClassify(f *testing.F) {
	fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, sql string) {
		r := Classify(sql)
		if r.Kind >= numKinds {
			t.Fatalf("kind out of range: %d", r.Kind)
		}
		if r.Kind == Other && !r.IsWrite() {
			t.Fatalf("Other that does not write: %q", sql)
		}
		if (r.Locking || r.Into || r.AdvisoryLock != 0) && !r.IsWrite() {
			t.Fatalf("locking/into/advisory read routed to a reader: %q", sql)
		}
		if r.Hint == HintHostgroup && !validGroupName(r.HostGroup) {
			t.Fatalf("bad host group %q", r.HostGroup)
		}
		r.StartsTxn()
		r.EndsTxn()
		parts := r.Statements()
		if r.MultiStatement != (parts != nil) || (parts != nil && len(parts) < 2) {
			t.Fatalf("MultiStatement=%v with %d parts", r.MultiStatement, len(parts))
		}
		write := false
		for _, p := range parts {
			if !strings.Contains(sql, p.Text) || p.Text == "" {
				t.Fatalf("part %q not in input", p.Text)
			}
			if p.Result.MultiStatement || p.Result.Kind == Empty {
				t.Fatalf("part %q: %+v", p.Text, p.Result)
			}
			write = write || p.Result.IsWrite()
		}
		if parts != nil && write != r.IsWrite() {
			t.Fatalf("merged write=%v, parts write=%v", r.IsWrite(), write)
		}
	})
}

// FuzzParseSet checks that ParseSet never panics, fails only with a
// *SetError pointing into the input, and on success returns assignments
// whose values are verbatim pieces of the input (bar SET TRANSACTION's),
// for a text Classify also
// calls a single SET.
func FuzzParseSet(f *testing.F) {
	fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, sql string) {
		as, err := ParseSet(sql)
		if err != nil {
			var se *SetError
			if !errors.As(err, &se) || se.Offset < 0 || se.Offset > len(sql) || as != nil {
				t.Fatalf("bad error %v (assignments %v)", err, as)
			}
			return
		}
		if len(as) == 0 {
			t.Fatalf("no assignments and no error for %q", sql)
		}
		for _, a := range as {
			// SET TRANSACTION values are synthesised in variable syntax.
			synth := a.Name == NameTxIsolation || a.Name == NameTxReadOnly
			if a.Name == "" || a.Value == "" || (!synth && !strings.Contains(sql, a.Value)) {
				t.Fatalf("bad assignment %+v", a)
			}
			if a.Name != strings.ToLower(a.Name) {
				t.Fatalf("name not lower case: %q", a.Name)
			}
		}
		Autocommit(as)
		if r := Classify(sql); r.Kind != Set || r.MultiStatement {
			t.Fatalf("ParseSet accepted %q but Classify says %v", sql, r.Kind)
		}
	})
}

// FuzzDigest checks that Digest never panics, is deterministic, hashes
// its text with FNV-1a, never leaks a string literal's quotes, and
// produces text that itself digests without panicking.
func FuzzDigest(f *testing.F) {
	fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, sql string) {
		h, text := Digest(sql)
		h2, text2 := Digest(sql)
		if h != h2 || text != text2 {
			t.Fatal("Digest is not deterministic")
		}
		fh := fnv.New64a()
		fh.Write([]byte(text))
		if fh.Sum64() != h {
			t.Fatal("hash is not FNV-1a of the text")
		}
		if !strings.ContainsAny(sql, "'\"") && strings.ContainsAny(text, "'\"") {
			t.Fatalf("quotes appeared from nowhere: %q -> %q", sql, text)
		}
		Digest(text)
		// One tokenizer pass: the tokens Classify logged give the same
		// classification and digest as lexing again.
		var log TokenLog
		if r, want := ClassifyLogged(sql, &log), Classify(sql); !reflect.DeepEqual(r, want) {
			t.Fatalf("ClassifyLogged = %+v, Classify = %+v", r, want)
		}
		if lh, ltext := DigestLogged(nil, sql, &log); lh != h || string(ltext) != text {
			t.Fatalf("DigestLogged = %q (log used: %v), Digest = %q", ltext, log.covers(sql), text)
		}
	})
}

// TestLinearTime guards against quadratic behaviour on hostile input: each
// call must handle a megabyte-scale text quickly (the test's own timeout
// would catch a quadratic path, which takes minutes here).
func TestLinearTime(t *testing.T) {
	inputs := []string{
		"SELECT 1" + strings.Repeat(";", 1<<18) + "SELECT 2",
		strings.Repeat("SELECT 1;", 1<<15),
		"SELECT " + strings.Repeat("(", 1<<17) + strings.Repeat(")", 1<<17),
		"SET @a = " + strings.Repeat("(", 1<<17) + "1" + strings.Repeat(")", 1<<17),
		"SELECT * FROM t WHERE a IN (" + strings.Repeat("1,", 1<<17) + "1)",
		strings.Repeat("IN (1, ", 1<<15),
		"INSERT INTO t VALUES " + strings.Repeat("(1,'a'),", 1<<15) + "(1,'a')",
		"WITH " + strings.Repeat("a AS (SELECT 1), ", 1<<14) + "b AS (SELECT 2) SELECT 1",
		strings.Repeat("/* c */", 1<<16) + "SELECT 1",
		strings.Repeat("/*!", 1<<16),
		"FLUSH " + strings.Repeat("t, ", 1<<16),
	}
	for _, sql := range inputs {
		Classify(sql)
		ParseSet(sql)
		Digest(sql)
	}
}
