package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/galeon-db/galeon/internal/sandbox"
	"github.com/galeon-db/galeon/internal/wsrepview"
)

// quietLogger drops go-sql-driver's own log lines: an unreachable node is
// reported in the view, not as noise on stderr.
type quietLogger struct{}

func (quietLogger) Print(...any) {}

func runStatus(ctx context.Context, args []string) error {
	_ = mysql.SetLogger(quietLogger{})
	fs := flag.NewFlagSet("status", flag.ContinueOnError)
	name := fs.String("name", sandbox.DefaultName, "sandbox to watch (when --nodes is not given)")
	dir := fs.String("dir", "", "sandbox directory (default /var/tmp/galeon/NAME)")
	nodes := fs.String("nodes", "", "comma-separated host:port list of any Galera cluster's nodes")
	user := fs.String("user", "", "user for --nodes (needs no privilege on MariaDB; default: $GALEON_MONITOR_USER)")
	password := fs.String("password", "", "password for --nodes (default: $GALEON_MONITOR_PASSWORD)")
	interval := fs.Duration("interval", time.Second, "sampling interval")
	once := fs.Bool("once", false, "print one interval and exit")
	asJSON := fs.Bool("json", false, "one JSON object per interval")
	count := fs.Int("count", 0, "stop after this many intervals (0: until interrupted)")
	disc := fs.String("discovery", "", "etcd of the control plane (default: the sandbox's); \"none\" to skip it")
	cluster := fs.String("cluster", "", "cluster name in etcd (default: the sandbox's name)")
	if _, err := parseInterleaved(fs, args); err != nil {
		return err
	}
	if *interval < 100*time.Millisecond {
		return fmt.Errorf("--interval %s: use at least 100ms", *interval)
	}
	if *dir == "" {
		*dir = sandbox.DirFor(*name)
	}
	targets, err := statusTargets(*nodes, *user, *password, *dir)
	if err != nil {
		return err
	}
	defer func() {
		for _, t := range targets {
			t.DB.Close()
		}
	}()
	control := openControlView(ctx, *disc, *cluster, *nodes == "", *dir)
	if control != nil {
		defer control.Close()
	}
	w := &wsrepview.Watcher{Targets: targets, Timeout: min(*interval, 2*time.Second)}
	w.Poll(ctx) // baseline for rates
	var links *linkWatch
	var sb *sandbox.Sandbox // the sandbox watched, if any: it names the arbitrators
	if *nodes == "" {
		if s, err := sandbox.Open(*dir, sandbox.Control{}); err == nil {
			sb = s
		}
	}
	if sb != nil && sb.Net != nil && !*asJSON {
		links = &linkWatch{sb: sb}
		links.poll(ctx) // baseline for rates
	}
	if *once {
		*count = 1
	}
	enc := json.NewEncoder(os.Stdout)
	tick := time.NewTicker(*interval)
	defer tick.Stop()
	for i := 0; *count == 0 || i < *count; i++ {
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
		rows := w.Poll(ctx)
		arbs := arbitratorRows(sb)
		cp := control.read(ctx)
		if *asJSON {
			obj := map[string]any{"time": time.Now().UTC(), "nodes": rows}
			if len(arbs) > 0 {
				obj["arbitrators"] = arbs
			}
			if sites := wsrepview.Sites(rows, arbs); sites != nil {
				obj["sites"] = sites
			}
			if cp != nil {
				obj["control_plane"] = cp
			}
			if err := enc.Encode(obj); err != nil {
				return err
			}
			continue
		}
		if i%20 == 0 {
			if cp != nil {
				fmt.Print(cp.text())
			}
			for _, l := range wsrepview.Durability(rows) {
				fmt.Println(l)
			}
			fmt.Println(wsrepview.Header())
		}
		sites := wsrepview.Sites(rows, arbs)
		if sites == nil {
			for _, r := range rows {
				fmt.Println(r.Line())
			}
			for _, a := range arbs {
				fmt.Println(a.Line())
			}
		}
		for _, site := range sites {
			fmt.Println(site.Line())
			for _, k := range site.Rows {
				fmt.Println(rows[k].Line())
			}
			for _, k := range site.ArbRows {
				fmt.Println(arbs[k].Line())
			}
		}
		if len(arbs) == 0 {
			if line := wsrepview.Unnamed(rows); line != "" {
				fmt.Println(line)
			}
		}
		for _, l := range links.poll(ctx) {
			fmt.Println(l)
		}
	}
	return nil
}

