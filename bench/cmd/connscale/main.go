// Command connscale measures how a MySQL endpoint (normally a proxy) copes
// with many client connections:
//
//   - idle mode (-idle N): opens N client connections, holds them idle and
//     reports the proxy's RSS growth per connection (needs -pid), how many
//     backend connections the proxy holds for them (needs -pid and
//     -backends) and how many are still alive (COM_PING) after the hold.
//   - clients mode (-clients N): N concurrent clients, one connection each,
//     run autocommit point selects on sysbench tables for -duration and
//     report QPS, errors, latency percentiles and the proxy's backend
//     connections while they run. With -think D each client waits between
//     its statements (uniformly 0.5×D to 1.5×D), as an application's
//     connections do: thousands of them, mostly idle, over few backend
//     connections.
//   - churn mode (-churn N): N workers each connect, authenticate, run one
//     point select and quit, again and again for -duration, and report
//     connections per second, the latency of a whole cycle and the proxy's
//     CPU per connection (needs -pid).
//
// -tls makes every connection TLS (the certificate is not verified: what
// is measured is the handshake's cost).
//
// Each mode prints one JSON object on stdout (one line) and a human summary
// on stderr. Every phase is bounded in time: a hung endpoint yields errors,
// never a hung benchmark.
package main

import (
	"bufio"
	"context"
	"database/sql"
	"database/sql/driver"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/galeon-db/galeon/bench/internal/procstat"
)

type options struct {
	addr, user, password, db string
	idle, clients, churn     int
	think                    time.Duration
	tls                      bool
	duration, hold           time.Duration
	openTimeout              time.Duration
	connectTimeout           time.Duration
	queryTimeout             time.Duration
	concurrency              int
	pid                      int
	backends                 string
	admin, adminQuery        string
	tables, tableSize        int
	target                   string
}

func main() {
	var o options
	flag.StringVar(&o.addr, "addr", "127.0.0.1:6033", "MySQL endpoint host:port")
	flag.StringVar(&o.user, "user", "app", "user")
	flag.StringVar(&o.password, "password", os.Getenv("MYSQL_PWD"), "password (default $MYSQL_PWD)")
	flag.StringVar(&o.db, "db", "sbtest", "database holding the sysbench tables")
	flag.IntVar(&o.idle, "idle", 0, "idle mode: open this many idle connections")
	flag.IntVar(&o.clients, "clients", 0, "clients mode: this many concurrent clients doing point selects")
	flag.DurationVar(&o.think, "think", 0, "clients mode: each client waits about this long between its statements (uniformly 0.5x to 1.5x)")
	flag.IntVar(&o.churn, "churn", 0, "churn mode: this many workers each connect, run one point select and quit, in a loop")
	flag.BoolVar(&o.tls, "tls", false, "connect with TLS (the server's certificate is not verified)")
	flag.DurationVar(&o.duration, "duration", 20*time.Second, "clients and churn modes: how long the clients run")
	flag.DurationVar(&o.hold, "hold", 5*time.Second, "idle mode: how long the connections stay idle before RSS is read")
	flag.DurationVar(&o.openTimeout, "open-timeout", 120*time.Second, "bound on the whole connection-opening phase")
	flag.DurationVar(&o.connectTimeout, "connect-timeout", 10*time.Second, "bound on one connection's dial")
	flag.DurationVar(&o.queryTimeout, "query-timeout", 10*time.Second, "read/write timeout of one packet (handshake and queries)")
	flag.IntVar(&o.concurrency, "connect-concurrency", 64, "connections opened in parallel")
	flag.IntVar(&o.pid, "pid", 0, "PID of the proxy, for RSS, CPU, fds and backend sockets (0: not measured)")
	flag.StringVar(&o.backends, "backends", "", "comma-separated backend host:port list; with -pid, the proxy's established sockets to them are counted")
	flag.StringVar(&o.admin, "admin", "", "optional admin SQL endpoint DSN (go-sql-driver form, e.g. user:pw@tcp(127.0.0.1:6032)/) queried for the backend connection count")
	flag.StringVar(&o.adminQuery, "admin-query", "SELECT ConnUsed, ConnFree FROM stats_connection_pool", "admin query for the proxy's backend connections: the integers of all its rows and columns are added up")
	flag.IntVar(&o.tables, "tables", 4, "sysbench tables (sbtest1..N)")
	flag.IntVar(&o.tableSize, "table-size", 10000, "rows per sysbench table")
	flag.StringVar(&o.target, "target", "", "label copied into the JSON output")
	flag.Parse()
	if o.idle <= 0 && o.clients <= 0 && o.churn <= 0 {
		fmt.Fprintln(os.Stderr, "connscale: give -idle N, -clients N and/or -churn N")
		os.Exit(2)
	}
	if o.concurrency < 1 {
		o.concurrency = 1
	}
	_ = mysql.SetLogger(quietLogger{})

	cfg := mysql.NewConfig()
	cfg.User, cfg.Passwd, cfg.Net, cfg.Addr, cfg.DBName = o.user, o.password, "tcp", o.addr, o.db
	cfg.Timeout, cfg.ReadTimeout, cfg.WriteTimeout = o.connectTimeout, o.queryTimeout, o.queryTimeout
	if o.tls {
		cfg.TLSConfig = "skip-verify"
	}
	connector, err := mysql.NewConnector(cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "connscale:", err)
		os.Exit(2)
	}
	backends, err := parseBackends(o.backends)
	if err != nil {
		fmt.Fprintln(os.Stderr, "connscale:", err)
		os.Exit(2)
	}
	p := probe{pid: o.pid, backends: backends, admin: o.admin, adminQuery: o.adminQuery}

	ok := true
	if o.idle > 0 {
		r := runIdle(o, connector, p)
		emit(r)
		ok = ok && r.Opened > 0
	}
	if o.clients > 0 {
		r := runClients(o, connector, p)
		emit(r)
		ok = ok && r.Queries > 0
	}
	if o.churn > 0 {
		r := runChurn(o, connector, p)
		emit(r)
		ok = ok && r.Connections > 0
	}
	if !ok {
		os.Exit(1)
	}
}

