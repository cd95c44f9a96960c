package sqlclass

import "testing"

const pointSelect = "SELECT c FROM sbtest1 WHERE id=1234"

// TestClassifyFastPathAllocs pins the fast path at zero allocations; the
// benchmark reports the same figure, this makes a regression fail tests.
func TestClassifyFastPathAllocs(t *testing.T) {
	for _, sql := range []string{
		pointSelect,
		"INSERT INTO sbtest1 (id, k, c, pad) VALUES (1, 2, 'c', 'pad')",
		"UPDATE sbtest1 SET k=k+1 WHERE id=5",
		"DELETE FROM sbtest1 WHERE id=5",
		"/* galeon:hostgroup=olap */ SELECT SUM(k) FROM sbtest1 WHERE id BETWEEN 1 AND 100",
		"SELECT * FROM t WHERE id=1 FOR UPDATE",
		"SET autocommit=0",
		"START TRANSACTION READ ONLY",
		"COMMIT",
	} {
		if n := testing.AllocsPerRun(100, func() { Classify(sql) }); n != 0 {
			t.Errorf("Classify(%q): %v allocs/op, want 0", sql, n)
		}
	}
}

func BenchmarkClassifyPointSelect(b *testing.B) {
	b.ReportAllocs()
	b.SetBytes(int64(len(pointSelect)))
	for b.Loop() {
		Classify(pointSelect)
	}
}

func BenchmarkClassifyLockingRead(b *testing.B) {
	const sql = "SELECT c FROM sbtest1 WHERE id BETWEEN 1 AND 100 ORDER BY c FOR UPDATE"
	b.ReportAllocs()
	for b.Loop() {
		Classify(sql)
	}
}

func BenchmarkClassifySet(b *testing.B) {
	const sql = "SET SESSION sql_mode = 'STRICT_TRANS_TABLES', autocommit = 1"
	b.ReportAllocs()
	for b.Loop() {
		Classify(sql)
	}
}

func BenchmarkClassifyMulti(b *testing.B) {
	const sql = "SET @a = 1; SELECT @a; UPDATE t SET b = @a WHERE id = 1"
	b.ReportAllocs()
	for b.Loop() {
		Classify(sql)
	}
}

func BenchmarkParseSet(b *testing.B) {
	const sql = "SET NAMES utf8mb4 COLLATE utf8mb4_unicode_ci, @a = CONCAT('x', 'y'), SESSION sql_mode = ''"
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ParseSet(sql); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDigestPointSelect(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		Digest(pointSelect)
	}
}
