// Command causal measures what causal reads cost through galeon: point
// selects on the readers with and without wsrep_sync_wait=1 (the read
// waits until the node has applied every write-set the cluster committed
// before it), while writers keep the cluster busy. Rounds alternate so
// both see the same machine. It prints QPS and latency percentiles.
package main

import (
	"context"
	"database/sql"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/galeon-db/galeon/bench/internal/latency"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:6033", "galeon MySQL address")
	user := flag.String("user", "app", "user")
	password := flag.String("password", os.Getenv("GALEON_APP_PASSWORD"), "password")
	readers := flag.Int("readers", 8, "reading clients")
	writers := flag.Int("writers", 2, "writing clients (background load)")
	duration := flag.Duration("duration", 10*time.Second, "length of each round")
	rounds := flag.Int("rounds", 2, "rounds of each mode, alternated")
	flag.Parse()
	cfg := mysql.NewConfig()
	cfg.User, cfg.Passwd, cfg.Net, cfg.Addr, cfg.DBName = *user, *password, "tcp", *addr, "app"
	db, err := sql.Open("mysql", cfg.FormatDSN())
	if err != nil {
		fail(err)
	}
	db.SetMaxIdleConns(*readers + *writers)
	if _, err := db.Exec("CREATE TABLE IF NOT EXISTS app.causal (id INT PRIMARY KEY, v INT)"); err != nil {
		fail(err)
	}
	if _, err := db.Exec("INSERT IGNORE INTO app.causal SELECT seq, 0 FROM seq_1_to_1000"); err != nil {
		fail(err)
	}
	results := map[int][]time.Duration{}
	qps := map[int][]float64{}
	for r := 0; r < *rounds; r++ {
		for _, wait := range []int{0, 1} {
			lat, n := round(db, wait, *readers, *writers, *duration)
			results[wait] = append(results[wait], lat...)
			qps[wait] = append(qps[wait], float64(n)/duration.Seconds())
		}
	}
	fmt.Printf("causal reads through galeon: %d readers, %d writers, %d x %s rounds per mode\n", *readers, *writers, *rounds, *duration)
	fmt.Printf("%-22s %10s %9s %9s %9s\n", "mode", "QPS", "p50 ms", "p95 ms", "p99 ms")
	for _, wait := range []int{0, 1} {
		l := results[wait]
		latency.Sort(l)
		name := "plain reads"
		if wait == 1 {
			name = "wsrep_sync_wait=1"
		}
		fmt.Printf("%-22s %10.0f %9.3f %9.3f %9.3f\n", name, mean(qps[wait]), latency.Percentile(l, 50), latency.Percentile(l, 95), latency.Percentile(l, 99))
	}
}

func round(db *sql.DB, wait, readers, writers int, d time.Duration) ([]time.Duration, int64) {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	var wg sync.WaitGroup
	var n atomic.Int64
	var mu sync.Mutex
	var lat []time.Duration
	for i := 0; i < writers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				_, _ = db.ExecContext(ctx, "UPDATE app.causal SET v = v + 1 WHERE id = ?", rand.IntN(1000)+1)
			}
		}()
	}
	for i := 0; i < readers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := db.Conn(context.Background())
			if err != nil {
				return
			}
			defer c.Close()
			if _, err := c.ExecContext(context.Background(), fmt.Sprintf("SET SESSION wsrep_sync_wait = %d", wait)); err != nil {
				fail(err)
			}
			var local []time.Duration
			for ctx.Err() == nil {
				start := time.Now()
				var v int
				if err := c.QueryRowContext(ctx, "SELECT v FROM app.causal WHERE id = ?", rand.IntN(1000)+1).Scan(&v); err != nil {
					continue
				}
				local = append(local, time.Since(start))
				n.Add(1)
			}
			mu.Lock()
			lat = append(lat, local...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	return lat, n.Load()
}

func mean(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(max(1, len(xs)))
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "causal:", err)
	os.Exit(1)
}