type quietLogger struct{}

func (quietLogger) Print(...any) {}

func emit(v any) {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	fmt.Println(string(b))
}

// ---------------------------------------------------------------- idle mode

type idleResult struct {
	Kind               string         `json:"kind"`
	Mode               string         `json:"mode"`
	Target             string         `json:"target"`
	Addr               string         `json:"addr"`
	Requested          int            `json:"requested"`
	Opened             int            `json:"opened"`
	OpenErrors         int            `json:"open_errors"`
	FirstError         string         `json:"first_error,omitempty"`
	OpenSeconds        float64        `json:"open_seconds"`
	HoldSeconds        float64        `json:"hold_seconds"`
	AliveAfterHold     int            `json:"alive_after_hold"`
	RSSBeforeKiB       int64          `json:"rss_before_kib"`
	RSSAfterKiB        int64          `json:"rss_after_kib"`
	KiBPerConn         float64        `json:"kib_per_conn"`
	FDsBefore          int            `json:"fds_before"`
	FDsAfter           int            `json:"fds_after"`
	BackendConnsBefore int            `json:"backend_conns_before"`
	BackendConnsAfter  int            `json:"backend_conns_after"`
	BackendConnsByNode map[string]int `json:"backend_conns_by_node,omitempty"`
	AdminBackendConns  *int64         `json:"admin_backend_conns,omitempty"`
	AdminError         string         `json:"admin_error,omitempty"`
}

