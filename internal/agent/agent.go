// Package agent is galeon's node agent: one beside each Galera node. It
// checks its node (wsrep status, grastate.dat) every interval, publishes
// the facts in the control-plane store under a lease — so a node whose
// agent dies leaves the cluster's view when the lease expires — and
// deregisters on a clean shutdown. It also answers HAProxy's httpchk like
// Percona's clustercheck (200 when the node may take traffic, 503
// otherwise), so HAProxy users can use galeon's checks too.
//
// The agent reports facts; it decides nothing: proxies and the controller
// turn facts into routing decisions.
package agent

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/galeon-db/galeon/internal/discovery"
	"github.com/galeon-db/galeon/internal/galera"
	"github.com/galeon-db/galeon/internal/wsrepview"
)

// Config describes the node an agent watches.
type Config struct {
	Node    string // the node's name in the cluster (its key)
	Address string // host:port of mariadbd, as proxies will reach it
	// User and Password log into the node to read its status (the
	// monitor account: it needs no privilege on MariaDB).
	User, Password string
	// Grastate is the path of the node's grastate.dat.
	Grastate string
	Segment  int
	Site     string
	// HTTPListen serves the clustercheck endpoint ("" for none).
	HTTPListen string
	AllowDonor bool
	Interval   time.Duration // default 500ms
	TTL        time.Duration // lease TTL, default 2s
}

// Agent watches one node.
type Agent struct {
	cfg   Config
	store *discovery.Store
	log   *slog.Logger
	db    *sql.DB

	mu    sync.Mutex
	facts discovery.NodeFacts
	why   string

	httpAddr net.Addr
}

// New prepares an agent; Run starts it.
func New(cfg Config, store *discovery.Store, log *slog.Logger) (*Agent, error) {
	if err := discovery.ValidName("node", cfg.Node); err != nil {
		return nil, err
	}
	if _, _, err := net.SplitHostPort(cfg.Address); err != nil {
		return nil, fmt.Errorf("agent address %q: %v", cfg.Address, err)
	}
	if cfg.Interval <= 0 {
		cfg.Interval = 500 * time.Millisecond
	}
	if cfg.TTL <= 0 {
		cfg.TTL = 2 * time.Second
	}
	mc := mysql.NewConfig()
	mc.User, mc.Passwd, mc.Net, mc.Addr = cfg.User, cfg.Password, "tcp", cfg.Address
	mc.Timeout, mc.ReadTimeout, mc.WriteTimeout = time.Second, time.Second, time.Second
	db, err := sql.Open("mysql", mc.FormatDSN())
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	db.SetMaxIdleConns(1)
	return &Agent{cfg: cfg, store: store, log: log, db: db}, nil
}

// Run checks and publishes until ctx ends, then deregisters the node.
func (a *Agent) Run(ctx context.Context) error {
	defer a.db.Close()
	if a.cfg.HTTPListen != "" {
		ln, err := net.Listen("tcp", a.cfg.HTTPListen)
		if err != nil {
			return fmt.Errorf("agent http_listen %s: %w", a.cfg.HTTPListen, err)
		}
		a.httpAddr = ln.Addr()
		srv := &http.Server{Handler: a, ReadHeaderTimeout: 5 * time.Second}
		go func() { _ = srv.Serve(ln) }()
		defer srv.Close()
	}
	var reg *discovery.Registration
	defer func() {
		if reg != nil {
			cctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			if err := reg.Close(cctx); err != nil {
				a.log.Warn("deregister", "node", a.cfg.Node, "err", err)
			}
		}
	}()
	t := time.NewTicker(a.cfg.Interval)
	defer t.Stop()
	for {
		facts := a.check(ctx)
		pctx, cancel := context.WithTimeout(ctx, a.cfg.Interval+time.Second)
		var err error
		if reg == nil {
			reg, err = a.store.Register(pctx, facts, a.cfg.TTL)
		} else {
			err = reg.Update(pctx, facts)
		}
		cancel()
		if err != nil && ctx.Err() == nil {
			a.log.Warn("publish node facts", "node", a.cfg.Node, "err", err)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// check reads the node's state now.
func (a *Agent) check(ctx context.Context) discovery.NodeFacts {
	f := discovery.NodeFacts{Name: a.cfg.Node, Address: a.cfg.Address, Segment: a.cfg.Segment, Site: a.cfg.Site}
	if a.httpAddr != nil {
		f.Agent = a.httpAddr.String()
	}
	if a.cfg.Grastate != "" {
		f.Grastate, _ = galera.ReadGrastate(a.cfg.Grastate)
	}
	cctx, cancel := context.WithTimeout(ctx, time.Second)
	s := wsrepview.Fetch(cctx, a.cfg.Node, a.db)
	cancel()
	var why string
	if s.Err != nil {
		f.Error, why = s.Err.Error(), "unreachable: "+s.Err.Error()
	} else {
		v := s.Vars
		f.Up = true
		f.LocalState, _ = strconv.Atoi(v["wsrep_local_state"])
		f.LocalStateComment = v["wsrep_local_state_comment"]
		f.ClusterStatus = v["wsrep_cluster_status"]
		f.Ready = v["wsrep_ready"] == "ON"
		f.ClusterSize, _ = strconv.Atoi(v["wsrep_cluster_size"])
		f.StateUUID = v["wsrep_cluster_state_uuid"]
		f.LastCommitted, _ = strconv.ParseInt(v["wsrep_last_committed"], 10, 64)
		f.Synced, why = galera.Clustercheck(v, a.cfg.AllowDonor)
	}
	a.mu.Lock()
	a.facts, a.why = f, why
	a.mu.Unlock()
	return f
}

// ServeHTTP is the clustercheck endpoint: 200 when the node may take
// traffic, 503 otherwise, with a one-line reason, as HAProxy's httpchk
// expects. It answers from the latest check (every Interval), so a flood
// of health checks costs the node nothing.
func (a *Agent) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	a.mu.Lock()
	ok, why := a.facts.Synced, a.why
	a.mu.Unlock()
	w.Header().Set("Content-Type", "text/plain")
	w.Header().Set("Connection", "close")
	if ok {
		w.WriteHeader(http.StatusOK)
		fmt.Fprintf(w, "Galera node %s is synced (%s).\r\n", a.cfg.Node, why)
		return
	}
	w.WriteHeader(http.StatusServiceUnavailable)
	fmt.Fprintf(w, "Galera node %s is not synced: %s.\r\n", a.cfg.Node, why)
}
