package agent

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"hash/crc32"
	"log/slog"
	"net"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/galeon-db/galeon/internal/archive"
	"github.com/galeon-db/galeon/internal/discovery"
	"github.com/galeon-db/galeon/internal/follow"
	"github.com/galeon-db/galeon/internal/lifecycle"
	"github.com/galeon-db/galeon/internal/replica"
)

// ReplicaConfig configures the agent beside an asynchronous replica of
// the cluster.
type ReplicaConfig struct {
	// Name is the replica's name in the control plane; Address where
	// clients reach it (host:port).
	Name, Address string
	// User and Password log into the replica: an account that may run
	// CHANGE MASTER, START and STOP SLAVE (REPLICATION SLAVE ADMIN).
	User, Password string
	// SourceUser and SourcePassword are what the replica logs into the
	// cluster's nodes with (REPLICATION SLAVE), given to CHANGE MASTER;
	// empty keeps what the replica has (it was set up by hand).
	SourceUser, SourcePassword string
	// Pinned names the node to replicate from instead of the writer.
	Pinned string
	// Interval between checks (default 500ms); TTL of the registration
	// (default 10s).
	Interval, TTL time.Duration
	// ArchiveDir, when set, is kept a live copy of the replica's binary
	// log: the cluster's transactions as one GTID stream without gaps,
	// for point-in-time recovery (package archive). User must then have
	// REPLICATION SLAVE and BINLOG MONITOR on the replica.
	// ArchiveServerID is the server id the archiver reads with.
	ArchiveDir      string
	ArchiveServerID uint32
	// Members makes the replica a DR cluster: a Galera cluster whose
	// nodes (host:port) these are. One of them replicates at a time
	// (replica.ChooseMember), the others get the transactions through
	// Galera; Address is ignored. They are read-only for clients until
	// the promotion, which makes every one of them writable and then
	// calls OnPromoted (a sandbox records it).
	Members    []string
	OnPromoted func() error
}

// ReplicaAgent keeps an asynchronous replica replicating from the
// cluster's writer: on every writer change the controller publishes, it
// moves the replica there (replica.Step decides when), and it publishes
// the replica's state for status, proxies and alerts.
type ReplicaAgent struct {
	cfg   ReplicaConfig
	store *discovery.Store
	log   *slog.Logger
	db    *sql.DB

	facts   discovery.ReplicaFacts
	archive *archive.Streamer

	// A DR cluster's connections, one per member, and the member that
	// replicates (db is its connection).
	dbs    map[string]*sql.DB
	acting string
	// recorded: OnPromoted succeeded.
	recorded bool
}

// NewReplica returns a replica agent; Run starts it.
func NewReplica(cfg ReplicaConfig, store *discovery.Store, log *slog.Logger) (*ReplicaAgent, error) {
	if err := discovery.ValidName("replica", cfg.Name); err != nil {
		return nil, err
	}
	if cfg.Interval <= 0 {
		cfg.Interval = 500 * time.Millisecond
	}
	if cfg.TTL <= 0 {
		cfg.TTL = 10 * time.Second
	}
	r := &ReplicaAgent{cfg: cfg, store: store, log: log,
		facts: discovery.ReplicaFacts{Name: cfg.Name, Address: cfg.Address, Pinned: cfg.Pinned}}
	if len(cfg.Members) > 0 {
		if cfg.ArchiveDir != "" {
			return nil, errors.New("a DR cluster keeps no binary log archive: archive from a single replica")
		}
		r.dbs = map[string]*sql.DB{}
		for _, m := range cfg.Members {
			if _, _, err := net.SplitHostPort(m); err != nil {
				r.closeAll()
				return nil, fmt.Errorf("DR cluster %s: member %q is not host:port", cfg.Name, m)
			}
			db, err := r.open(m)
			if err != nil {
				r.closeAll()
				return nil, err
			}
			r.dbs[m] = db
		}
		r.facts.Address, r.facts.Members = "", slices.Clone(cfg.Members)
		return r, nil
	}
	if _, _, err := net.SplitHostPort(cfg.Address); err != nil {
		return nil, fmt.Errorf("replica %s: address %q is not host:port", cfg.Name, cfg.Address)
	}
	db, err := r.open(cfg.Address)
	if err != nil {
		return nil, err
	}
	r.db = db
	if cfg.ArchiveDir != "" {
		if !filepath.IsAbs(cfg.ArchiveDir) {
			return nil, fmt.Errorf("archive directory %q: give an absolute path", cfg.ArchiveDir)
		}
		if cfg.ArchiveServerID == 0 {
			// Unique per replica name, away from the servers' own ids.
			cfg.ArchiveServerID = 3_000_000_000 + crc32.ChecksumIEEE([]byte(cfg.Name))%1_000_000
		}
		r.archive = &archive.Streamer{Address: cfg.Address, User: cfg.User, Password: cfg.Password,
			Dir: cfg.ArchiveDir, ServerID: cfg.ArchiveServerID,
			Log: func(msg string) { log.Info(msg, "replica", cfg.Name) }}
	}
	return r, nil
}