func runIdle(o options, c driver.Connector, p probe) idleResult {
	r := idleResult{Kind: "connscale", Mode: "idle", Target: o.target, Addr: o.addr, Requested: o.idle}
	time.Sleep(time.Second) // let the proxy settle after whatever came before
	r.RSSBeforeKiB, r.FDsBefore, r.BackendConnsBefore = p.rssKiB(), p.fds(), p.backendConns()

	start := time.Now()
	conns, errs, first := openConns(o, c, o.idle)
	r.OpenSeconds = time.Since(start).Seconds()
	r.Opened, r.OpenErrors, r.FirstError = len(conns), errs, first
	fmt.Fprintf(os.Stderr, "connscale idle: %d/%d connections open in %.1fs (%d errors)\n", len(conns), o.idle, r.OpenSeconds, errs)

	time.Sleep(o.hold)
	r.HoldSeconds = o.hold.Seconds()
	r.RSSAfterKiB, r.FDsAfter = p.rssKiB(), p.fds()
	r.BackendConnsByNode = p.backendConnsByAddr()
	r.BackendConnsAfter = sum(r.BackendConnsByNode)
	if n, err := p.adminCount(); err != nil {
		r.AdminError = err.Error()
	} else if n >= 0 {
		r.AdminBackendConns = &n
	}
	if r.Opened > 0 && r.RSSBeforeKiB >= 0 && r.RSSAfterKiB >= 0 {
		r.KiBPerConn = float64(r.RSSAfterKiB-r.RSSBeforeKiB) / float64(r.Opened)
	}
	r.AliveAfterHold = pingAll(o, conns)
	closeAll(conns)
	fmt.Fprintf(os.Stderr, "connscale idle: RSS %d -> %d KiB = %.2f KiB/conn; backend sockets %d -> %d; %d alive after %s\n",
		r.RSSBeforeKiB, r.RSSAfterKiB, r.KiBPerConn, r.BackendConnsBefore, r.BackendConnsAfter, r.AliveAfterHold, o.hold)
	return r
}

// openConns opens n connections, o.concurrency at a time, within
// o.openTimeout overall.
func openConns(o options, c driver.Connector, n int) (conns []driver.Conn, errs int, first string) {
	ctx, cancel := context.WithTimeout(context.Background(), o.openTimeout)
	defer cancel()
	var mu sync.Mutex
	var wg sync.WaitGroup
	sem := make(chan struct{}, o.concurrency)
	for i := 0; i < n; i++ {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			cctx, ccancel := context.WithTimeout(ctx, o.connectTimeout+o.queryTimeout)
			conn, err := c.Connect(cctx)
			ccancel()
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs++
				if first == "" {
					first = err.Error()
				}
				return
			}
			conns = append(conns, conn)
		}()
	}
	wg.Wait()
	return conns, errs, first
}

func pingAll(o options, conns []driver.Conn) int {
	var alive atomic.Int64
	var wg sync.WaitGroup
	sem := make(chan struct{}, o.concurrency)
	for _, conn := range conns {
		sem <- struct{}{}
		wg.Add(1)
		go func(conn driver.Conn) {
			defer wg.Done()
			defer func() { <-sem }()
			ctx, cancel := context.WithTimeout(context.Background(), o.queryTimeout)
			defer cancel()
			if pinger, ok := conn.(driver.Pinger); ok && pinger.Ping(ctx) == nil {
				alive.Add(1)
			}
		}(conn)
	}
	wg.Wait()
	return int(alive.Load())
}

func closeAll(conns []driver.Conn) {
	var wg sync.WaitGroup
	sem := make(chan struct{}, 256)
	for _, conn := range conns {
		sem <- struct{}{}
		wg.Add(1)
		go func(conn driver.Conn) {
			defer wg.Done()
			defer func() { <-sem }()
			_ = conn.Close()
		}(conn)
	}
	wg.Wait()
}

// ------------------------------------------------------------- clients mode

type clientsResult struct {
	Kind               string         `json:"kind"`
	Mode               string         `json:"mode"`
	Target             string         `json:"target"`
	Addr               string         `json:"addr"`
	Requested          int            `json:"requested"`
	ThinkMs            float64        `json:"think_ms"`
	TLS                bool           `json:"tls"`
	Connected          int            `json:"connected"`
	ConnectErrors      int            `json:"connect_errors"`
	FirstConnectError  string         `json:"first_connect_error,omitempty"`
	ConnectSeconds     float64        `json:"connect_seconds"`
	Seconds            float64        `json:"seconds"`
	Queries            int64          `json:"queries"`
	QPS                float64        `json:"qps"`
	Errors             int64          `json:"errors"`
	Reconnects         int64          `json:"reconnects"`
	FirstError         string         `json:"first_error,omitempty"`
	P50ms              float64        `json:"p50_ms"`
	P95ms              float64        `json:"p95_ms"`
	P99ms              float64        `json:"p99_ms"`
	MaxMs              float64        `json:"max_ms"`
	RSSBeforeKiB       int64          `json:"rss_before_kib"`
	RSSPeakKiB         int64          `json:"rss_peak_kib"`
	CPUSeconds         float64        `json:"cpu_seconds"`
	BackendConnsMid    int            `json:"backend_conns_mid"`
	BackendConnsMax    int            `json:"backend_conns_max"`
	BackendConnsByNode map[string]int `json:"backend_conns_by_node_mid,omitempty"`
	AdminBackendConns  *int64         `json:"admin_backend_conns,omitempty"`
	AdminError         string         `json:"admin_error,omitempty"`
}

