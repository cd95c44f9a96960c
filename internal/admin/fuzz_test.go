package admin

import (
	"errors"
	"testing"

	"github.com/galeon-db/galeon/internal/mysqlproto"
)

// FuzzQuery feeds arbitrary text to the splitter and, when it splits,
// runs it against the fake tables through SQLite: nothing may panic,
// every error must be an SQL error ready to send (never a bare Go error
// the connection would have to paper over), and whatever the text, the
// only changes that reach the table are row changes it accepts.
//
//	go test -run '^$' -fuzz FuzzQuery -fuzztime 15s ./internal/admin/
func FuzzQuery(f *testing.F) {
	for _, seed := range []string{
		"SELECT * FROM servers WHERE hostgroup = 10 AND (status IN ('ONLINE', 'x') OR weight BETWEEN 1 AND 5) ORDER BY port DESC LIMIT 2, 3",
		"SELECT hostname AS h, COUNT(*), @@version, DATABASE() FROM main.servers WHERE comment IS NOT NULL",
		"select count(*) from stats where name like 'q\\%%' or not value <=> null",
		"UPDATE servers SET weight = '12', comment = NULL, max_lag = -1.5e3 WHERE hostname LIKE 'db_' AND port != 3306",
		"INSERT INTO servers (hostname, port) VALUES ('db4', 3306)",
		"INSERT servers SET hostname = _binary'x'",
		"DELETE FROM servers WHERE hostname NOT IN ('a', \"b\", `c`)",
		"SHOW FULL COLUMNS FROM servers WHERE Field = 'port'",
		"SHOW VARIABLES LIKE 'ver%'; SHOW TABLES; DESCRIBE stats; SHOW CREATE TABLE servers",
		"SET NAMES utf8mb4; /*!40101 SET x = 1 */; USE main; COMMIT",
		"SELECT 'it''s', 'a\\'b', \"q\"\"q\" -- comment\n# hash\n/* block */",
		"SELECT * FROM t WHERE ((((a = 1))))",
		"SELECT 18446744073709551616, -9223372036854775808, .5e-3, 1e",
		"SELECT @@session.autocommit, @x, ?",
		"LOAD MYSQL SERVERS TO RUNTIME",
		"SELECT hostgroup, SUM(weight) FROM servers s JOIN stats t ON t.value > s.port GROUP BY 1 HAVING COUNT(*) > 0",
		"UPDATE servers SET weight = weight + 1 WHERE hostname IN (SELECT name FROM stats); ATTACH ':memory:' AS x",
		"INSERT INTO servers (hostname) SELECT name FROM stats WHERE name REGEXP '^q'",
		"DELETE FROM servers WHERE $0000000  #000000000",
		"SELECT $x, a$b FROM servers",
	} {
		f.Add(seed)
	}
	eng, _ := newTestEngine(f)
	f.Fuzz(func(t *testing.T, sql string) {
		stmts, err := splitQuery(sql)
		if err != nil {
			var se *mysqlproto.SQLError
			if !errors.As(err, &se) {
				t.Fatalf("splitQuery(%q): non-SQL error %v", sql, err)
			}
			return
		}
		if len(stmts) == 0 {
			t.Fatalf("splitQuery(%q): no statements and no error", sql)
		}
		sess := &session{user: "admin", host: "h", db: "main"}
		for _, st := range stmts {
			if _, err := eng.exec(sess, st, sql); err != nil {
				var se *mysqlproto.SQLError
				if !errors.As(err, &se) {
					t.Fatalf("exec(%q): non-SQL error %v", sql, err)
				}
			}
		}
	})
}

// FuzzLike checks the LIKE matcher terminates and agrees with itself on
// a literal pattern.
func FuzzLike(f *testing.F) {
	f.Add("mississippi", "%iss%pp_")
	f.Add("a%b", `a\%b`)
	f.Fuzz(func(t *testing.T, s, pattern string) {
		likeMatch(s, pattern)
		if len(s) < 200 && !likeMatch(s, "%") {
			t.Fatalf("%q does not match %%", s)
		}
	})
}
