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
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/galeon-db/galeon/internal/discovery"
	"github.com/galeon-db/galeon/internal/galera"
	"github.com/galeon-db/galeon/internal/lifecycle"
	"github.com/galeon-db/galeon/internal/replica"
	"github.com/galeon-db/galeon/internal/transfer"
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
	// DataDir is the node's data directory, for state-transfer progress
	// (default: the directory of Grastate).
	DataDir string
	// Executor, if set, lets the agent tell whether its node's server
	// runs, recover a stopped node's position, and start it when the
	// controller asks (recovery after a full outage).
	Executor Executor
}

// Executor starts and inspects a node's server, for an agent that manages
// its node: *sandbox.Sandbox for a sandbox's nodes, nodeexec.Commands
// (systemd's, or the operator's commands) anywhere else.
type Executor interface {
	Running(node string) bool
	// Position is a stopped node's last committed position.
	Position(ctx context.Context, node string) (galera.Grastate, error)
	BootstrapNode(ctx context.Context, node string) error
	StartNode(ctx context.Context, node string) error
	// PromoteNode makes a running node that lost quorum a Primary
	// component of its own (pc.bootstrap=YES).
	PromoteNode(ctx context.Context, node string) error
	// RestartNode restarts the node cleanly and returns once it runs
	// again; StopNode stops it cleanly.
	RestartNode(ctx context.Context, node string) error
	StopNode(ctx context.Context, node string) error
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

	// With an Executor: a crashed node's position once recovered, and the
	// last action taken up. exec serialises everything that starts
	// mariadbd.
	position *galera.Grastate
	// positions counts recovered positions, so that check never forgets
	// one recovered after it looked at the server: while --wsrep-recover
	// runs, the node looks running, and a check that saw that must not
	// clear the position the recovery then produced (CI saw the
	// controller wait forever for it).
	positions uint64
	action    *discovery.ActionState
	exec      sync.Mutex
	// backupDirs are the backup copies this agent made and has not yet
	// finished or removed: the only ones it finishes or removes.
	backupDirs map[string]bool

	httpAddr net.Addr
	transfer transfer.Observer

	// fence is the agent's side of a promotion's fence (fence.go); kick
	// has the node checked at once.
	fence fenceState
	kick  chan struct{}
	// readOnlyRead: the last check read the node's read_only (only the
	// Run loop's goroutine uses it).
	readOnlyRead bool
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
	if cfg.DataDir == "" && cfg.Grastate != "" {
		cfg.DataDir = filepath.Dir(cfg.Grastate)
	}
	return &Agent{cfg: cfg, store: store, log: log, db: db, transfer: transfer.Observer{DataDir: cfg.DataDir}, backupDirs: map[string]bool{}, kick: make(chan struct{}, 1)}, nil
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
	var (
		reg  *discovery.Registration
		last discovery.NodeFacts
	)
	defer func() {
		if reg != nil {
			// A clean stop is a departure: say so before the
			// registration goes (a lapsed one is not taken as one).
			cctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			if err := reg.Leave(cctx, last); err != nil {
				a.log.Warn("deregister", "node", a.cfg.Node, "err", err)
			}
		}
	}()
	if a.cfg.Executor != nil {
		fctx, stop := context.WithCancel(ctx)
		followed := make(chan struct{})
		go func() { defer close(followed); a.follow(fctx) }()
		defer func() { stop(); <-followed }()
	}
	{
		wctx, stop := context.WithCancel(ctx)
		watched := make(chan struct{})
		go func() { defer close(watched); a.watchFence(wctx) }()
		defer func() { stop(); <-watched }()
	}
	t := time.NewTicker(a.cfg.Interval)
	defer t.Stop()
	for {
		facts := a.check(ctx)
		a.applyFence(ctx, &facts, a.readOnlyRead)
		last = facts
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
		case <-a.kick:
		}
	}
}

// sourceFacts reads what an asynchronous replica of the cluster needs
// from the node: its binary log position, the cluster's GTID domain, and
// whether its settings make it a safe source.
func (a *Agent) sourceFacts(ctx context.Context, f *discovery.NodeFacts) {
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	vals := make([]sql.NullString, len(replica.SourceVariables)+1)
	ptrs := make([]any, len(vals))
	q := "SELECT @@gtid_binlog_pos"
	for i := range vals {
		ptrs[i] = &vals[i]
		if i > 0 {
			q += ", @@" + replica.SourceVariables[i-1]
		}
	}
	if err := a.db.QueryRowContext(ctx, q).Scan(ptrs...); err != nil {
		return
	}
	f.GTIDBinlogPos = vals[0].String
	vars := map[string]string{}
	for i, name := range replica.SourceVariables {
		vars[name] = vals[i+1].String
	}
	if d, err := strconv.ParseUint(vars["wsrep_gtid_domain_id"], 10, 32); err == nil {
		d32 := uint32(d)
		f.GTIDDomain = &d32
	}
	f.SourceProblems = replica.CheckSource(vars)
}