type clientStats struct {
	lat        []time.Duration
	queries    int64
	errors     int64
	reconnects int64
	firstErr   string
}

func runClients(o options, c driver.Connector, p probe) clientsResult {
	r := clientsResult{Kind: "connscale", Mode: "clients", Target: o.target, Addr: o.addr, Requested: o.clients,
		ThinkMs: ms(o.think), TLS: o.tls, BackendConnsMid: -1, BackendConnsMax: -1}
	r.RSSBeforeKiB = p.rssKiB()
	cpu0 := p.cpuSeconds()

	start := time.Now()
	conns, errs, first := openConns(o, c, o.clients)
	r.ConnectSeconds = time.Since(start).Seconds()
	r.Connected, r.ConnectErrors, r.FirstConnectError = len(conns), errs, first
	fmt.Fprintf(os.Stderr, "connscale clients: %d/%d connected in %.1fs (%d errors); running %s\n",
		len(conns), o.clients, r.ConnectSeconds, errs, o.duration)

	ctx, cancel := context.WithTimeout(context.Background(), o.duration)
	defer cancel()

	// Sampler: RSS peak and backend sockets every second; admin count and
	// a "mid" sample half way through.
	var peak atomic.Int64
	peak.Store(r.RSSBeforeKiB)
	var bmax atomic.Int64
	bmax.Store(-1)
	samplerDone := make(chan struct{})
	go func() {
		defer close(samplerDone)
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		mid := time.After(o.duration / 2)
		for {
			select {
			case <-ctx.Done():
				return
			case <-mid:
				r.BackendConnsByNode = p.backendConnsByAddr()
				r.BackendConnsMid = sum(r.BackendConnsByNode)
				if n, err := p.adminCount(); err != nil {
					r.AdminError = err.Error()
				} else if n >= 0 {
					r.AdminBackendConns = &n
				}
			case <-tick.C:
				if v := p.rssKiB(); v > peak.Load() {
					peak.Store(v)
				}
				if v := int64(p.backendConns()); v > bmax.Load() {
					bmax.Store(v)
				}
			}
		}
	}()

	stats := make([]*clientStats, len(conns))
	var wg sync.WaitGroup
	runStart := time.Now()
	for i, conn := range conns {
		st := &clientStats{lat: make([]time.Duration, 0, 1024)}
		stats[i] = st
		wg.Add(1)
		go func(i int, conn driver.Conn) {
			defer wg.Done()
			rng := rand.New(rand.NewSource(int64(i) + time.Now().UnixNano()))
			if o.think > 0 {
				// Spread the clients' first statements over one think time.
				sleepCtx(ctx, time.Duration(rng.Int63n(int64(o.think))))
			}
			for ctx.Err() == nil {
				if o.think > 0 && st.queries+st.errors > 0 {
					sleepCtx(ctx, o.think/2+time.Duration(rng.Int63n(int64(o.think))))
					if ctx.Err() != nil {
						break
					}
				}
				if conn == nil {
					cctx, ccancel := context.WithTimeout(ctx, o.connectTimeout+o.queryTimeout)
					nc, err := c.Connect(cctx)
					ccancel()
					if err != nil {
						if ctx.Err() != nil {
							return
						}
						st.fail(err)
						sleepCtx(ctx, 100*time.Millisecond)
						continue
					}
					conn = nc
					st.reconnects++
				}
				q := fmt.Sprintf("SELECT c FROM sbtest%d WHERE id=%d", 1+rng.Intn(o.tables), 1+rng.Intn(o.tableSize))
				t0 := time.Now()
				err := pointSelect(ctx, conn, q)
				if err != nil {
					if ctx.Err() != nil {
						break
					}
					st.fail(err)
					if v, ok := conn.(driver.Validator); ok && !v.IsValid() {
						_ = conn.Close()
						conn = nil
					}
					sleepCtx(ctx, 10*time.Millisecond)
					continue
				}
				st.lat = append(st.lat, time.Since(t0))
				st.queries++
			}
			if conn != nil {
				_ = conn.Close()
			}
		}(i, conn)
	}
	wg.Wait()
	r.Seconds = time.Since(runStart).Seconds()
	cancel()
	<-samplerDone
	r.RSSPeakKiB = peak.Load()
	r.BackendConnsMax = int(bmax.Load())
	if cpu1 := p.cpuSeconds(); cpu0 >= 0 && cpu1 >= 0 {
		r.CPUSeconds = cpu1 - cpu0
	}

	tot, all := merge(stats)
	r.Queries, r.Errors, r.Reconnects, r.FirstError = tot.queries, tot.errors, tot.reconnects, tot.firstErr
	if r.Seconds > 0 {
		r.QPS = float64(r.Queries) / r.Seconds
	}
	r.P50ms, r.P95ms, r.P99ms = pct(all, 50), pct(all, 95), pct(all, 99)
	if len(all) > 0 {
		r.MaxMs = ms(all[len(all)-1])
	}
	fmt.Fprintf(os.Stderr, "connscale clients: %d queries in %.1fs = %.0f QPS, %d errors, %d reconnects; p50/p95/p99 %.2f/%.2f/%.2f ms; backend sockets mid %d max %d\n",
		r.Queries, r.Seconds, r.QPS, r.Errors, r.Reconnects, r.P50ms, r.P95ms, r.P99ms, r.BackendConnsMid, r.BackendConnsMax)
	return r
}

