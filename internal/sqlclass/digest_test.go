package sqlclass

import (
	"hash/fnv"
	"testing"
)

var digestTests = []struct{ sql, want string }{
	{"SELECT c FROM sbtest1 WHERE id=1234", "SELECT c FROM sbtest1 WHERE id = ?"},
	{"select  *\n from t where a = 'x' and b = \"y\"  -- c\n", "select * from t where a = ? and b = ?"},
	{"SELECT * FROM t WHERE id IN (1,2,3)", "SELECT * FROM t WHERE id IN (?,...)"},
	{"SELECT * FROM t WHERE id IN (42)", "SELECT * FROM t WHERE id IN (?,...)"},
	{"SELECT * FROM t WHERE id in(1, -2, 'a', NULL, ?, _latin1'x')", "SELECT * FROM t WHERE id in (?,...)"},
	{"SELECT * FROM t WHERE id NOT IN ( 'a' , 'b' )", "SELECT * FROM t WHERE id NOT IN (?,...)"},
	{"SELECT * FROM t WHERE id IN (SELECT id FROM u WHERE x = 5)", "SELECT * FROM t WHERE id IN (SELECT id FROM u WHERE x = ?)"},
	{"SELECT * FROM t WHERE id IN (1, a)", "SELECT * FROM t WHERE id IN (?, a)"},
	{"SELECT * FROM t WHERE (a, b) IN ((1, 2), (3, 4))", "SELECT * FROM t WHERE (a, b) IN ((?, ?), (?, ?))"},
	{"INSERT INTO t (a,b) VALUES (1,'x'),(2,'y'),(3,'z')", "INSERT INTO t (a, b) VALUES (?, ?),..."},
	{"INSERT INTO t (a,b) VALUES (1,'x')", "INSERT INTO t (a, b) VALUES (?, ?)"},
	{"insert into t values(1),(2) on duplicate key update a=values(a)", "insert into t values(?),... on duplicate key update a = values(a)"},
	{"INSERT INTO t VALUES (1, NOW()),(2, 3),(4, 5)", "INSERT INTO t VALUES (?, NOW()), (?, ?),..."},
	{"INSERT INTO t VALUES (1,2),(3,NOW()),(5,6),(7,8)", "INSERT INTO t VALUES (?, ?), (?, NOW()), (?, ?),..."},
	{"SELECT -1, a-1, a - -1, (-1), f(-2), +3 FROM t LIMIT -1", "SELECT ?, a - ?, a - ?, (?), f(?), ? FROM t LIMIT ?"},
	{"SELECT a-1, b+ 2, c*-3, ?-1", "SELECT a - ?, b + ?, c * ?, ? - ?"},
	{"SELECT x'0F', X'0f', 0x1F, b'01', 0b11, 1.5e3, .5, 1e-3, N'abc'", "SELECT ?, ?, ?, ?, ?, ?, ?, ?, ?"},
	{"SELECT _utf8mb4'x' COLLATE utf8mb4_bin", "SELECT ? COLLATE utf8mb4_bin"},
	{"SELECT _utf8mb4 FROM t", "SELECT _utf8mb4 FROM t"},
	{"SELECT 'it''s', 'a\\'b', \"q\"\"q\"", "SELECT ?, ?, ?"},
	{"/* galeon:writer */ SELECT /*+ BKA(t) */ 1 ; ", "SELECT ?"},
	{"/*!40101 SET NAMES utf8 */;", "SET NAMES utf8"},
	{"/*M!100100 SELECT 1 */", "SELECT ?"},
	{"SELECT 1; SELECT 2;;", "SELECT ?; SELECT ?"},
	{";;SELECT 1", "SELECT ?"},
	{"SELECT t.a, `t`.`b`, COUNT(*), count (*) FROM db.t AS t", "SELECT t.a, `t`.`b`, COUNT(*), count (*) FROM db.t AS t"},
	{"SELECT t . a FROM t", "SELECT t.a FROM t"},
	{"SELECT @a, @@session.x FROM t WHERE a >= 1 AND b <=> 2", "SELECT @a, @@session.x FROM t WHERE a >= ? AND b <=> ?"},
	{"SELECT a FROM t WHERE a BETWEEN -1 AND -2", "SELECT a FROM t WHERE a BETWEEN ? AND ?"},
	{"SELECT a FROM t WHERE b = ?", "SELECT a FROM t WHERE b = ?"},
	{"SELECT t1col FROM t1 WHERE 1abc = 2", "SELECT t1col FROM t1 WHERE 1abc = ?"},
	{"SELECT 1--1", "SELECT ? - ?"},
	{"SELECT 1 -- 1", "SELECT ?"},
	{"GRANT ALL ON *.* TO 'u'@'h' IDENTIFIED BY 'secret'", "GRANT ALL ON *.* TO ?@? IDENTIFIED BY ?"},
	{"UPDATE t SET a = 'x' WHERE id = 7", "UPDATE t SET a = ? WHERE id = ?"},
	{"SET @a := 5", "SET @a := ?"},
	{"", ""},
	{"  -- only comment", ""},
	{"SELECT 'unterminated", "SELECT ?"},
}