// open is a pool of connections to a replica server.
func (r *ReplicaAgent) open(addr string) (*sql.DB, error) {
	db, err := sql.Open("mysql", fmt.Sprintf("%s:%s@tcp(%s)/?timeout=2s&readTimeout=10s&writeTimeout=10s", r.cfg.User, r.cfg.Password, addr))
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(2)
	return db, nil
}

// closeAll closes the connections to the replica's servers.
func (r *ReplicaAgent) closeAll() {
	if r.db != nil && r.dbs == nil {
		r.db.Close()
	}
	for _, db := range r.dbs {
		db.Close()
	}
}

// archiveFacts is the archive's state as published.
func archiveFacts(st archive.Status) *discovery.ArchiveFacts {
	return &discovery.ArchiveFacts{Dir: st.Dir, Files: st.Files, Bytes: st.Bytes, BehindBytes: st.BehindBytes,
		LagSeconds: int64(st.Lag.Round(time.Second) / time.Second), Streaming: st.Streaming, Error: st.Error}
}

// Run checks and acts every Interval, and at once on every writer
// decision, until ctx ends; then it removes its registration.
func (r *ReplicaAgent) Run(ctx context.Context) error {
	defer r.closeAll()
	if r.archive != nil {
		actx, stop := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() {
			defer close(done)
			if err := r.archive.Run(actx, r.cfg.Interval); err != nil {
				r.log.Error("binary log archive stopped", "replica", r.cfg.Name, "dir", r.cfg.ArchiveDir, "err", err)
			}
		}()
		defer func() { stop(); <-done }()
	}
	kick := make(chan struct{}, 1)
	go func() {
		for range r.store.WatchWriter(ctx) {
			select {
			case kick <- struct{}{}:
			default:
			}
		}
	}()
	var reg *discovery.ReplicaRegistration
	defer func() {
		if reg != nil {
			cctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			_ = reg.Close(cctx)
			cancel()
		}
	}()
	t := time.NewTicker(r.cfg.Interval)
	defer t.Stop()
	for {
		r.tick(ctx)
		if r.archive != nil {
			r.facts.Archive = archiveFacts(r.archive.Status())
		}
		pctx, cancel := context.WithTimeout(ctx, r.cfg.Interval+time.Second)
		var err error
		if reg == nil {
			reg, err = r.store.RegisterReplica(pctx, r.facts, r.cfg.TTL)
		} else {
			err = reg.Update(pctx, r.facts)
		}
		cancel()
		if err != nil && ctx.Err() == nil {
			r.log.Warn("publish replica facts", "replica", r.cfg.Name, "err", err)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		case <-kick:
		}
	}
}

// status is what SHOW SLAVE STATUS and gtid_slave_pos say.
type status struct {
	source                string
	ioRunning, sqlRunning bool
	ioError, sqlError     string
	behind                *int64
	slavePos              string
}