// --------------------------------------------------------------- churn mode

type churnResult struct {
	Kind        string  `json:"kind"`
	Mode        string  `json:"mode"`
	Target      string  `json:"target"`
	Addr        string  `json:"addr"`
	Workers     int     `json:"workers"`
	TLS         bool    `json:"tls"`
	Seconds     float64 `json:"seconds"`
	Connections int64   `json:"connections"`
	PerSecond   float64 `json:"per_second"`
	Errors      int64   `json:"errors"`
	FirstError  string  `json:"first_error,omitempty"`
	P50ms       float64 `json:"p50_ms"`
	P99ms       float64 `json:"p99_ms"`
	CPUSeconds  float64 `json:"cpu_seconds"`
	// CPUmsPerConn: the proxy's CPU per connection (-1 without -pid).
	CPUmsPerConn float64 `json:"cpu_ms_per_conn"`
}

// runChurn: o.churn workers each connect, run one point select and quit,
// in a loop, for o.duration.
func runChurn(o options, c driver.Connector, p probe) churnResult {
	r := churnResult{Kind: "connscale", Mode: "churn", Target: o.target, Addr: o.addr, Workers: o.churn, TLS: o.tls, CPUmsPerConn: -1}
	time.Sleep(time.Second) // let the proxy settle after whatever came before
	cpu0 := p.cpuSeconds()
	ctx, cancel := context.WithTimeout(context.Background(), o.duration)
	defer cancel()
	stats := make([]*clientStats, o.churn)
	var wg sync.WaitGroup
	start := time.Now()
	for i := range stats {
		st := &clientStats{lat: make([]time.Duration, 0, 1024)}
		stats[i] = st
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			rng := rand.New(rand.NewSource(int64(i) + time.Now().UnixNano()))
			for ctx.Err() == nil {
				t0 := time.Now()
				err := churnOnce(ctx, o, c, fmt.Sprintf("SELECT c FROM sbtest%d WHERE id=%d", 1+rng.Intn(o.tables), 1+rng.Intn(o.tableSize)))
				if err != nil {
					if ctx.Err() != nil {
						return
					}
					st.fail(err)
					sleepCtx(ctx, 10*time.Millisecond)
					continue
				}
				st.lat = append(st.lat, time.Since(t0))
				st.queries++
			}
		}(i)
	}
	wg.Wait()
	r.Seconds = time.Since(start).Seconds()
	if cpu1 := p.cpuSeconds(); cpu0 >= 0 && cpu1 >= 0 {
		r.CPUSeconds = cpu1 - cpu0
	}
	tot, all := merge(stats)
	r.Connections, r.Errors, r.FirstError = tot.queries, tot.errors, tot.firstErr
	if r.Seconds > 0 {
		r.PerSecond = float64(r.Connections) / r.Seconds
	}
	if r.Connections > 0 && cpu0 >= 0 {
		r.CPUmsPerConn = r.CPUSeconds * 1000 / float64(r.Connections)
	}
	r.P50ms, r.P99ms = pct(all, 50), pct(all, 99)
	fmt.Fprintf(os.Stderr, "connscale churn (tls=%v): %d connections in %.1fs = %.0f/s, %d errors; cycle p50/p99 %.2f/%.2f ms; proxy CPU %.3f ms/connection\n",
		o.tls, r.Connections, r.Seconds, r.PerSecond, r.Errors, r.P50ms, r.P99ms, r.CPUmsPerConn)
	return r
}

