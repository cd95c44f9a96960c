// Command replag measures how far an asynchronous replica runs behind the
// cluster's writer under load: every -interval it reads the writer's
// gtid_binlog_pos and the replica's gtid_slave_pos in the cluster's GTID
// domain, until -duration ends or it is interrupted. The lag in
// transactions is the difference of the two sequence numbers; the lag in
// seconds is how long ago the writer first showed the first transaction
// the replica still lacks (0 when it lacks none), to within -interval. It
// prints one JSON object: samples and the median, p99 and maximum of both.
package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"slices"
	"syscall"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/galeon-db/galeon/internal/replica"
)

func main() {
	writer := flag.String("writer", "", "the writer's MySQL address (host:port)")
	rep := flag.String("replica", "", "the replica's MySQL address (host:port)")
	user := flag.String("user", "", "an account on both (no privilege needed)")
	domain := flag.Uint("domain", 100, "the cluster's GTID domain (wsrep_gtid_domain_id)")
	interval := flag.Duration("interval", 50*time.Millisecond, "time between samples")
	duration := flag.Duration("duration", time.Minute, "how long to sample (or until SIGTERM)")
	workload := flag.String("workload", "", "label: the load's workload id (bench/run.sh)")
	target := flag.String("target", "", "label: the target the load went through")
	round := flag.Int("round", 0, "label: the bench round")
	flag.Parse()
	if *writer == "" || *rep == "" || *user == "" {
		fail(fmt.Errorf("-writer, -replica and -user are required (the password in $MYSQL_PWD)"))
	}
	w, r := open(*writer, *user), open(*rep, *user)
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, *duration)
	defer cancel()
	type seen struct {
		at  time.Time
		seq uint64
	}
	var history []seen // the writer's sequence number when it changed
	type sample struct {
		ws     uint64
		behind float64
		lag    float64
	}
	var samples []sample
	errs := 0
	t := time.NewTicker(*interval)
	defer t.Stop()
	for {
		ws, err1 := seqno(ctx, w, "SELECT @@gtid_binlog_pos", uint32(*domain))
		rs, err2 := seqno(ctx, r, "SELECT @@gtid_slave_pos", uint32(*domain))
		now := time.Now()
		if err1 == nil && err2 == nil {
			if len(history) == 0 || ws > history[len(history)-1].seq {
				history = append(history, seen{now, ws})
			}
			behind := max(int64(ws)-int64(rs), 0)
			lag := 0.0
			if behind > 0 {
				// The first sample that showed a transaction the
				// replica lacks (sequence number > rs).
				i, _ := slices.BinarySearchFunc(history, rs+1, func(s seen, target uint64) int {
					switch {
					case s.seq < target:
						return -1
					case s.seq > target:
						return 1
					}
					return 0
				})
				if i < len(history) {
					lag = now.Sub(history[i].at).Seconds()
				}
			}
			samples = append(samples, sample{ws, float64(behind), lag})
		} else if ctx.Err() == nil {
			errs++
		}
		select {
		case <-ctx.Done():
			// Only while the load ran or the replica caught up: idle
			// samples before the writer's first new transaction and
			// after the replica had its last one would dilute the
			// figures.
			first, last := 0, len(samples)-1
			for first < last && samples[first+1].ws == samples[first].ws && samples[first].behind == 0 {
				first++
			}
			for last > first && samples[last-1].ws == samples[last].ws && samples[last].behind == 0 && samples[last-1].behind == 0 {
				last--
			}
			var trx, secs []float64
			if len(samples) > 0 {
				for _, x := range samples[first : last+1] {
					trx, secs = append(trx, x.behind), append(secs, x.lag)
				}
			}
			out := map[string]any{"kind": "replag", "workload": *workload, "target": *target, "round": *round,
				"samples": len(trx), "errors": errs, "interval_ms": interval.Milliseconds()}
			put := func(name string, v []float64) {
				if len(v) == 0 {
					return
				}
				slices.Sort(v)
				out[name+"_p50"] = v[len(v)/2]
				out[name+"_p99"] = v[min(len(v)-1, len(v)*99/100)]
				out[name+"_max"] = v[len(v)-1]
			}
			put("trx", trx)
			put("seconds", secs)
			if len(history) > 1 {
				first, last := history[0], history[len(history)-1]
				if d := last.at.Sub(first.at).Seconds(); d > 0 {
					out["writer_trx_per_s"] = float64(last.seq-first.seq) / d
				}
			}
			_ = json.NewEncoder(os.Stdout).Encode(out)
			return
		case <-t.C:
		}
	}
}

func open(addr, user string) *sql.DB {
	cfg := mysql.NewConfig()
	cfg.User, cfg.Passwd, cfg.Net, cfg.Addr = user, os.Getenv("MYSQL_PWD"), "tcp", addr
	cfg.Timeout, cfg.ReadTimeout = 2*time.Second, 2*time.Second
	c, err := mysql.NewConnector(cfg)
	if err != nil {
		fail(err)
	}
	db := sql.OpenDB(c)
	db.SetMaxOpenConns(1)
	return db
}

func seqno(ctx context.Context, db *sql.DB, q string, domain uint32) (uint64, error) {
	var s string
	if err := db.QueryRowContext(ctx, q).Scan(&s); err != nil {
		return 0, err
	}
	p, err := replica.ParsePosition(s)
	if err != nil {
		return 0, err
	}
	return p.Seqno(domain), nil
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "replag:", err)
	os.Exit(2)
}