func readStatus(ctx context.Context, db *sql.DB) (status, error) {
	var st status
	if err := db.QueryRowContext(ctx, "SELECT @@gtid_slave_pos").Scan(&st.slavePos); err != nil {
		return st, err
	}
	rows, err := db.QueryContext(ctx, "SHOW SLAVE STATUS")
	if err != nil {
		return st, err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return st, err
	}
	if !rows.Next() {
		return st, rows.Err() // no replication set up
	}
	vals := make([]sql.NullString, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	if err := rows.Scan(ptrs...); err != nil {
		return st, err
	}
	v := map[string]string{}
	for i, c := range cols {
		v[c] = vals[i].String
		if c == "Seconds_Behind_Master" && vals[i].Valid {
			if n, err := strconv.ParseInt(vals[i].String, 10, 64); err == nil {
				st.behind = &n
			}
		}
	}
	if v["Master_Host"] != "" {
		st.source = net.JoinHostPort(v["Master_Host"], v["Master_Port"])
	}
	st.ioRunning, st.sqlRunning = v["Slave_IO_Running"] == "Yes", v["Slave_SQL_Running"] == "Yes"
	st.ioError, st.sqlError = v["Last_IO_Error"], v["Last_SQL_Error"]
	return st, nil
}

// tick reads the writer, the nodes and the replica, decides and acts.
func (r *ReplicaAgent) tick(ctx context.Context) { r.step(ctx, true) }

// step is one tick; after stopping the replica it decides once more at
// once when again is set.
func (r *ReplicaAgent) step(ctx context.Context, again bool) {
	f := &r.facts
	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	var moved bool
	var prevSource string
	if r.dbs != nil {
		var ok bool
		if ok, moved, prevSource = r.pickMember(cctx); !ok {
			return
		}
	}
	st, err := readStatus(cctx, r.db)
	if err != nil {
		f.Up, f.Error, f.State, f.Why = false, err.Error(), "unreachable", "the agent cannot read the replica's status: "+err.Error()
		return
	}
	f.Up, f.Error = true, ""
	pr, err := r.store.ReadPromotion(cctx)
	if err != nil {
		f.State, f.Why = "unknown", "the control plane is unreachable: "+err.Error()
		return
	}
	if pr != nil {
		if moved && pr.Replica == r.cfg.Name && st.source == "" && prevSource != "" {
			// A DR cluster's replicating node changed while its
			// promotion catches up: the new one goes on from the same
			// source (the writer is fenced, so no other is published).
			if err := r.repoint(cctx, prevSource, pr.Domain); err != nil {
				f.State, f.Why = "failed", "moving replication to "+r.acting+" during the promotion: "+err.Error()
				return
			}
			if st, err = readStatus(cctx, r.db); err != nil {
				f.Up, f.Error = false, err.Error()
				return
			}
		}
		r.promotion(cctx, pr, st)
		return
	}
	if st.source == "" {
		// A replica with no source that takes writes was promoted (or
		// made a primary by hand): it is never made a replica again
		// behind its clients' back, fence lifted or not.
		var readOnly bool
		if err := r.db.QueryRowContext(cctx, "SELECT @@read_only").Scan(&readOnly); err == nil && !readOnly {
			f.SlavePos, f.IORunning, f.SQLRunning, f.Source, f.SourceNode, f.Promoted = st.slavePos, false, false, "", "", true
			f.State, f.Why = replica.Promoted.String(), "writable with no source: a primary of its own, left alone (to make it a replica again, reseed it from a backup and set read_only = ON)"
			return
		}
	}
	u, err := r.store.ReadDecision(cctx)
	if err != nil {
		f.State, f.Why = "unknown", "the control plane is unreachable: "+err.Error()
		return
	}
	nodes, err := r.store.Nodes(cctx)
	if err != nil {
		f.State, f.Why = "unknown", "the control plane is unreachable: "+err.Error()
		return
	}
	in := replica.Input{Source: st.source, IORunning: st.ioRunning, SQLRunning: st.sqlRunning,
		IOError: st.ioError, SQLError: st.sqlError}
	if r.dbs != nil && replica.ClusterApplyError(st.sqlError) {
		// A DR node that left its Primary component for a moment stops
		// applying with a wsrep error: nothing is wrong with the data,
		// and it is Synced again (pickMember chose it), so it goes on.
		in.SQLError = ""
	}
	in.SlavePos, _ = replica.ParsePosition(st.slavePos)
	target := u.Decision.Writer
	if r.cfg.Pinned != "" {
		target = r.cfg.Pinned
	}
	byAddr := map[string]string{}
	domain := clusterDomain(nodes)
	domains := map[string]map[string]string{}
	for _, n := range nodes {
		byAddr[n.Address] = n.Name
		if n.GTIDDomain != nil {
			domains[n.Name] = map[string]string{"wsrep_gtid_domain_id": strconv.FormatUint(uint64(*n.GTIDDomain), 10)}
		}
		if n.Name != target {
			continue
		}
		in.Target, in.TargetNode, in.TargetProblems = n.Address, n.Name, n.SourceProblems
		if p, err := replica.ParsePosition(n.GTIDBinlogPos); err == nil && n.GTIDDomain != nil {
			in.TargetPos, in.TargetKnown, in.Domain = p, true, *n.GTIDDomain
		}
	}
	in.TargetProblems = append(in.TargetProblems, replica.CheckCluster(domains)...)
	if domain != nil {
		in.Domain = *domain
	}
	if target != "" && in.Target == "" {
		in.Missing = target
	}
	if in.Target != "" && in.Target != st.source && domain != nil && (!in.TargetKnown || !in.TargetPos.Covers(in.SlavePos, *domain)) {
		// A move waits for the new writer to have logged what the
		// replica applied: ask the writer itself rather than wait for
		// its agent's next report.
		if p, ok := r.sourcePosition(cctx, in.Target); ok {
			in.TargetPos, in.TargetKnown, in.Domain = p, true, *domain
		}
	}
	d := replica.Step(in)
	f.Source, f.SourceNode = st.source, byAddr[st.source]
	f.IORunning, f.SQLRunning, f.IOError, f.SQLError = st.ioRunning, st.sqlRunning, st.ioError, st.sqlError
	f.SlavePos, f.BehindSeconds = st.slavePos, st.behind
	f.Behind = 0
	if in.TargetKnown {
		f.Behind = int64(in.TargetPos.Seqno(in.Domain)) - int64(in.SlavePos.Seqno(in.Domain))
	}
	prev := f.State + f.Why
	f.State, f.Why = d.Action.String(), d.Why
	if prev != f.State+f.Why && d.Action != replica.Keep {
		r.log.Info("replica", "replica", r.cfg.Name, "decision", d.Action.String(), "why", d.Why)
	}
	switch d.Action {
	case replica.Repoint:
		if domain == nil {
			f.State, f.Why = "wait", "the cluster's GTID domain is not published yet (the nodes' agents report wsrep_gtid_domain_id)"
			return
		}
		if err := r.repoint(cctx, d.To, *domain); err != nil {
			f.State, f.Why = "failed", "moving to "+in.TargetNode+": "+err.Error()
			r.log.Warn("replica: repoint failed", "replica", r.cfg.Name, "to", in.TargetNode, "err", err)
			return
		}
		// How long the move took from the writer decision it follows:
		// only for a move from another source after a decision newer
		// than the last move (a first setup, or a move that waited for
		// an unsafe source, is not a re-point after a writer change).
		f.RepointTook = 0
		if st.source != "" && u.Decision.At.After(f.LastRepoint) {
			f.RepointTook = time.Since(u.Decision.At)
		}
		f.Repoints++
		f.LastRepoint = time.Now().UTC()
		f.Source, f.SourceNode = d.To, in.TargetNode
		r.log.Info("replica moved", "replica", r.cfg.Name, "to", in.TargetNode, "since_decision", f.RepointTook.Round(time.Millisecond))
	case replica.Start:
		if _, err := r.db.ExecContext(cctx, "START SLAVE"); err != nil {
			f.State, f.Why = "failed", "START SLAVE: "+err.Error()
		}
	case replica.Stop:
		// STOP SLAVE waits for the event group being applied (a long
		// ALTER, a big transaction): given its own time, once, rather
		// than sent again on every tick.
		sctx, scancel := context.WithTimeout(ctx, 10*time.Minute)
		_, err := r.db.ExecContext(sctx, "STOP SLAVE")
		scancel()
		if err != nil {
			f.State, f.Why = "failed", "STOP SLAVE: "+err.Error()
			return
		}
		// Decided again at once: the new writer has usually logged the
		// position it stopped at already.
		if again {
			r.step(ctx, false)
		}
	}
}

// repoint moves the replica to to (host:port) by GTID, replicating only
// the cluster's domain.
func (r *ReplicaAgent) repoint(ctx context.Context, to string, domain uint32) error {
	host, port, err := net.SplitHostPort(to)
	if err != nil {
		return err
	}
	if _, err := strconv.Atoi(port); err != nil {
		return fmt.Errorf("port of %s: %w", to, err)
	}
	if _, err := r.db.ExecContext(ctx, "STOP SLAVE"); err != nil {
		return fmt.Errorf("STOP SLAVE: %w", err)
	}
	q := fmt.Sprintf("CHANGE MASTER TO MASTER_HOST = %s, MASTER_PORT = %s, MASTER_USE_GTID = slave_pos, DO_DOMAIN_IDS = (%d), MASTER_CONNECT_RETRY = 1",
		quoteString(host), port, domain)
	if r.cfg.SourceUser != "" {
		q += ", MASTER_USER = " + quoteString(r.cfg.SourceUser) + ", MASTER_PASSWORD = " + quoteString(r.cfg.SourcePassword)
	}
	if _, err := r.db.ExecContext(ctx, q); err != nil {
		msg := err.Error()
		if r.cfg.SourcePassword != "" {
			msg = strings.ReplaceAll(msg, r.cfg.SourcePassword, "…")
		}
		return errors.New("CHANGE MASTER: " + msg)
	}
	if _, err := r.db.ExecContext(ctx, "START SLAVE"); err != nil {
		return fmt.Errorf("START SLAVE: %w", err)
	}
	return nil
}

// quoteString is a SQL string literal (MariaDB's escapes).
func quoteString(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
}

// promotion carries out replica.PromoteStep while a promotion is recorded:
// the promoted replica stops replicating, forgets its source and takes
// writes (once it has what the cluster last published, or the catch-up
// time is over); the others stay as they are.
func (r *ReplicaAgent) promotion(ctx context.Context, pr *discovery.Promotion, st status) {
	f := &r.facts
	var readOnly bool
	if err := r.db.QueryRowContext(ctx, "SELECT @@read_only").Scan(&readOnly); err != nil {
		f.State, f.Why = "unknown", "reading @@read_only: "+err.Error()
		return
	}
	in := replica.PromoteInput{Me: r.cfg.Name, Promoted: pr.Replica, Domain: pr.Domain, Planned: pr.Planned,
		Replicating: st.ioRunning && st.sqlRunning, CatchUpUntil: pr.CatchUpUntil, Writable: !readOnly && st.source == "", Now: time.Now()}
	in.SlavePos, _ = replica.ParsePosition(st.slavePos)
	if pr.Replica == r.cfg.Name {
		// The fence first, then the cluster's position: a commit made
		// before every proxy applied the fence is then counted.
		if u, err := r.store.ReadDecision(ctx); err == nil && u.Present && u.Decision.Writer == "" && !u.Decision.Fencing {
			if ps, err := r.store.Proxies(ctx); err == nil {
				in.FenceHeld = !slices.ContainsFunc(ps, func(p discovery.ProxyFacts) bool { return p.Applied < u.Decision.Epoch })
			}
		}
		in.ClusterPos = r.clusterPosition(ctx, pr, st.source)
		// What the replica has applied, read after the cluster's
		// position: the comparison can only err towards waiting.
		if again, err := readStatus(ctx, r.db); err == nil {
			in.SlavePos, _ = replica.ParsePosition(again.slavePos)
		}
	}
	d := replica.PromoteStep(in)
	if d.Action == replica.Promoted {
		f.Promoted = true
		if r.dbs != nil {
			// A DR cluster's node that did not answer at the promotion
			// (or restarted with read_only = ON) is made writable now,
			// and a promotion not yet recorded is recorded.
			if err := r.drPromoted(ctx); err != nil {
				r.log.Warn("promoted DR cluster", "replica", r.cfg.Name, "err", err)
			}
		}
	}
	f.SlavePos, f.IORunning, f.SQLRunning, f.IOError, f.SQLError = st.slavePos, st.ioRunning, st.sqlRunning, st.ioError, st.sqlError
	prev := f.State + f.Why
	f.State, f.Why = d.Action.String(), d.Why
	if prev != f.State+f.Why {
		r.log.Info("replica promotion", "replica", r.cfg.Name, "decision", f.State, "why", d.Why)
	}
	if d.Action != replica.Promote {
		return
	}
	// STOP SLAVE waits for the event group being applied; then the
	// replica forgets its source, so that nothing restarts it, and takes
	// writes.
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Minute)
	defer cancel()
	for _, q := range []string{"STOP SLAVE", "RESET SLAVE ALL", "SET GLOBAL read_only = OFF"} {
		if _, err := r.db.ExecContext(sctx, q); err != nil {
			f.State, f.Why = "failed", "promoting: "+q+": "+err.Error()
			r.log.Warn("replica: promotion failed", "replica", r.cfg.Name, "statement", q, "err", err)
			return
		}
	}
	if r.dbs != nil {
		// A DR cluster: every node takes writes (its proxies then name
		// a writer); one that does not answer now is made writable at
		// a later tick (promoted: every node is checked).
		if err := r.drPromoted(sctx); err != nil {
			f.State, f.Why = "failed", "promoting: "+err.Error()
			return
		}
	}
	f.Promoted, f.Lost = true, int64(d.Lost)
	f.Source, f.SourceNode, f.IORunning, f.SQLRunning = "", "", false, false
	f.State = replica.Promoted.String()
	r.log.Warn("replica promoted to a primary of its own", "replica", r.cfg.Name, "gtid_slave_pos", st.slavePos, "lost", d.Lost, "why", d.Why)
}