// churnOnce connects, runs q and quits (COM_QUIT).
func churnOnce(ctx context.Context, o options, c driver.Connector, q string) error {
	cctx, cancel := context.WithTimeout(ctx, o.connectTimeout+o.queryTimeout)
	defer cancel()
	conn, err := c.Connect(cctx)
	if err != nil {
		return err
	}
	err = pointSelect(cctx, conn, q)
	if cerr := conn.Close(); err == nil {
		err = cerr
	}
	return err
}

// merge adds up the clients' counts (the first error of the first client
// that had one) and returns all their latencies, sorted.
func merge(stats []*clientStats) (tot clientStats, all []time.Duration) {
	for _, st := range stats {
		tot.queries += st.queries
		tot.errors += st.errors
		tot.reconnects += st.reconnects
		if tot.firstErr == "" {
			tot.firstErr = st.firstErr
		}
		all = append(all, st.lat...)
	}
	sort.Slice(all, func(a, b int) bool { return all[a] < all[b] })
	return tot, all
}

func (st *clientStats) fail(err error) {
	st.errors++
	if st.firstErr == "" {
		st.firstErr = err.Error()
	}
}

func pointSelect(ctx context.Context, conn driver.Conn, q string) error {
	qc, ok := conn.(driver.QueryerContext)
	if !ok {
		return errors.New("driver connection has no QueryContext")
	}
	rows, err := qc.QueryContext(ctx, q, nil)
	if err != nil {
		return err
	}
	dest := make([]driver.Value, len(rows.Columns()))
	for {
		if err := rows.Next(dest); err != nil {
			if err == io.EOF {
				break
			}
			_ = rows.Close()
			return err
		}
	}
	return rows.Close()
}