// settings reads the node's pc.weight (nil if it cannot) and read_only;
// it says whether it could.
func (a *Agent) settings(ctx context.Context, f *discovery.NodeFacts) bool {
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	var opts, ro sql.NullString
	if err := a.db.QueryRowContext(ctx, "SELECT @@wsrep_provider_options, @@read_only").Scan(&opts, &ro); err != nil {
		return false
	}
	f.ReadOnly = ro.String == "1" || strings.EqualFold(ro.String, "ON")
	v, ok := galera.ProviderOption(opts.String, "pc.weight")
	if w, err := strconv.Atoi(v); ok && err == nil {
		f.Weight = &w
	}
	return true
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
	a.readOnlyRead = false
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
		if m := v["wsrep_incoming_addresses"]; m != "" {
			f.Members = strings.Split(m, ",")
		}
		f.StateUUID = v["wsrep_cluster_state_uuid"]
		f.LastCommitted, _ = strconv.ParseInt(v["wsrep_last_committed"], 10, 64)
		f.CachedDownto, _ = strconv.ParseInt(v["wsrep_local_cached_downto"], 10, 64)
		f.RecvQueue, _ = strconv.Atoi(v["wsrep_local_recv_queue"])
		f.Synced, why = galera.Clustercheck(v, a.cfg.AllowDonor)
		if seg, err := strconv.Atoi(v["wsrep_gmcast_segment"]); err == nil {
			f.Segment = seg // the node's own, over the --segment given
		}
		if avg, _, samples := wsrepview.ParseReplLatency(v["wsrep_evs_repl_latency"]); samples > 0 {
			f.ReplLatency = avg
		} else {
			// An empty window (the provider restarts it every minute, and
			// nothing was sent since) is no measurement: keep the last.
			a.mu.Lock()
			f.ReplLatency = a.facts.ReplLatency
			a.mu.Unlock()
		}
		a.readOnlyRead = a.settings(ctx, &f)
		a.sourceFacts(ctx, &f)
	}
	a.mu.Lock()
	seen := a.positions
	a.mu.Unlock()
	if x := a.cfg.Executor; x != nil {
		f.Stopped = !f.Up && !x.Running(a.cfg.Node)
	}
	a.transfer.Observe(&f, time.Now())
	a.mu.Lock()
	switch {
	case !f.Stopped:
		if a.positions == seen {
			a.position = nil // running again: a later stop recovers anew
		}
	case f.Grastate.Seqno >= 0 && f.Grastate.UUID != "":
		// A clean stop: grastate.dat holds the position.
		g := f.Grastate
		f.Position = &g
	default:
		// A crash (seqno -1): the position is recovered with
		// --wsrep-recover when the controller asks for it.
		f.Position = a.position
	}
	f.Action = a.action
	a.facts, a.why = f, why
	a.mu.Unlock()
	return f
}

// withDonors adds to ctx the donors the control plane chooses for this
// node's join (never the writer while another node can serve, IST-capable
// nodes first), for the Executor to pass on as wsrep_sst_donor. Without
// an answer Galera chooses, as before.
func (a *Agent) withDonors(ctx context.Context) context.Context {
	a.mu.Lock()
	seqno := a.facts.LastCommitted
	if a.position != nil {
		seqno = a.position.Seqno
	}
	a.mu.Unlock()
	if seqno <= 0 {
		seqno = -1
	}
	donors, err := lifecycle.Donors(ctx, a.store, a.cfg.Node, seqno)
	if err != nil || len(donors) == 0 {
		a.log.Warn("no donor choice from the control plane: Galera chooses", "node", a.cfg.Node, "err", err)
		return ctx
	}
	a.log.Info("state transfer donors for the join", "node", a.cfg.Node, "donors", donors)
	return galera.WithDonors(ctx, donors)
}

// maxActionAge: an action older than this is not carried out (a stale
// bootstrap request must never split a running cluster).
const maxActionAge = 2 * time.Minute