// clusterPosition is the furthest the cluster is known to have logged in
// its domain: what was recorded with the promotion, what the nodes'
// agents publish now (a cluster that still runs takes writes until every
// proxy applied the fence), and the source's own word, if it answers.
func (r *ReplicaAgent) clusterPosition(ctx context.Context, pr *discovery.Promotion, source string) replica.Position {
	best, _ := replica.ParsePosition(pr.ClusterPos)
	take := func(p replica.Position) {
		if p.Seqno(pr.Domain) > best.Seqno(pr.Domain) {
			best = replica.Position{pr.Domain: p[pr.Domain]}
		}
	}
	if nodes, err := r.store.Nodes(ctx); err == nil {
		if pos, _, err := lifecycle.ClusterPosition(nodes); err == nil {
			p, _ := replica.ParsePosition(pos)
			take(p)
		}
	}
	if p, ok := r.sourcePosition(ctx, source); ok {
		take(p)
	}
	return best
}

// sourcePosition reads a node's gtid_binlog_pos itself, as the account
// the replica reads the nodes with (no privilege needed): false when
// there is none, or the node does not answer within a second or two.
func (r *ReplicaAgent) sourcePosition(ctx context.Context, addr string) (replica.Position, bool) {
	if addr == "" || r.cfg.SourceUser == "" {
		return nil, false
	}
	mc := mysql.NewConfig()
	mc.User, mc.Passwd, mc.Net, mc.Addr = r.cfg.SourceUser, r.cfg.SourcePassword, "tcp", addr
	mc.Timeout, mc.ReadTimeout = time.Second, 2*time.Second
	c, err := mysql.NewConnector(mc)
	if err != nil {
		return nil, false
	}
	db := sql.OpenDB(c)
	defer db.Close()
	var s string
	if err := db.QueryRowContext(ctx, "SELECT @@gtid_binlog_pos").Scan(&s); err != nil {
		return nil, false
	}
	p, err := replica.ParsePosition(s)
	return p, err == nil
}

