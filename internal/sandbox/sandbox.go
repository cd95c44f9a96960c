package sandbox

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	// Registers the "mysql" database/sql driver used to watch nodes.
	_ "github.com/go-sql-driver/mysql"

	"github.com/galeon-db/galeon/internal/galera"
)

// Options say how to create a sandbox. Zero values take the defaults.
type Options struct {
	Name      string // default "galeon"
	Nodes     int    // default 3
	BasePort  int    // default 4400
	Dir       string // default /var/tmp/galeon/<name>
	SSTMethod string // rsync (default) or mariabackup
	// ProviderOptions and ServerOptions override the loopback-tuned
	// defaults (wsrep_provider_options entries and [mariadbd] options).
	ProviderOptions map[string]string
	ServerOptions   map[string]string
	// TLS makes up generate a CA and a server certificate (TLSFiles) and
	// every node serve TLS with them.
	TLS bool
	// Discovery is the etcd where one agent per node registers it
	// (etcd://host:port, see DiscoveryEndpoint); "" runs no agents.
	Discovery string
	// Sites lays the sandbox out over sites, each in its own network
	// namespace and gmcast.segment, in the notation of `galeon plan
	// --dc`: "dc1:2,dc2:2,dc3:garbd". It replaces Nodes.
	Sites string
	// WANRTT puts this round trip between every two sites (half of it
	// one way out of each; needs Control.AgentBinary).
	WANRTT time.Duration
	// WAN applies galera.WANProfile (timeouts and windows for links with
	// tens of milliseconds of latency) under ProviderOptions.
	WAN bool
	// OneSegment puts every site in gmcast.segment 0, as a cluster set up
	// without segments is: every writeset then crosses the WAN to every
	// remote node, not once per site (to measure what segments save).
	OneSegment bool
	// FromBackup starts the cluster from a prepared mariabackup copy
	// (galeon cluster backup): the first node gets its files and Galera
	// position and bootstraps, the others join by state transfer.
	FromBackup string
	// Replicas makes the nodes a replication source (binary logs with
	// the cluster's GTIDs) and adds that many asynchronous replicas.
	Replicas int
	// ReplicationSource makes the nodes a replication source without
	// replicas of the sandbox's own (for a DR cluster: --dr-of).
	ReplicationSource bool
	// DROf makes the sandbox a DR cluster of the sandbox of that name
	// (in the same parent directory): it starts from FromBackup, a
	// backup of that cluster, with its accounts, in a GTID domain and
	// server_id of its own, read-only for clients, with
	// gtid_slave_pos = DRSlavePos (the backup's GTID position) on every
	// node, so that its agent can start replicating where the copy ends.
	DROf       string
	DRSlavePos string
	Control
}

// Control says how a Sandbox handle behaves; it is not stored.
type Control struct {
	// Progress, if set, receives one line per node state change.
	Progress func(node, msg string)
	// KillWithParent makes the kernel kill every node this process starts
	// when this process dies (tests: nothing survives a crashed run).
	KillWithParent bool
	// NodeTimeout bounds how long one node may take to become Synced
	// (default 3 minutes: an SST of a small sandbox takes seconds).
	NodeTimeout time.Duration
	// AgentBinary is the galeon executable that runs the agents of a
	// sandbox with Discovery ("" starts none: tests run agents in-process).
	AgentBinary string
	// Donors, if set, names the nodes a joining node may take its state
	// transfer from, best first (wsrep_sst_donor); seqno is the joiner's
	// last committed seqno (-1: none). Empty leaves the choice to Galera.
	Donors func(joiner Node, seqno int64) []string
}

// SetDonors sets how joiners choose their donor (see Control.Donors).
func (sb *Sandbox) SetDonors(f func(joiner Node, seqno int64) []string) { sb.ctl.Donors = f }

// Sandbox is a handle on a sandbox directory.
type Sandbox struct {
	State
	ctl Control

	mu  sync.Mutex
	dbs map[string]*sql.DB
	// recovered holds positions found with --wsrep-recover, so that a
	// crashed node starts from its real position (and can join by IST,
	// or bootstrap without losing the cluster's history).
	recovered map[string]GraState
	// fromBackup is Options.FromBackup while the sandbox is created.
	fromBackup string
}