func TestDigest(t *testing.T) {
	for _, tc := range digestTests {
		h, got := Digest(tc.sql)
		if got != tc.want {
			t.Errorf("Digest(%q) text\n got %q\nwant %q", tc.sql, got, tc.want)
		}
		f := fnv.New64a()
		f.Write([]byte(got))
		if h != f.Sum64() {
			t.Errorf("Digest(%q) hash %x, want FNV-1a %x", tc.sql, h, f.Sum64())
		}
	}
}

// TestDigestEquivalent checks that texts differing only in literals,
// spacing, comments and list lengths share a digest, and that texts
// differing in structure do not.
func TestDigestEquivalent(t *testing.T) {
	same := [][]string{
		{
			"SELECT c FROM sbtest1 WHERE id=1234",
			"SELECT c FROM sbtest1 WHERE id = 1",
			"  SELECT   c\nFROM sbtest1\tWHERE id= -99 ; ",
			"/* galeon:reader */ SELECT c FROM sbtest1 WHERE id='x' -- comment",
			"SELECT /* x */ c FROM sbtest1 WHERE id=0x1F",
		},
		{
			"SELECT * FROM t WHERE a IN (1)",
			"SELECT * FROM t WHERE a IN (1, 2, 3, 4, 5, 6, 7, 8, 9, 10)",
			"SELECT * FROM t WHERE a IN ('a','b')",
		},
		{
			"INSERT INTO t VALUES (1, 'a'), (2, 'b')",
			"INSERT INTO t VALUES (1, 'a'), (2, 'b'), (3, 'c'), (4, 'd')",
		},
	}
	for _, group := range same {
		h0, t0 := Digest(group[0])
		for _, sql := range group[1:] {
			if h, text := Digest(sql); h != h0 {
				t.Errorf("Digest(%q) = %q, want same as %q = %q", sql, text, group[0], t0)
			}
		}
	}
	diff := []string{
		"SELECT c FROM sbtest1 WHERE id = 1",
		"SELECT c FROM sbtest2 WHERE id = 1",
		"SELECT d FROM sbtest1 WHERE id = 1",
		"SELECT c FROM sbtest1 WHERE id > 1",
		"SELECT c FROM sbtest1 WHERE id = @x",
		"INSERT INTO t VALUES (1, 'a')",
		"INSERT INTO t VALUES (1, 'a'), (2, 'b')",
	}
	seen := map[uint64]string{}
	for _, sql := range diff {
		h, _ := Digest(sql)
		if prev, ok := seen[h]; ok {
			t.Errorf("Digest(%q) collides with %q", sql, prev)
		}
		seen[h] = sql
	}
}