// member reads one DR cluster node's state for replica.ChooseMember, and
// its replication status.
func (r *ReplicaAgent) member(ctx context.Context, addr string) (replica.Member, status) {
	m := replica.Member{Addr: addr}
	db := r.dbs[addr]
	// Each node its own time: a slow one must not make the next look
	// unreachable.
	mctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	var state, cluster, incoming string
	err := db.QueryRowContext(mctx, `SELECT
		(SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME = 'WSREP_LOCAL_STATE_COMMENT'),
		(SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME = 'WSREP_CLUSTER_STATUS'),
		(SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME = 'WSREP_INCOMING_ADDRESSES')`).Scan(&state, &cluster, &incoming)
	if err != nil {
		m.Why = err.Error()
		return m, status{}
	}
	st, err := readStatus(mctx, db)
	if err != nil {
		m.Why = err.Error()
		return m, status{}
	}
	m.Reachable, m.HasSource, m.Running = true, st.source != "", st.ioRunning || st.sqlRunning
	switch {
	case cluster != "Primary":
		m.Why = "not in its cluster's Primary component (" + cluster + ")"
	case state != "Synced":
		m.Why = state
	default:
		m.Fit = true
		m.Component = strings.Split(incoming, ",")
	}
	return m, st
}

// pickMember chooses the DR cluster node that replicates
// (replica.ChooseMember) and makes it the agent's replica: replication
// stopped and forgotten on every other node it reaches, and, on a newly
// chosen node, gtid_slave_pos moved up to all the DR cluster holds of the
// cluster's domain. ok is false when no node can replicate now (the
// facts say why); moved says the node changed, prevSource is where the
// previous one replicated from.
func (r *ReplicaAgent) pickMember(ctx context.Context) (ok, moved bool, prevSource string) {
	f := &r.facts
	ms := make([]replica.Member, 0, len(r.cfg.Members))
	sts := map[string]status{}
	for _, addr := range r.cfg.Members {
		m, st := r.member(ctx, addr)
		ms = append(ms, m)
		sts[addr] = st
	}
	choice, why := replica.ChooseMember(ms, r.acting)
	if choice == "" {
		// Address stays the node that replicated last: no other does.
		f.Up, f.Error, f.State, f.Why = false, why, "unreachable", why
		return false, false, ""
	}
	var stopped []replica.Position // where the nodes stopped here had applied to
	for _, m := range ms {
		if m.Addr == choice || !m.Reachable || !m.HasSource {
			continue
		}
		// Never two appliers: Galera already carries the chosen node's
		// transactions to this one (checked at every tick: a node that
		// replicated before may come back).
		db := r.dbs[m.Addr]
		if _, err := db.ExecContext(ctx, "STOP SLAVE"); err != nil && m.Fit {
			f.Up, f.Error, f.State, f.Why = false, err.Error(), "failed", fmt.Sprintf("stopping replication on %s before it moves to %s: %v", m.Addr, choice, err)
			return false, false, ""
		} else if err != nil {
			// Out of its Primary component it applies nothing; it is
			// reset once it is back.
			continue
		}
		if st, err := readStatus(ctx, db); err == nil {
			if p, err := replica.ParsePosition(st.slavePos); err == nil {
				stopped = append(stopped, p)
			}
		}
		if _, err := db.ExecContext(ctx, "RESET SLAVE ALL"); err != nil {
			f.Up, f.Error, f.State, f.Why = false, err.Error(), "failed", fmt.Sprintf("forgetting replication on %s: %v", m.Addr, err)
			return false, false, ""
		}
	}
	if choice == r.acting {
		return true, false, ""
	}
	st := sts[choice]
	if !st.ioRunning && !st.sqlRunning {
		if err := r.catchUpSlavePos(ctx, r.dbs[choice], stopped); err != nil {
			f.Up, f.Error, f.State, f.Why = false, err.Error(), "failed", "setting gtid_slave_pos on "+choice+": "+err.Error()
			return false, false, ""
		}
	}
	r.log.Info("DR cluster: replicating through a new node", "replica", r.cfg.Name, "node", choice, "was", follow.OrNone(r.acting), "why", why)
	prevSource = f.Source
	r.acting, r.db, f.Address = choice, r.dbs[choice], choice
	return true, true, prevSource
}

