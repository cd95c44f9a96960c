// Command largevalues sends a few large values through a MySQL endpoint
// (normally a proxy) and back, as drivers' BLOB round trips do, and
// watches the proxy's memory: its RSS before, the peak while the values
// pass, and again after a quiet period. A proxy that keeps a buffer grown
// for one large packet for the life of each connection stays hundreds of
// MiB up long after the values are gone; this makes that visible.
//
// It prints one JSON object on stdout and a summary on stderr. Every
// statement has a timeout, so a hung endpoint ends the run with an error.
package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"sync/atomic"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/galeon-db/galeon/bench/internal/procstat"
)

type result struct {
	Kind        string  `json:"kind"` // "largevalues": a record of bench/run.sh's raw.jsonl
	Target      string  `json:"target"`
	Status      string  `json:"status"` // ok, or failed (Error says why)
	Values      int     `json:"values"`
	ValueMiB    int     `json:"value_mib"`
	Conns       int     `json:"conns"`
	Seconds     float64 `json:"seconds"`
	MiBPerSec   float64 `json:"mib_per_sec"`
	RSSBefore   int64   `json:"rss_before_kib"`
	RSSPeak     int64   `json:"rss_peak_kib"`
	RSSAfter    int64   `json:"rss_after_kib"`
	QuietS      float64 `json:"quiet_s"`
	CPUSeconds  float64 `json:"cpu_seconds"`
	Error       string  `json:"error,omitempty"`
	CheckedRead bool    `json:"checked_read"`
}

func main() {
	addr := flag.String("addr", "127.0.0.1:6033", "MySQL endpoint host:port")
	user := flag.String("user", "app", "user (password from MYSQL_PWD)")
	db := flag.String("db", "sbtest", "database")
	target := flag.String("target", "", "what addr is (haproxy, galeon), for the record")
	pid := flag.Int("pid", 0, "the proxy's PID, whose memory is watched")
	values := flag.Int("values", 6, "values to send and read back")
	size := flag.Int("mib", 24, "size of each value in MiB")
	conns := flag.Int("conns", 3, "client connections the values are spread over")
	quiet := flag.Duration("quiet", 30*time.Second, "idle time before the last RSS reading")
	flag.Parse()
	r := result{Kind: "largevalues", Target: *target, Status: "ok", Values: *values, ValueMiB: *size, Conns: *conns, QuietS: quiet.Seconds()}
	err := run(&r, *addr, *user, *db, *pid, *quiet)
	if err != nil {
		r.Status, r.Error = "failed", err.Error()
	}
	_ = json.NewEncoder(os.Stdout).Encode(r)
	fmt.Fprintf(os.Stderr, "largevalues: %d × %d MiB over %d connections in %.1f s (%.0f MiB/s); proxy RSS %d → peak %d → %d KiB after %.0f s idle%s\n",
		r.Values, r.ValueMiB, r.Conns, r.Seconds, r.MiBPerSec, r.RSSBefore, r.RSSPeak, r.RSSAfter, r.QuietS, errSuffix(r.Error))
	if err != nil {
		os.Exit(1)
	}
}

func errSuffix(e string) string {
	if e == "" {
		return ""
	}
	return "; error: " + e
}

func run(r *result, addr, user, db string, pid int, quiet time.Duration) error {
	cfg := mysql.NewConfig()
	cfg.User, cfg.Passwd, cfg.Net, cfg.Addr, cfg.DBName = user, os.Getenv("MYSQL_PWD"), "tcp", addr, db
	cfg.Timeout, cfg.ReadTimeout, cfg.WriteTimeout = 5*time.Second, 60*time.Second, 60*time.Second
	cfg.MaxAllowedPacket = 64 << 20
	handle, err := sql.Open("mysql", cfg.FormatDSN())
	if err != nil {
		return err
	}
	defer handle.Close()
	handle.SetMaxOpenConns(r.Conns)
	handle.SetMaxIdleConns(r.Conns)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if _, err := handle.ExecContext(ctx, "CREATE TABLE IF NOT EXISTS bench_large (id INT PRIMARY KEY, v LONGBLOB)"); err != nil {
		return err
	}
	if _, err := handle.ExecContext(ctx, "TRUNCATE TABLE bench_large"); err != nil {
		return err
	}
	r.RSSBefore = procstat.RSSKiB(pid)
	cpu0 := procstat.CPUSeconds(pid)
	var peak atomic.Int64
	peak.Store(r.RSSBefore)
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() { // the peak, sampled every 100 ms while values pass
		defer close(sampled)
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				if v := procstat.RSSKiB(pid); v > peak.Load() {
					peak.Store(v)
				}
			}
		}
	}()
	start := time.Now()
	value := make([]byte, r.ValueMiB<<20)
	if _, err := rand.Read(value); err != nil {
		return err
	}
	errs := make(chan error, r.Values)
	sem := make(chan struct{}, r.Conns)
	for i := range r.Values {
		sem <- struct{}{}
		go func() {
			defer func() { <-sem }()
			errs <- roundTrip(ctx, handle, i, value)
		}()
	}
	var first error
	for range r.Values {
		if err := <-errs; err != nil && first == nil {
			first = err
		}
	}
	r.Seconds = time.Since(start).Seconds()
	r.MiBPerSec = float64(2*r.Values*r.ValueMiB) / r.Seconds
	r.CPUSeconds = procstat.CPUSeconds(pid) - cpu0
	close(stop)
	<-sampled
	r.RSSPeak = max(peak.Load(), procstat.RSSKiB(pid))
	r.CheckedRead = first == nil
	if _, err := handle.ExecContext(ctx, "DROP TABLE bench_large"); err != nil && first == nil {
		first = err
	}
	// The client connections stay open and idle, as an application's
	// pool would keep them.
	time.Sleep(quiet)
	r.RSSAfter = procstat.RSSKiB(pid)
	return first
}

// roundTrip writes value as row id and reads it back, checking it.
func roundTrip(ctx context.Context, db *sql.DB, id int, value []byte) error {
	if _, err := db.ExecContext(ctx, "INSERT INTO bench_large VALUES (?, ?)", id, value); err != nil {
		return fmt.Errorf("insert %d: %w", id, err)
	}
	var got []byte
	if err := db.QueryRowContext(ctx, "SELECT v FROM bench_large WHERE id = ?", id).Scan(&got); err != nil {
		return fmt.Errorf("select %d: %w", id, err)
	}
	if !bytes.Equal(got, value) {
		return fmt.Errorf("value %d came back different (%d bytes, want %d)", id, len(got), len(value))
	}
	return nil
}
