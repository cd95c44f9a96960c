// Command ryw measures what read-your-writes costs through galeon, and
// what it buys: clients that write a row (autocommit) and read it back
// right away, the read going to a reader node. Three modes, rounds
// alternated so all see the same machine:
//
//   - on: a galeon with galera.read_your_writes = "on" (the default): the
//     first read on each node after a write is causal;
//   - sync_wait: a galeon with read_your_writes = "off", the client
//     setting wsrep_sync_wait = 1 (the read waits for everything the
//     cluster committed before it);
//   - off: the same galeon, no wait at all (reads may miss the write).
//
// It prints write+read pairs per second, read latency percentiles and how
// many reads missed the row just written.
package main

import (
	"context"
	"database/sql"
	"flag"
	"fmt"
	"os"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/galeon-db/galeon/bench/internal/latency"
)

type mode struct {
	name     string
	addr     string
	syncWait bool
}

func main() {
	addr := flag.String("addr", "127.0.0.1:6033", "galeon with read_your_writes = on")
	addrOff := flag.String("addr-off", "", "galeon with read_your_writes = off")
	user := flag.String("user", "app", "user")
	password := flag.String("password", os.Getenv("GALEON_APP_PASSWORD"), "password")
	clients := flag.Int("clients", 8, "clients, each writing then reading")
	duration := flag.Duration("duration", 10*time.Second, "length of each round")
	rounds := flag.Int("rounds", 3, "rounds of each mode, alternated")
	flag.Parse()
	if *addrOff == "" {
		fail(fmt.Errorf("-addr-off is required"))
	}
	modes := []mode{{"on", *addr, false}, {"sync_wait", *addrOff, true}, {"off", *addrOff, false}}
	dbs := map[string]*sql.DB{}
	for _, m := range modes {
		if dbs[m.addr] != nil {
			continue
		}
		cfg := mysql.NewConfig()
		cfg.User, cfg.Passwd, cfg.Net, cfg.Addr, cfg.DBName = *user, *password, "tcp", m.addr, "app"
		cfg.InterpolateParams = true
		db, err := sql.Open("mysql", cfg.FormatDSN())
		if err != nil {
			fail(err)
		}
		db.SetMaxIdleConns(*clients)
		dbs[m.addr] = db
	}
	if _, err := dbs[*addr].Exec("CREATE TABLE IF NOT EXISTS app.ryw_bench (id BIGINT AUTO_INCREMENT PRIMARY KEY, v INT)"); err != nil {
		fail(err)
	}
	type agg struct {
		lat    []time.Duration
		qps    []float64
		misses int64
		reads  int64
	}
	res := map[string]*agg{}
	for r := 0; r < *rounds; r++ {
		for _, m := range modes {
			a := res[m.name]
			if a == nil {
				a = &agg{}
				res[m.name] = a
			}
			lat, pairs, misses := round(dbs[m.addr], m.syncWait, *clients, *duration)
			a.lat = append(a.lat, lat...)
			a.qps = append(a.qps, float64(pairs)/duration.Seconds())
			a.misses += misses
			a.reads += pairs
		}
	}
	fmt.Printf("read-your-writes through galeon: %d clients, each INSERT then SELECT of that row, %d x %s rounds per mode\n", *clients, *rounds, *duration)
	fmt.Printf("%-10s %12s %12s %9s %9s %9s %14s\n", "mode", "pairs/s", "range", "p50 ms", "p95 ms", "p99 ms", "missed reads")
	for _, m := range modes {
		a := res[m.name]
		latency.Sort(a.lat)
		lo, hi := minmax(a.qps)
		fmt.Printf("%-10s %12.0f %5.0f–%-6.0f %9.3f %9.3f %9.3f %7d of %d\n", m.name, median(a.qps), lo, hi,
			latency.Percentile(a.lat, 50), latency.Percentile(a.lat, 95), latency.Percentile(a.lat, 99), a.misses, a.reads)
	}
}

// round runs the clients for d and returns the read latencies, the
// number of write+read pairs and the reads that missed their row.
func round(db *sql.DB, syncWait bool, clients int, d time.Duration) ([]time.Duration, int64, int64) {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	var wg sync.WaitGroup
	var pairs, misses atomic.Int64
	var mu sync.Mutex
	var lat []time.Duration
	for i := 0; i < clients; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := db.Conn(context.Background())
			if err != nil {
				fail(err)
			}
			defer c.Close()
			if syncWait {
				if _, err := c.ExecContext(context.Background(), "SET SESSION wsrep_sync_wait = 1"); err != nil {
					fail(err)
				}
			}
			var local []time.Duration
			for ctx.Err() == nil {
				r, err := c.ExecContext(ctx, "INSERT INTO app.ryw_bench (v) VALUES (1)")
				if err != nil {
					continue
				}
				id, _ := r.LastInsertId()
				start := time.Now()
				var n int
				if err := c.QueryRowContext(ctx, "SELECT COUNT(*) FROM app.ryw_bench WHERE id = ?", id).Scan(&n); err != nil {
					continue
				}
				local = append(local, time.Since(start))
				pairs.Add(1)
				if n != 1 {
					misses.Add(1)
				}
			}
			mu.Lock()
			lat = append(lat, local...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	return lat, pairs.Load(), misses.Load()
}

func median(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	if len(s) == 0 {
		return 0
	}
	return s[len(s)/2]
}

func minmax(xs []float64) (lo, hi float64) {
	for i, x := range xs {
		if i == 0 || x < lo {
			lo = x
		}
		if x > hi {
			hi = x
		}
	}
	return lo, hi
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "ryw:", err)
	os.Exit(1)
}
