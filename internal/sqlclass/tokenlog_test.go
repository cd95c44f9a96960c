package sqlclass

import (
	"reflect"
	"strings"
	"testing"
)

// corpus is every statement of the unit tables.
func corpus() []string {
	var out []string
	for _, tc := range classifyTests {
		out = append(out, tc.sql)
	}
	for _, tc := range parseSetTests {
		out = append(out, tc.sql)
	}
	out = append(out, parseSetErrors...)
	for _, tc := range digestTests {
		out = append(out, tc.sql)
	}
	return out
}

// checkLogged fails t unless ClassifyLogged classifies sql as Classify
// does and DigestLogged digests it as Digest does, and reports whether the
// digest read the log rather than lexing again.
func checkLogged(t *testing.T, log *TokenLog, sql string) (used bool) {
	t.Helper()
	r := ClassifyLogged(sql, log)
	if want := Classify(sql); !reflect.DeepEqual(r, want) {
		t.Fatalf("ClassifyLogged(%q) = %+v, Classify = %+v", sql, r, want)
	}
	used = log.covers(sql)
	h, text := DigestLogged(nil, sql, log)
	wh, wtext := Digest(sql)
	if h != wh || string(text) != wtext {
		t.Fatalf("DigestLogged(%q) = %q (log used: %v), Digest = %q", sql, text, used, wtext)
	}
	return used
}

func TestDigestLoggedMatchesDigest(t *testing.T) {
	var log TokenLog // one log for all, as a session keeps one
	used, all := 0, 0
	for _, sql := range corpus() {
		all++
		if checkLogged(t, &log, sql) {
			used++
		}
	}
	t.Logf("the digest read the log for %d of %d statements", used, all)
	if used < all/2 {
		t.Errorf("the digest read the log for only %d of %d statements", used, all)
	}
}

// TestTokenLogCovers pins which statements the digest takes from the log:
// the hot path's, whole; anything with a gap or too long, never.
func TestTokenLogCovers(t *testing.T) {
	var log TokenLog
	for _, sql := range []string{
		pointSelect,
		"SELECT c FROM sbtest1 WHERE id BETWEEN 1 AND 100 ORDER BY c",
		"INSERT INTO sbtest1 (id, k, c, pad) VALUES (1, 2, 'c', 'pad')",
		"UPDATE sbtest1 SET k=k+1 WHERE id=5",
		"DELETE FROM sbtest1 WHERE id=5",
		"/* galeon:reader */ SELECT 1 /* x */ ;",
		"SELECT * FROM t WHERE id IN (1, 2, 3) FOR UPDATE",
		"BEGIN",
		"COMMIT",
		"SET autocommit=0",
		"",
	} {
		if !checkLogged(t, &log, sql) {
			t.Errorf("%q: the digest lexed the text again", sql)
		}
	}
	long := "SELECT " + strings.Repeat("1, ", maxLogged) + "1"
	for _, sql := range []string{long, "SELECT 1; SELECT 2"} {
		if checkLogged(t, &log, sql) {
			t.Errorf("%q: the digest read an incomplete log", sql)
		}
	}
	// A log is for its own text only.
	ClassifyLogged("SELECT a FROM t WHERE b = 1", &log)
	if h, text := DigestLogged(nil, "SELECT a FROM t WHERE b = 'x'", &log); string(text) != "SELECT a FROM t WHERE b = ?" || h == 0 {
		t.Errorf("digest of another text with the log: %q", text)
	}
	log.Reset()
	if log.covers("") {
		t.Error("a reset log covers the empty text")
	}
}

func TestDigestLoggedAllocs(t *testing.T) {
	var log TokenLog
	buf := make([]byte, 0, 256)
	ClassifyLogged(pointSelect, &log)
	if n := testing.AllocsPerRun(100, func() {
		ClassifyLogged(pointSelect, &log)
		DigestLogged(buf, pointSelect, &log)
	}); n != 0 {
		t.Errorf("ClassifyLogged + DigestLogged of a point select: %v allocs/op, want 0", n)
	}
}

// BenchmarkClassifyDigestPointSelect is the proxy's work per text
// statement: classification, then the digest for the statistics, lexing
// twice (Classify, DigestInto) or once (ClassifyLogged, DigestLogged).
func BenchmarkClassifyDigestPointSelect(b *testing.B) {
	buf := make([]byte, 0, 256)
	b.Run("lex-twice", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			Classify(pointSelect)
			DigestInto(buf, pointSelect)
		}
	})
	b.Run("lex-once", func(b *testing.B) {
		var log TokenLog
		b.ReportAllocs()
		for b.Loop() {
			ClassifyLogged(pointSelect, &log)
			DigestLogged(buf, pointSelect, &log)
		}
	})
}