func (o *Options) setDefaults() {
	if o.Name == "" {
		o.Name = DefaultName
	}
	if o.Nodes == 0 {
		o.Nodes = DefaultNodes
	}
	if o.BasePort == 0 {
		o.BasePort = DefaultBasePort
	}
	if o.Dir == "" {
		o.Dir = DirFor(o.Name)
	}
	if o.SSTMethod == "" {
		o.SSTMethod = "rsync"
	}
}

func (c *Control) setDefaults() {
	if c.NodeTimeout == 0 {
		c.NodeTimeout = 3 * time.Minute
	}
	if c.Progress == nil {
		c.Progress = func(string, string) {}
	}
}

// Open returns a handle on the existing sandbox in dir.
func Open(dir string, ctl Control) (*Sandbox, error) {
	st, err := loadState(dir)
	if err != nil {
		return nil, err
	}
	ctl.setDefaults()
	return &Sandbox{State: *st, ctl: ctl, dbs: map[string]*sql.DB{}}, nil
}

func validName(name string) bool {
	if name == "" || len(name) > 32 {
		return false
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return false
		}
	}
	return true
}

// Up creates a sandbox of opts.Nodes nodes and returns once every node is
// Synced in one Primary component of that size. On failure it stops what
// it started, removes the directory and returns an error that quotes the
// failing node's error log.
func Up(ctx context.Context, opts Options) (*Sandbox, error) {
	opts.setDefaults()
	opts.Control.setDefaults()
	switch {
	case !validName(opts.Name):
		return nil, fmt.Errorf("sandbox name %q: use 1-32 letters, digits, '-' or '_'", opts.Name)
	case opts.Nodes < 1 || opts.Nodes > MaxNodes:
		return nil, fmt.Errorf("--nodes %d: a sandbox has 1 to %d nodes", opts.Nodes, MaxNodes)
	case opts.BasePort < 1024 || opts.BasePort+offsetSST+MaxNodes > 65535:
		return nil, fmt.Errorf("--base-port %d: choose a port between 1024 and %d", opts.BasePort, 65535-offsetSST-MaxNodes)
	case opts.Replicas < 0 || opts.Replicas > MaxReplicas:
		return nil, fmt.Errorf("--replicas %d: a sandbox has 0 to %d asynchronous replicas", opts.Replicas, MaxReplicas)
	case opts.Replicas > 0 && opts.BasePort+offsetReplica+MaxReplicas > 65535:
		return nil, fmt.Errorf("--base-port %d: with replicas, choose a port between 1024 and %d", opts.BasePort, 65535-offsetReplica-MaxReplicas)
	}
	if err := checkPrerequisites(opts.SSTMethod); err != nil {
		return nil, err
	}
	var primary *Sandbox
	if opts.DROf != "" {
		var err error
		if primary, err = drPrimary(opts); err != nil {
			return nil, err
		}
	}
	if _, err := os.Stat(opts.Dir + "/" + stateFile); err == nil {
		return nil, fmt.Errorf("sandbox %q already exists in %s: use `galeon sandbox start --name %s`, or `galeon sandbox destroy --name %s` first", opts.Name, opts.Dir, opts.Name, opts.Name)
	}
	sb := &Sandbox{
		State: State{
			Name: opts.Name, Dir: opts.Dir, BasePort: opts.BasePort, SSTMethod: opts.SSTMethod,
			ProviderOptions: providerOptions(opts), ServerOptions: opts.ServerOptions, TLS: opts.TLS, WANRTT: opts.WANRTT.String(),
			Discovery: opts.Discovery, Credentials: newCredentials(), ReplicationSource: opts.Replicas > 0 || opts.ReplicationSource,
		},
		ctl:        opts.Control,
		dbs:        map[string]*sql.DB{},
		fromBackup: opts.FromBackup,
	}
	if primary != nil {
		sb.makeDROf(primary)
	}
	if opts.Sites != "" {
		if err := sb.planSites(opts.Sites, opts.OneSegment); err != nil {
			return nil, err
		}
	} else {
		for i := 1; i <= opts.Nodes; i++ {
			sb.Nodes = append(sb.Nodes, newNode(opts.BasePort, i))
		}
	}
	if sb.Net != nil {
		// Before anything is made: on a clash, cleaning up after a
		// failed create would tear down the other sandbox's bridge. And
		// before the ports: a subnet another sandbox uses is the clash
		// to name, whatever else happens to hold one of the ports (an
		// ephemeral port of some connection, say).
		if err := sb.Net.CheckFree(ctx); err != nil {
			return nil, err
		}
	}
	if err := checkPortsFree(sb.Nodes); err != nil {
		return nil, err
	}
	if err := sb.create(ctx); err != nil {
		_ = sb.Destroy(context.Background())
		return nil, err
	}
	if primary != nil {
		if err := sb.setSlavePos(ctx, opts.DRSlavePos); err != nil {
			_ = sb.Destroy(context.Background())
			return nil, err
		}
	}
	for i := 0; i < opts.Replicas; i++ {
		if _, err := sb.AddReplica(ctx); err != nil {
			_ = sb.Destroy(context.Background())
			return nil, err
		}
	}
	return sb, sb.startAgents()
}

