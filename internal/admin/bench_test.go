package admin

import (
	"fmt"
	"testing"
)

// BenchmarkDigestJoin measures the figure operators feel: a join and
// aggregate over a 10,000-row digest table, each statement loading the
// live rows into SQLite first.
//
//	go test -run '^$' -bench DigestJoin ./internal/admin/
func BenchmarkDigestJoin(b *testing.B) {
	digests := make([][]any, 10_000)
	for i := range digests {
		digests[i] = []any{[]string{"writer", "reader"}[i%2], fmt.Sprintf("user%d", i%5), fmt.Sprintf("0x%016x", i),
			fmt.Sprintf("SELECT c FROM sbtest%d WHERE id = ?", i), int64(i * 3), int64(i)}
	}
	users := make([][]any, 5)
	for i := range users {
		users[i] = []any{fmt.Sprintf("user%d", i), []string{"writer", "reader", ""}[i%3]}
	}
	cat, err := newCatalog([]Table{
		{Name: "stats_query_digest", Columns: []Column{{Name: "hostgroup", Kind: Text}, {Name: "username", Kind: Text},
			{Name: "digest", Kind: Text}, {Name: "digest_text", Kind: Text}, {Name: "count_star", Kind: Int}, {Name: "sum_time", Kind: Int}},
			Rows: func() [][]any { return digests }},
		{Name: "users", Columns: []Column{{Name: "name", Kind: Text}, {Name: "default_hostgroup", Kind: Text}},
			Rows: func() [][]any { return users }},
	})
	if err != nil {
		b.Fatal(err)
	}
	eng := newEngine(cat, serverVersion, maxPacketSize, false)
	defer eng.store.close()
	q := "SELECT u.name, d.hostgroup, SUM(d.count_star) AS n, SUM(d.sum_time) / SUM(d.count_star) AS avg_us " +
		"FROM stats_query_digest d JOIN users u ON u.name = d.username GROUP BY 1, 2 ORDER BY n DESC LIMIT 5"
	res, err := run(eng, q)
	if err != nil || len(res.rows) != 5 {
		b.Fatalf("%v %v", err, res)
	}
	b.ResetTimer()
	for b.Loop() {
		if _, err := run(eng, q); err != nil {
			b.Fatal(err)
		}
	}
}