// follow carries out the controller's actions for this node, each ID once.
func (a *Agent) follow(ctx context.Context) {
	done := ""
	for act := range a.store.WatchAction(ctx, a.cfg.Node) {
		if act.ID == "" || act.ID+act.Kind == done {
			continue
		}
		if age := time.Since(act.At); age > maxActionAge {
			// Said, not silent: with clocks more than maxActionAge apart,
			// every action of the controller would be skipped here.
			a.log.Warn("not carrying out a stale action of the controller (older than 2m by this machine's clock: check clock skew if it was just published)",
				"node", a.cfg.Node, "action", act.Kind, "id", act.ID, "published", act.At, "age", age.Round(time.Second))
			done = act.ID + act.Kind
			continue
		}
		done = act.ID + act.Kind
		st := &discovery.ActionState{ID: act.ID, Kind: act.Kind}
		a.mu.Lock()
		a.action = st
		a.mu.Unlock()
		a.log.Info("carrying out the controller's action", "node", a.cfg.Node, "action", act.Kind, "id", act.ID, "reason", act.Reason)
		a.exec.Lock()
		limit := 5 * time.Minute
		if act.Kind == discovery.ActionBackupCopy || act.Kind == discovery.ActionBackupFinish {
			limit = 24 * time.Hour // a copy takes as long as the data needs
		}
		xctx, cancel := context.WithTimeout(ctx, limit)
		var err error
		var result string
		switch act.Kind {
		case discovery.ActionBackupCopy, discovery.ActionBackupFinish:
			result, err = a.backup(xctx, act)
		case discovery.ActionBootstrap:
			err = a.cfg.Executor.BootstrapNode(xctx, a.cfg.Node)
		case discovery.ActionJoin:
			err = a.cfg.Executor.StartNode(a.withDonors(xctx), a.cfg.Node)
		case discovery.ActionPromote:
			err = a.cfg.Executor.PromoteNode(xctx, a.cfg.Node)
		case discovery.ActionRestart:
			err = a.cfg.Executor.RestartNode(a.withDonors(xctx), a.cfg.Node)
		case discovery.ActionStop:
			err = a.cfg.Executor.StopNode(xctx, a.cfg.Node)
		case discovery.ActionPosition:
			var g galera.Grastate
			if g, err = a.cfg.Executor.Position(xctx, a.cfg.Node); err == nil {
				a.mu.Lock()
				a.position = &g
				a.positions++
				a.mu.Unlock()
			}
		}
		cancel()
		a.exec.Unlock()
		res := &discovery.ActionState{ID: act.ID, Kind: act.Kind, Done: true, Result: result}
		if err != nil {
			res.Err = err.Error()
			a.log.Warn("action failed", "node", a.cfg.Node, "action", act.Kind, "err", err)
		}
		a.mu.Lock()
		a.action = res
		a.mu.Unlock()
	}
}

// BackupSourcer is an Executor that can say how mariabackup, run beside
// the node, reaches its server and files (the sandbox, nodeexec).
type BackupSourcer interface {
	// BackupArgs are mariabackup's connection arguments for node and
	// its data directory ("": the server's @@datadir).
	BackupArgs(node string) (args []string, dataDir string, err error)
}

// backup carries out an operator's backup action on this node, its
// progress published with the node's facts.
func (a *Agent) backup(ctx context.Context, act discovery.Action) (string, error) {
	src, ok := a.cfg.Executor.(BackupSourcer)
	if !ok {
		return "", errors.New("this agent cannot run mariabackup for its node (its executor does not say how to reach the server's files): run it with --manage systemd, or the sandbox's agents")
	}
	copier := lifecycle.LocalCopier{Source: func(node string) (lifecycle.BackupSource, error) {
		args, dir, err := src.BackupArgs(node)
		if err == nil && dir == "" {
			qctx, cancel := context.WithTimeout(ctx, 2*time.Second)
			_ = a.db.QueryRowContext(qctx, "SELECT @@datadir").Scan(&dir) // no dir: no percentage, the copy goes on
			cancel()
		}
		return lifecycle.BackupSource{Args: args, DataDir: dir}, err
	}}
	a.mu.Lock()
	ours := a.backupDirs[act.Dir]
	a.mu.Unlock()
	if act.Kind != discovery.ActionBackupCopy && !ours {
		// Only a copy this agent made is prepared or removed.
		return "", fmt.Errorf("%s is not a copy this agent made (or it restarted since): left alone", act.Dir)
	}
	// Stopped when whoever asked gives up (the action is cleared or
	// replaced): a copy nobody waits for must not go on holding the
	// node's locks once it is back in service.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		for cur := range a.store.WatchAction(ctx, a.cfg.Node) {
			if cur.ID != act.ID {
				cancel()
				return
			}
		}
	}()
	res, err := lifecycle.CarryOutBackup(ctx, copier, act, func(msg string) {
		a.mu.Lock()
		a.action = &discovery.ActionState{ID: act.ID, Kind: act.Kind, Detail: msg}
		a.mu.Unlock()
	})
	a.mu.Lock()
	switch {
	case act.Kind == discovery.ActionBackupCopy && err == nil:
		a.backupDirs[act.Dir] = true
	case act.Kind != discovery.ActionBackupCopy:
		delete(a.backupDirs, act.Dir) // renamed, or removed
	}
	a.mu.Unlock()
	return res, err
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