func (sb *Sandbox) create(ctx context.Context) error {
	// Every parent of a datadir must be traversable by mysql.
	if err := os.MkdirAll(sb.Dir, 0o755); err != nil {
		return err
	}
	if err := os.Chmod(sb.Dir, 0o755); err != nil {
		return err
	}
	if err := sb.save(); err != nil {
		return err
	}
	if err := sb.ensureNet(ctx); err != nil {
		return fmt.Errorf("create the sites' network: %w", err)
	}
	if sb.TLS {
		if err := sb.writeTLSFiles(); err != nil {
			return fmt.Errorf("create TLS certificates: %w", err)
		}
	}
	for _, n := range sb.Nodes {
		if err := sb.prepareNodeDir(n); err != nil {
			return err
		}
	}
	first := sb.Nodes[0]
	if sb.fromBackup != "" {
		if err := sb.restoreInto(ctx, first); err != nil {
			return err
		}
	} else if err := sb.installDB(ctx, first); err != nil {
		return err
	}
	if err := sb.startAndWait(ctx, first, true); err != nil {
		return err
	}
	if err := sb.createUsers(ctx, first); err != nil {
		return err
	}
	if err := sb.startJoiners(ctx, sb.Nodes[1:]); err != nil {
		return err
	}
	if err := sb.WaitMembers(ctx); err != nil {
		return err
	}
	if err := sb.startArbitrators(ctx); err != nil {
		return err
	}
	// The delay between sites goes in once every node has joined: bulk
	// transfers crawl through the delay process (an rsync SST across 20
	// ms took 103 s, against 4 s undelayed), and the first state
	// transfers teach nothing about the WAN.
	return sb.applyWANRTT(ctx)
}

func (sb *Sandbox) prepareNodeDir(n Node) error {
	if err := os.MkdirAll(sb.dataDir(n), 0o750); err != nil {
		return err
	}
	if err := chownMysqlTree(sb.nodeDir(n)); err != nil {
		return err
	}
	return sb.writeMyCnf(n)
}

func newCredentials() Credentials {
	return Credentials{
		AdminUser: "galeon_admin", AdminPassword: randomPassword(),
		AppUser: "app", AppPassword: randomPassword(),
		MonitorUser: "monitor", MonitorPassword: randomPassword(),
		SSTUser: "sst", SSTPassword: randomPassword(),
		ReplUser: "repl", ReplPassword: randomPassword(),
	}
}