func sleepCtx(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

func pct(sorted []time.Duration, p float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	i := int(float64(len(sorted))*p/100+0.999999) - 1
	if i < 0 {
		i = 0
	}
	if i >= len(sorted) {
		i = len(sorted) - 1
	}
	return ms(sorted[i])
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// -------------------------------------------------------------- /proc probe

// probe reads the proxy's resource use from /proc; every reading is -1 when
// unknown (no -pid, or the process is gone).
type probe struct {
	pid        int
	backends   map[string]bool // "ip:port", ip in net.IP.String() form
	admin      string
	adminQuery string
}

func (p probe) rssKiB() int64 { return procstat.RSSKiB(p.pid) }

// cpuSeconds is utime+stime of the whole process (all threads).
func (p probe) cpuSeconds() float64 { return procstat.CPUSeconds(p.pid) }

func (p probe) socketInodes() map[string]bool {
	dir := fmt.Sprintf("/proc/%d/fd", p.pid)
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	inodes := make(map[string]bool, len(ents))
	for _, e := range ents {
		l, err := os.Readlink(filepath.Join(dir, e.Name()))
		if err == nil && strings.HasPrefix(l, "socket:[") {
			inodes[strings.TrimSuffix(strings.TrimPrefix(l, "socket:["), "]")] = true
		}
	}
	return inodes
}

// sum adds up a per-node count; -1 when unknown.
func sum(by map[string]int) int {
	if by == nil {
		return -1
	}
	n := 0
	for _, c := range by {
		n += c
	}
	return n
}

func (p probe) fds() int {
	if p.pid <= 0 {
		return -1
	}
	ents, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", p.pid))
	if err != nil {
		return -1
	}
	return len(ents)
}

// backendConns counts the proxy's ESTABLISHED TCP sockets whose remote end is
// one of the backends.
func (p probe) backendConns() int {
	return sum(p.backendConnsByAddr())
}

// backendConnsByAddr is backendConns per backend address (nil: unknown).
func (p probe) backendConnsByAddr() map[string]int {
	if p.pid <= 0 || len(p.backends) == 0 {
		return nil
	}
	inodes := p.socketInodes()
	if inodes == nil {
		return nil
	}
	by := make(map[string]int, len(p.backends))
	for b := range p.backends {
		by[b] = 0
	}
	for _, f := range []string{"tcp", "tcp6"} {
		fh, err := os.Open(fmt.Sprintf("/proc/%d/net/%s", p.pid, f))
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(fh)
		sc.Scan() // header
		for sc.Scan() {
			fields := strings.Fields(sc.Text())
			if len(fields) < 10 || fields[3] != "01" || !inodes[fields[9]] {
				continue
			}
			if remote, ok := parseProcAddr(fields[2]); ok && p.backends[remote] {
				by[remote]++
			}
		}
		fh.Close()
	}
	return by
}

// parseProcAddr decodes /proc/net/tcp{,6} "HEXIP:HEXPORT"; the address is
// stored as 32-bit words in host (little-endian on amd64/arm64) order.
func parseProcAddr(s string) (string, bool) {
	ipHex, portHex, ok := strings.Cut(s, ":")
	if !ok {
		return "", false
	}
	raw, err := hex.DecodeString(ipHex)
	if err != nil || (len(raw) != 4 && len(raw) != 16) {
		return "", false
	}
	ip := make(net.IP, len(raw))
	for w := 0; w < len(raw); w += 4 {
		ip[w], ip[w+1], ip[w+2], ip[w+3] = raw[w+3], raw[w+2], raw[w+1], raw[w]
	}
	port, err := strconv.ParseUint(portHex, 16, 16)
	if err != nil {
		return "", false
	}
	return net.JoinHostPort(ip.String(), strconv.FormatUint(port, 10)), true
}

func parseBackends(s string) (map[string]bool, error) {
	m := map[string]bool{}
	for _, b := range strings.Split(s, ",") {
		b = strings.TrimSpace(b)
		if b == "" {
			continue
		}
		host, port, err := net.SplitHostPort(b)
		if err != nil {
			return nil, fmt.Errorf("-backends %q: %v", b, err)
		}
		ip := net.ParseIP(host)
		if ip == nil {
			return nil, fmt.Errorf("-backends %q: need an IP address", b)
		}
		m[net.JoinHostPort(ip.String(), port)] = true
	}
	return m, nil
}

// adminCount runs the admin query and adds up every integer it returns
// (e.g. ConnUsed and ConnFree of every node); -1 and no error when no admin
// endpoint was given.
func (p probe) adminCount() (int64, error) {
	if p.admin == "" {
		return -1, nil
	}
	db, err := sql.Open("mysql", p.admin)
	if err != nil {
		return -1, err
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	rows, err := db.QueryContext(ctx, p.adminQuery)
	if err != nil {
		return -1, err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return -1, err
	}
	vals := make([]sql.NullString, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	var total int64
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return -1, err
		}
		for _, v := range vals {
			if n, err := strconv.ParseInt(v.String, 10, 64); v.Valid && err == nil {
				total += n
			}
		}
	}
	return total, rows.Err()
}