// arbitratorRows are the sandbox's arbitrators as status shows them
// (none without a sandbox: Galera counts them, wsrepview.Unnamed).
func arbitratorRows(sb *sandbox.Sandbox) []wsrepview.ArbitratorRow {
	if sb == nil {
		return nil
	}
	now := time.Now()
	var out []wsrepview.ArbitratorRow
	for _, a := range sb.ArbitratorStatus() {
		size, _ := strconv.ParseInt(a.ClusterSize, 10, 64)
		out = append(out, wsrepview.ArbitratorRow{Name: a.Name, Time: now, Site: a.Site, Segment: int64(a.Segment), Address: a.Addr(),
			Process: a.Process, ClusterStatus: a.ClusterStatus, Size: size})
	}
	return out
}

// linkWatch reports a multi-site sandbox's links between sites at each
// interval: the measured round trip and the bytes per second each way.
type linkWatch struct {
	sb   *sandbox.Sandbox
	prev map[[2]string][2]uint64
	at   time.Time
}

func (w *linkWatch) poll(ctx context.Context) []string {
	if w == nil || w.sb == nil || w.sb.Net == nil {
		return nil
	}
	links, err := w.sb.Links(ctx, time.Second)
	if err != nil {
		return []string{"links: " + err.Error()}
	}
	now := time.Now()
	dt := now.Sub(w.at).Seconds()
	var out []string
	next := map[[2]string][2]uint64{}
	for _, l := range links {
		k := [2]string{l.A, l.B}
		next[k] = [2]uint64{l.BytesA, l.BytesB}
		rtt := fmt.Sprintf("rtt %.1f ms", float64(l.RTT.Microseconds())/1000)
		if l.Err != "" {
			rtt = "cut"
		}
		p, ok := w.prev[k]
		if !ok || dt <= 0 {
			out = append(out, fmt.Sprintf("── link %s-%s: %s", l.A, l.B, rtt))
			continue
		}
		rate := func(cur, old uint64) string { return wsrepview.Human(float64(cur-min(cur, old))/dt) + "B/s" }
		out = append(out, fmt.Sprintf("── link %s-%s: %s · wire %s→%s %s · %s→%s %s", l.A, l.B, rtt, l.A, l.B, rate(l.BytesA, p[0]), l.B, l.A, rate(l.BytesB, p[1])))
	}
	w.prev, w.at = next, now
	return out
}

func statusTargets(nodes, user, password, dir string) ([]wsrepview.Target, error) {
	type addr struct{ name, hostport, site string }
	var addrs []addr
	if nodes != "" {
		if user == "" {
			user = os.Getenv("GALEON_MONITOR_USER")
		}
		if password == "" {
			password = os.Getenv("GALEON_MONITOR_PASSWORD")
		}
		if user == "" {
			return nil, errors.New("--nodes needs --user (and --password), or GALEON_MONITOR_USER/GALEON_MONITOR_PASSWORD")
		}
		for _, hp := range strings.Split(nodes, ",") {
			hp = strings.TrimSpace(hp)
			if !strings.Contains(hp, ":") {
				hp += ":3306"
			}
			addrs = append(addrs, addr{hp, hp, ""})
		}
	} else {
		sb, err := sandbox.Open(dir, sandbox.Control{})
		if err != nil {
			return nil, fmt.Errorf("%w (or pass --nodes host:port,... --user U --password P for any cluster)", err)
		}
		user, password = sb.Credentials.MonitorUser, sb.Credentials.MonitorPassword
		for _, n := range sb.Nodes {
			addrs = append(addrs, addr{n.Name, n.Addr(), n.Site})
		}
	}
	var targets []wsrepview.Target
	for _, a := range addrs {
		cfg := mysql.NewConfig()
		cfg.User, cfg.Passwd, cfg.Net, cfg.Addr = user, password, "tcp", a.hostport
		cfg.Timeout = time.Second
		db, err := sql.Open("mysql", cfg.FormatDSN())
		if err != nil {
			return nil, err
		}
		db.SetMaxOpenConns(1)
		db.SetMaxIdleConns(1)
		targets = append(targets, wsrepview.Target{Name: a.name, DB: db, Site: a.site})
	}
	return targets, nil
}