func randomPassword() string {
	b := make([]byte, 18)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand never fails on Linux
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

// startJoiners starts nodes that join the running cluster by state
// transfer, one after the other. Starting them together looks faster but
// is slower on a small machine: with the loopback-tuned EVS timeouts a
// donor busy with one SST makes the group suspect the next joiner, and
// membership churns for tens of seconds (measured: 28 s vs about 10 s).
func (sb *Sandbox) startJoiners(ctx context.Context, nodes []Node) error {
	for _, n := range nodes {
		if err := sb.startAndWait(ctx, n, false); err != nil {
			return err
		}
	}
	return nil
}

// startAndWait starts node n (bootstrapping a new cluster if asked) and
// waits until it is Synced and Primary.
func (sb *Sandbox) startAndWait(ctx context.Context, n Node, bootstrap bool) error {
	if sb.pid(n) != 0 {
		return fmt.Errorf("%s is already running", n.Name)
	}
	if err := sb.writeMyCnf(n); err != nil {
		return err
	}
	var args []string
	if bootstrap {
		args = append(args, "--wsrep-new-cluster")
		sb.ctl.Progress(n.Name, "bootstrapping a new cluster")
	} else {
		sb.ctl.Progress(n.Name, "starting, will join by state transfer")
		if donors := galera.DonorsFrom(ctx); len(donors) > 0 {
			// Chosen by the control plane for an agent (see galera.WithDonors).
			args = append(args, "--wsrep_sst_donor="+strings.Join(donors, ","))
			sb.ctl.Progress(n.Name, "state transfer donors, best first (control plane): "+strings.Join(donors, ", "))
		} else if sb.ctl.Donors != nil {
			seqno := int64(-1)
			if g, err := readGraState(sb.grastate(n)); err == nil {
				seqno = g.Seqno
			}
			if donors := sb.ctl.Donors(n, seqno); len(donors) > 0 {
				// No trailing comma: Galera must not fall back to a node
				// left out on purpose (the writer).
				args = append(args, "--wsrep_sst_donor="+strings.Join(donors, ","))
				sb.ctl.Progress(n.Name, "state transfer donors, best first: "+strings.Join(donors, ", "))
			}
		}
	}
	if g, err := readGraState(sb.grastate(n)); err == nil && g.Seqno < 0 {
		sb.mu.Lock()
		r, ok := sb.recovered[n.Name]
		sb.mu.Unlock()
		if ok {
			args = append(args, fmt.Sprintf("--wsrep_start_position=%s:%d", r.UUID, r.Seqno))
		}
	}
	logOffset := fileSize(sb.errLog(n))
	pid, err := sb.startProcess(n, args, sb.ctl.KillWithParent)
	if err != nil {
		return err
	}
	return sb.waitSynced(ctx, n, pid, logOffset)
}

func fileSize(path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return fi.Size()
}

// Kill sends SIGKILL to a node or an arbitrator, as a crash would, and
// waits until it is gone.
func (sb *Sandbox) Kill(name string) error {
	if a, ok := sb.arbitrator(name); ok {
		return sb.KillArbitrator(a.Name)
	}
	n, err := sb.Member(name)
	if err != nil {
		return err
	}
	pid, err := sb.signal(n, syscall.SIGKILL)
	if err != nil {
		return err
	}
	sb.closeDB(n.Name)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := waitExit(ctx, pid, "--defaults-file="+sb.cnfPath(n)); err != nil {
		return err
	}
	return sb.sweep(ctx, n)
}

// Pause freezes a node (or an arbitrator) with SIGSTOP: it holds its
// sockets but answers nothing, like a hung server.
func (sb *Sandbox) Pause(name string) error {
	if a, ok := sb.arbitrator(name); ok {
		return sb.signalArbitrator(a, syscall.SIGSTOP)
	}
	n, err := sb.Node(name)
	if err != nil {
		return err
	}
	_, err = sb.signal(n, syscall.SIGSTOP)
	return err
}

// Resume continues a paused node (or arbitrator) with SIGCONT.
func (sb *Sandbox) Resume(name string) error {
	if a, ok := sb.arbitrator(name); ok {
		return sb.signalArbitrator(a, syscall.SIGCONT)
	}
	n, err := sb.Node(name)
	if err != nil {
		return err
	}
	_, err = sb.signal(n, syscall.SIGCONT)
	return err
}

// StopNode shuts one node (or arbitrator) down cleanly; it leaves the
// group gracefully.
func (sb *Sandbox) StopNode(ctx context.Context, name string) error {
	if a, ok := sb.arbitrator(name); ok {
		return sb.stopArbitrator(ctx, a)
	}
	n, err := sb.Node(name)
	if err != nil {
		return err
	}
	sb.closeDB(n.Name)
	sb.ctl.Progress(n.Name, "stopping")
	if err := sb.stopProcess(ctx, n, 2*time.Minute); err != nil {
		return err
	}
	sb.ctl.Progress(n.Name, "stopped")
	return nil
}

// StartNode starts one stopped node: it joins the running cluster (by IST
// when the donor's gcache still holds what it missed), or, when no other
// node runs, it bootstraps only if it is the most advanced node. An
// arbitrator's name starts that arbitrator (StartArbitrator).
func (sb *Sandbox) StartNode(ctx context.Context, name string) error {
	if a, ok := sb.arbitrator(name); ok {
		return sb.StartArbitrator(ctx, a.Name)
	}
	n, err := sb.Node(name)
	if err != nil {
		return err
	}
	if sb.pid(n) != 0 {
		return fmt.Errorf("%s is already running", n.Name)
	}
	if len(sb.running()) == 0 {
		return sb.Start(ctx)
	}
	return sb.joinRunning(ctx, n)
}

// joinRunning starts stopped node n to join the running cluster.
func (sb *Sandbox) joinRunning(ctx context.Context, n Node) error {
	// A node killed a moment ago is still a member until Galera evicts it
	// (about 2 s here). Rejoining under the same address before then makes
	// the group churn for tens of seconds, so wait until no running node
	// lists it any more. (Not for a cluster size: that depends on the
	// arbitrators, on paused nodes and on partitions, and a wrong one
	// left the node down.)
	if err := sb.waitEvicted(ctx, n.Name, n.Addr()); err != nil {
		return fmt.Errorf("%s not started (it stays stopped): %w", n.Name, err)
	}
	// gvwstate.dat (the last primary view, kept for pc.recovery of a whole
	// cluster) is stale when the node joins a running cluster; restoring
	// it made rejoins after kill -9 churn ("inconsistent to restored
	// view").
	if err := os.Remove(filepath.Join(sb.dataDir(n), "gvwstate.dat")); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return sb.startAndWait(ctx, n, false)
}

// Restart stops a node or an arbitrator (cleanly if it is running,
// resuming it first if it is paused) and starts it again; it rejoins the
// cluster.
func (sb *Sandbox) Restart(ctx context.Context, name string) error {
	if err := sb.StopNode(ctx, name); err != nil {
		return err
	}
	return sb.StartNode(ctx, name)
}

func (sb *Sandbox) running() []Node {
	var out []Node
	for _, n := range sb.Nodes {
		if sb.pid(n) != 0 {
			out = append(out, n)
		}
	}
	return out
}

// Start brings a stopped sandbox back. If no node runs, it bootstraps from
// the most advanced node (highest grastate.dat seqno, recovered with
// --wsrep-recover after a crash) and the others rejoin; otherwise the
// stopped nodes join the running ones.
func (sb *Sandbox) Start(ctx context.Context) error {
	if err := sb.ensureNet(ctx); err != nil {
		return fmt.Errorf("create the sites' network: %w", err)
	}
	var stopped []Node
	for _, n := range sb.Nodes {
		if sb.pid(n) == 0 {
			stopped = append(stopped, n)
		}
	}
	if len(stopped) == 0 {
		if err := sb.startArbitrators(ctx); err != nil {
			return err
		}
		if err := sb.startReplicas(ctx); err != nil {
			return err
		}
		return sb.startAgents()
	}
	if len(stopped) == len(sb.Nodes) {
		// An arbitrator that outlived every data node votes in a
		// component with no data: the bootstrap makes a new one, and
		// the arbitrators start again once every node has joined it.
		if err := sb.stopArbitrators(ctx); err != nil {
			return err
		}
		states := map[string]GraState{}
		for _, n := range sb.Nodes {
			g, err := sb.position(ctx, n)
			if err != nil {
				return err
			}
			states[n.Name] = g
			sb.ctl.Progress(n.Name, fmt.Sprintf("last committed seqno %d (safe_to_bootstrap=%v)", g.Seqno, g.SafeToBootstrap))
		}
		boot := chooseBootstrap(sb.Nodes, states)
		if !states[boot.Name].SafeToBootstrap {
			if err := setSafeToBootstrap(sb.grastate(boot)); err != nil {
				return fmt.Errorf("mark %s safe to bootstrap: %w", boot.Name, err)
			}
		}
		if err := sb.startAndWait(ctx, boot, true); err != nil {
			return err
		}
		stopped = removeNode(stopped, boot.Name)
		if err := sb.startJoiners(ctx, stopped); err != nil {
			return err
		}
		stopped = nil
	}
	// A partial start: the stopped nodes join the running ones, each
	// once the view has settled.
	for _, n := range stopped {
		if err := sb.joinRunning(ctx, n); err != nil {
			return err
		}
	}
	if err := sb.WaitMembers(ctx); err != nil {
		return err
	}
	if err := sb.startArbitrators(ctx); err != nil {
		return err
	}
	if err := sb.startReplicas(ctx); err != nil {
		return err
	}
	return sb.startAgents()
}

// startReplicas starts the replicas that do not run.
func (sb *Sandbox) startReplicas(ctx context.Context) error {
	for _, r := range sb.Replicas {
		if err := sb.StartReplica(ctx, r.Name); err != nil {
			return err
		}
	}
	return nil
}

func removeNode(nodes []Node, name string) []Node {
	out := nodes[:0:0]
	for _, n := range nodes {
		if n.Name != name {
			out = append(out, n)
		}
	}
	return out
}

// Stop shuts every node down cleanly, one at a time, last index first: the
// last node to leave is the one Galera marks safe to bootstrap.
func (sb *Sandbox) Stop(ctx context.Context) error {
	// Agents first: they deregister their nodes, so proxies drain them.
	// Arbitrators next: a cluster without its data nodes has nothing
	// for them to vote on.
	errs := []error{sb.stopAgents(ctx), sb.stopArbitrators(ctx)}
	for _, r := range sb.Replicas {
		errs = append(errs, sb.StopReplica(ctx, r.Name))
	}
	for i := len(sb.Nodes) - 1; i >= 0; i-- {
		if sb.pid(sb.Nodes[i]) == 0 {
			continue
		}
		if err := sb.StopNode(ctx, sb.Nodes[i].Name); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Destroy kills every node (by the PID the sandbox recorded) and removes
// the sandbox directory. It is safe on a half-created sandbox.
func (sb *Sandbox) Destroy(ctx context.Context) error {
	sb.closeAllDBs()
	_ = sb.stopAgents(ctx)
	for _, a := range sb.Arbitrators {
		_ = sb.KillArbitrator(a.Name)
	}
	sb.stopDelays()
	for _, n := range append(slices.Clone(sb.Nodes), sb.Replicas...) {
		if err := sb.sweep(ctx, n); err != nil {
			return err
		}
	}
	if sb.Net != nil {
		if err := sb.Net.Destroy(ctx); err != nil {
			return fmt.Errorf("remove the sites' network: %w", err)
		}
	}
	if !strings.HasPrefix(sb.Dir, "/") || len(sb.Dir) < 5 {
		return fmt.Errorf("refusing to remove suspicious sandbox dir %q", sb.Dir)
	}
	return os.RemoveAll(sb.Dir)
}

// Add creates one more node and waits until it has joined: the cluster
// grows by one.
func (sb *Sandbox) Add(ctx context.Context) (Node, error) {
	if sb.Net != nil {
		return Node{}, errors.New("adding a node to a multi-site sandbox is not supported: create it with the layout you want (--dc)")
	}
	idx := 0
	for _, n := range sb.Nodes {
		idx = max(idx, n.Index)
	}
	if idx+1 > MaxNodes {
		return Node{}, fmt.Errorf("a sandbox has at most %d nodes", MaxNodes)
	}
	n := newNode(sb.BasePort, idx+1)
	if err := checkPortsFree([]Node{n}); err != nil {
		return Node{}, err
	}
	sb.Nodes = append(sb.Nodes, n)
	sb.IDSlots = sb.idSlots()
	if err := sb.save(); err != nil {
		return Node{}, err
	}
	if err := sb.rewriteConfigs(); err != nil {
		return Node{}, err
	}
	if err := sb.widenIDSeries(ctx); err != nil {
		sb.abandonNode(n)
		return Node{}, err
	}
	if err := sb.prepareNodeDir(n); err != nil {
		return Node{}, err
	}
	if err := sb.startAndWait(ctx, n, false); err != nil {
		sb.abandonNode(n)
		return Node{}, err
	}
	if err := sb.WaitMembers(ctx); err != nil {
		return n, err
	}
	return n, sb.StartAgent(n)
}

// widenIDSeries gives the running nodes the AUTO_INCREMENT increment of
// the grown cluster (idSeries) before the new node takes its offset, so
// that its series never meets theirs.
func (sb *Sandbox) widenIDSeries(ctx context.Context) error {
	if _, over := sb.ServerOptions["auto_increment_increment"]; over {
		return nil
	}
	for _, m := range sb.Nodes {
		if !sb.Running(m.Name) {
			continue
		}
		db, err := sb.DB(m.Name)
		if err != nil {
			return err
		}
		if _, err := db.ExecContext(ctx, fmt.Sprintf("SET GLOBAL auto_increment_increment = %d", sb.idSlots())); err != nil {
			return fmt.Errorf("%s: set its AUTO_INCREMENT increment for the new node: %w", m.Name, err)
		}
	}
	return nil
}

// abandonNode undoes a failed Add.
func (sb *Sandbox) abandonNode(n Node) {
	_ = sb.sweep(context.Background(), n)
	sb.Nodes = removeNode(sb.Nodes, n.Name)
	_ = sb.save()
	_ = sb.rewriteConfigs()
	_ = os.RemoveAll(sb.nodeDir(n))
}

// Remove shuts a node down cleanly (it leaves the group, the cluster
// shrinks by one) and deletes it from the sandbox.
func (sb *Sandbox) Remove(ctx context.Context, name string) error {
	n, err := sb.Node(name)
	if err != nil {
		return err
	}
	if len(sb.Nodes) == 1 {
		return fmt.Errorf("%s is the last node: use `galeon sandbox destroy` to remove the whole sandbox", n.Name)
	}
	// The agent goes first: it deregisters the node, so proxies drain it
	// before it shuts down.
	if err := sb.StopAgent(ctx, n); err != nil {
		return err
	}
	if err := sb.StopNode(ctx, n.Name); err != nil {
		return err
	}
	sb.IDSlots = sb.idSlots() // the nodes' series stay as wide
	sb.Nodes = removeNode(sb.Nodes, n.Name)
	if err := sb.save(); err != nil {
		return err
	}
	if err := sb.rewriteConfigs(); err != nil {
		return err
	}
	if err := os.RemoveAll(sb.nodeDir(n)); err != nil {
		return err
	}
	if len(sb.running()) > 0 {
		return sb.WaitMembers(ctx)
	}
	return nil
}

// rewriteConfigs keeps every node's wsrep_cluster_address listing the
// current members, so a later restart finds the cluster.
func (sb *Sandbox) rewriteConfigs() error {
	for _, n := range sb.Nodes {
		if _, err := os.Stat(sb.nodeDir(n)); err != nil {
			continue
		}
		if err := sb.writeMyCnf(n); err != nil {
			return err
		}
	}
	return nil
}

// ForgetState makes a stopped node rejoin by full SST on its next start,
// as a node with a lost or corrupted datadir would: its grastate.dat is
// removed, so it has no position to ask IST for. Demos and tests use it
// to put another node in the donor role for seconds.
func (sb *Sandbox) ForgetState(name string) error {
	n, err := sb.Node(name)
	if err != nil {
		return err
	}
	if sb.pid(n) != 0 {
		return fmt.Errorf("%s is running: stop or kill it first", n.Name)
	}
	if err := os.Remove(sb.grastate(n)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}