// catchUpSlavePos moves a DR cluster node's gtid_slave_pos, in the
// cluster's domain, up to the furthest of: its own gtid_slave_pos, its
// gtid_binlog_pos and the mysql.gtid_slave_pos table (what Galera brought
// it of another node's applying), read after a causal wait (so that it
// has applied everything the DR cluster committed before), and where the
// nodes just stopped had applied to. It never lowers it.
func (r *ReplicaAgent) catchUpSlavePos(ctx context.Context, db *sql.DB, stopped []replica.Position) error {
	nodes, err := r.store.Nodes(ctx)
	if err != nil {
		return err
	}
	domain := clusterDomain(nodes)
	if domain == nil {
		return errors.New("the cluster's GTID domain is not published yet (the nodes' agents report wsrep_gtid_domain_id)")
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	// wsrep_sync_wait = 1: the next SELECT waits until this node has
	// applied every write-set the DR cluster ordered before it.
	if _, err := conn.ExecContext(ctx, "SET SESSION wsrep_sync_wait = 1"); err != nil {
		return err
	}
	var binlog, slave string
	if err := conn.QueryRowContext(ctx, "SELECT @@gtid_binlog_pos, @@gtid_slave_pos").Scan(&binlog, &slave); err != nil {
		return err
	}
	if _, err := conn.ExecContext(ctx, "SET SESSION wsrep_sync_wait = 0"); err != nil {
		return err
	}
	sp, err := replica.ParsePosition(slave)
	if err != nil {
		return err
	}
	best := sp[*domain]
	take := func(p replica.Position) {
		if g, ok := p[*domain]; ok && g.Seqno > best.Seqno {
			best = g
		}
	}
	bp, err := replica.ParsePosition(binlog)
	if err != nil {
		return err
	}
	take(bp)
	var server uint32
	var seq uint64
	if err := conn.QueryRowContext(ctx, "SELECT server_id, seq_no FROM mysql.gtid_slave_pos WHERE domain_id = ? ORDER BY seq_no DESC LIMIT 1", *domain).Scan(&server, &seq); err == nil {
		take(replica.Position{*domain: {Domain: *domain, Server: server, Seqno: seq}})
	} else if !errors.Is(err, sql.ErrNoRows) {
		return err
	}
	for _, p := range stopped {
		take(p)
	}
	if best.Seqno == sp[*domain].Seqno {
		return nil
	}
	sp[*domain] = best
	_, err = conn.ExecContext(ctx, "SET GLOBAL gtid_slave_pos = "+quoteString(sp.String()))
	return err
}

// drPromoted makes every node of a promoted DR cluster that is still
// read-only writable (one that does not answer now is at a later tick),
// then records the promotion (OnPromoted) unless it is recorded.
func (r *ReplicaAgent) drPromoted(ctx context.Context) error {
	for _, addr := range r.cfg.Members {
		var ro bool
		if err := r.dbs[addr].QueryRowContext(ctx, "SELECT @@read_only").Scan(&ro); err != nil || !ro {
			continue
		}
		if _, err := r.dbs[addr].ExecContext(ctx, "SET GLOBAL read_only = OFF"); err != nil {
			r.log.Warn("promoted DR cluster: a node is still read-only", "replica", r.cfg.Name, "node", addr, "err", err)
		} else {
			r.log.Info("promoted DR cluster: node made writable", "replica", r.cfg.Name, "node", addr)
		}
	}
	if r.cfg.OnPromoted == nil || r.recorded {
		return nil
	}
	if err := r.cfg.OnPromoted(); err != nil {
		return fmt.Errorf("recording the promotion: %w", err)
	}
	r.recorded = true
	return nil
}

// clusterDomain is the cluster's GTID domain as the first node's agent
// that reports one published it (nil: none yet).
func clusterDomain(nodes []discovery.NodeFacts) *uint32 {
	for _, n := range nodes {
		if n.GTIDDomain != nil {
			return n.GTIDDomain
		}
	}
	return nil
}
