package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/galeon-db/galeon/internal/agent"
	"github.com/galeon-db/galeon/internal/discovery"
	"github.com/galeon-db/galeon/internal/nodeexec"
	"github.com/galeon-db/galeon/internal/sandbox"
)

// discoveryFlags are the control-plane options every etcd client command
// takes.
type discoveryFlags struct {
	endpoints, cluster, ca, cert, key, user, passwordFile *string
}

func addDiscoveryFlags(fs *flag.FlagSet) discoveryFlags {
	return discoveryFlags{
		endpoints:    fs.String("discovery", "etcd://127.0.0.1:2379", "etcd endpoints: etcd://h1:2379,h2:2379 (etcds:// for TLS)"),
		cluster:      fs.String("cluster", "galeon", "cluster name: keys live under /galeon/NAME/"),
		ca:           fs.String("discovery-ca", "", "CA file to verify etcd's certificates"),
		cert:         fs.String("discovery-cert", "", "client certificate for etcd"),
		key:          fs.String("discovery-key", "", "client key for etcd"),
		user:         fs.String("discovery-user", "", "etcd user (password from $GALEON_DISCOVERY_PASSWORD or --discovery-password-file)"),
		passwordFile: fs.String("discovery-password-file", "", "file holding the etcd password"),
	}
}

func (d discoveryFlags) config() (discovery.Config, error) {
	cfg := discovery.Config{Endpoints: *d.endpoints, Cluster: *d.cluster, CAFile: *d.ca, CertFile: *d.cert, KeyFile: *d.key,
		Username: *d.user, Password: os.Getenv("GALEON_DISCOVERY_PASSWORD")}
	if *d.passwordFile != "" {
		b, err := os.ReadFile(*d.passwordFile)
		if err != nil {
			return cfg, fmt.Errorf("--discovery-password-file: %w", err)
		}
		cfg.Password = strings.TrimSpace(string(b))
	}
	if cfg.Endpoints == discovery.Embedded {
		return cfg, errors.New("--discovery embedded: the embedded etcd runs inside `galeon proxy`; point agents at its client address (etcd://127.0.0.1:2379)")
	}
	return cfg, nil
}

// open checks the flags and connects to the control plane, within
// timeout, for a command that only reads and writes keys (no log).
func (d discoveryFlags) open(ctx context.Context, timeout time.Duration) (*discovery.Store, error) {
	dcfg, err := d.config()
	if err != nil {
		return nil, err
	}
	if problems := dcfg.Validate(); len(problems) > 0 {
		return nil, errors.New(strings.Join(problems, "; "))
	}
	octx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	return discovery.Open(octx, dcfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
}

func runAgent(ctx context.Context, args []string) error {
	_ = mysql.SetLogger(quietLogger{})
	fs := flag.NewFlagSet("agent", flag.ContinueOnError)
	node := fs.String("node", "", "the node's name in the cluster (required)")
	addr := fs.String("address", "", "host:port of the node's mariadbd, as proxies reach it")
	user := fs.String("user", "", "account to read wsrep status (needs no privilege; default $GALEON_MONITOR_USER)")
	passwordFile := fs.String("password-file", "", "file holding its password (default $GALEON_MONITOR_PASSWORD)")
	grastate := fs.String("grastate", "", "path of the node's grastate.dat")
	datadir := fs.String("datadir", "", "the node's data directory, for state-transfer progress (default: where grastate.dat is)")
	segment := fs.Int("segment", 0, "the node's gmcast.segment")
	site := fs.String("site", "", "the node's site (data centre)")
	httpListen := fs.String("http", "127.0.0.1:9200", "clustercheck endpoint for HAProxy's httpchk (\"\" for none)")
	allowDonor := fs.Bool("allow-donor", false, "clustercheck: a Donor/Desynced node may take traffic (non-blocking SST only)")
	interval := fs.Duration("interval", 500*time.Millisecond, "how often the node is checked")
	logFormat := fs.String("log-format", "text", "log lines as text (logfmt) or json")
	sb := fs.String("sandbox", "", "take address, credentials and grastate.dat of --node from this sandbox")
	sbDir := fs.String("sandbox-dir", "", "like --sandbox, by directory")
	manage := fs.String("manage", "", "let the controller start and recover the node through this agent: \"systemd\" (Debian's mariadb unit, galera_new_cluster, galera_recovery)")
	unit := fs.String("unit", "mariadb", "the node's systemd unit (--manage systemd)")
	cmds := nodeexec.Commands{}
	fs.StringVar(&cmds.RunningCmd, "running-cmd", "", "command that exits 0 while the node's server runs (overrides --manage's; {node} is the node's name)")
	fs.StringVar(&cmds.StartCmd, "start-cmd", "", "command that starts the server to join the cluster")
	fs.StringVar(&cmds.BootstrapCmd, "bootstrap-cmd", "", "command that starts the server as a new Primary component")
	fs.StringVar(&cmds.RecoverCmd, "recover-cmd", "", "command that prints the crashed server's recovered position, UUID:SEQNO")
	fs.StringVar(&cmds.PromoteCmd, "promote-cmd", "", "command that sets pc.bootstrap=YES on the running server")
	fs.StringVar(&cmds.RestartCmd, "restart-cmd", "", "command that restarts the server cleanly")
	fs.StringVar(&cmds.StopCmd, "stop-cmd", "", "command that stops the server cleanly")
	fs.StringVar(&cmds.ReadOnlyCmd, "read-only-cmd", "", "command that sets the server's read_only to {value} (ON or OFF), for the fence of a replica's promotion (optional)")
	replicaName := fs.String("replica", "", "run beside an asynchronous replica of the cluster instead of a node: keep it replicating from the writer (its name)")
	sourceUser := fs.String("source-user", "", "--replica: the account the replica reads the nodes' binary logs with (REPLICATION SLAVE; password from $GALEON_SOURCE_PASSWORD); empty keeps what the replica has")
	pinned := fs.String("source-node", "", "--replica: replicate from this node instead of the writer")
	members := fs.String("members", "", "--replica: the replica is a DR cluster (a Galera cluster) with these nodes (host:port, comma-separated): one of them replicates at a time, another when it fails; all are made writable at the promotion (instead of --address)")
	archiveDir := fs.String("archive", "", "--replica: keep this directory (absolute) a live copy of the replica's binary log: the cluster's transactions as one GTID stream, for point-in-time recovery (galeon cluster restore --archive); --user then needs REPLICATION SLAVE and BINLOG MONITOR")
	df := addDiscoveryFlags(fs)
	if _, err := parseInterleaved(fs, args); err != nil {
		return err
	}
	if *sb != "" && *sbDir == "" {
		*sbDir = sandbox.DirFor(*sb)
	}
	if *replicaName != "" {
		rc := agent.ReplicaConfig{Name: *replicaName, Address: *addr, User: *user, Password: os.Getenv("GALEON_REPLICA_PASSWORD"),
			SourceUser: *sourceUser, SourcePassword: os.Getenv("GALEON_SOURCE_PASSWORD"), Pinned: *pinned, Interval: *interval,
			ArchiveDir: *archiveDir}
		if *members != "" {
			rc.Members = strings.Split(*members, ",")
		}
		if *passwordFile != "" {
			var err error
			if rc.Password, err = readPasswordFile(*passwordFile); err != nil {
				return err
			}
		}
		var drSandbox *sandbox.Sandbox
		if *sbDir != "" {
			s, err := sandbox.Open(*sbDir, sandbox.Control{})
			if err != nil {
				return err
			}
			if s.DROf != "" && s.Name == *replicaName {
				drSandbox = s
			}
		}
		if s := drSandbox; s != nil {
			// A DR cluster's agent: the sandbox's nodes are the replica.
			c := s.Credentials
			rc.Members, rc.User, rc.Password, rc.SourceUser, rc.SourcePassword = s.Addrs(), c.AdminUser, c.AdminPassword, c.ReplUser, c.ReplPassword
			rc.OnPromoted = func() error {
				// Reopened: the sandbox may have changed since.
				s, err := sandbox.Open(*sbDir, sandbox.Control{})
				if err != nil {
					return err
				}
				return s.MarkDRPromoted()
			}
			return runReplicaAgent(ctx, rc, df, *logFormat)
		}
		if *sbDir != "" {
			s, n, err := sandboxNode(*sbDir, *replicaName)
			if err != nil {
				return err
			}
			if !n.Replica {
				return fmt.Errorf("%s is a Galera node of the sandbox, not a replica: use --node", n.Name)
			}
			c := s.Credentials
			rc.Address, rc.User, rc.Password, rc.SourceUser, rc.SourcePassword = n.Addr(), c.AdminUser, c.AdminPassword, c.ReplUser, c.ReplPassword
		}
		switch {
		case rc.Address == "" && len(rc.Members) == 0:
			return errors.New("--address of the replica is required (or --sandbox NAME)")
		case rc.User == "":
			return errors.New("--user is required with --replica: an account on the replica that may run CHANGE MASTER (its password in $GALEON_REPLICA_PASSWORD or --password-file)")
		}
		return runReplicaAgent(ctx, rc, df, *logFormat)
	}
	cfg := agent.Config{Node: *node, Address: *addr, User: *user, Grastate: *grastate, DataDir: *datadir, Segment: *segment, Site: *site,
		HTTPListen: *httpListen, AllowDonor: *allowDonor, Interval: *interval, Password: os.Getenv("GALEON_MONITOR_PASSWORD")}
	if cfg.User == "" {
		cfg.User = os.Getenv("GALEON_MONITOR_USER")
	}
	if *passwordFile != "" {
		var err error
		if cfg.Password, err = readPasswordFile(*passwordFile); err != nil {
			return err
		}
	}
	if *sbDir != "" {
		s, n, err := sandboxNode(*sbDir, *node)
		if err != nil {
			return err
		}
		if n.Replica {
			return fmt.Errorf("%s is an asynchronous replica, not a Galera node: use --replica %s", n.Name, n.Name)
		}
		cfg.Address, cfg.Grastate = n.Addr(), s.GrastatePath(n)
		if n.Site != "" {
			cfg.Site, cfg.Segment = n.Site, n.Segment
		}
		cfg.User, cfg.Password = s.Credentials.MonitorUser, s.Credentials.MonitorPassword
		// A sandbox node is this agent's to start: it reports whether
		// mariadbd runs, recovers its position after a crash, and starts
		// it when the controller recovers the cluster.
		cfg.Executor = s
	}
	if ex, err := nodeCommands(*manage, *unit, cfg.Grastate, cmds); err != nil {
		return err
	} else if ex != nil {
		if cfg.Executor != nil {
			return errors.New("--manage and the --*-cmd options are for nodes outside a sandbox: a sandbox's agent manages its node already")
		}
		cfg.Executor = *ex
	}
	switch {
	case cfg.Node == "":
		return errors.New("--node is required")
	case cfg.Address == "":
		return errors.New("--address is required (or --sandbox NAME)")
	case cfg.User == "":
		return errors.New("--user (or $GALEON_MONITOR_USER) is required")
	case *interval < 100*time.Millisecond:
		return fmt.Errorf("--interval %s: use at least 100ms", *interval)
	}
	store, log, err := openAgentStore(ctx, df, *logFormat)
	if err != nil {
		return err
	}
	defer store.Close()
	a, err := agent.New(cfg, store, log)
	if err != nil {
		return err
	}
	log.Info("agent running", "node", cfg.Node, "address", cfg.Address, "discovery", strings.Join(store.Endpoints, ","), "clustercheck", cfg.HTTPListen)
	return a.Run(ctx)
}

// openAgentStore makes an agent's log and connects to its etcd, retrying
// until it answers.
func openAgentStore(ctx context.Context, df discoveryFlags, logFormat string) (*discovery.Store, *slog.Logger, error) {
	dcfg, err := df.config()
	if err != nil {
		return nil, nil, err
	}
	log, err := newLogger(logFormat, slog.LevelInfo)
	if err != nil {
		return nil, nil, err
	}
	store, err := openRetrying(ctx, dcfg, log)
	return store, log, err
}

// readPasswordFile reads --password-file.
func readPasswordFile(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("--password-file: %w", err)
	}
	return strings.TrimSpace(string(b)), nil
}

// sandboxNode opens the sandbox in dir and finds its node (or replica)
// name.
func sandboxNode(dir, name string) (*sandbox.Sandbox, sandbox.Node, error) {
	s, err := sandbox.Open(dir, sandbox.Control{})
	if err != nil {
		return nil, sandbox.Node{}, err
	}
	n, err := s.Member(name)
	return s, n, err
}

// runReplicaAgent is galeon agent --replica.
func runReplicaAgent(ctx context.Context, rc agent.ReplicaConfig, df discoveryFlags, logFormat string) error {
	store, log, err := openAgentStore(ctx, df, logFormat)
	if err != nil {
		return err
	}
	defer store.Close()
	a, err := agent.NewReplica(rc, store, log)
	if err != nil {
		return err
	}
	log.Info("replica agent running", "replica", rc.Name, "address", rc.Address, "discovery", strings.Join(store.Endpoints, ","))
	return a.Run(ctx)
}

// openRetrying connects to etcd, retrying every second while it does not
// answer: an agent may start before etcd (the embedded etcd of a proxy
// that starts later) and must register its node once etcd is up. A
// configuration that can never work fails at once.
func openRetrying(ctx context.Context, cfg discovery.Config, log *slog.Logger) (*discovery.Store, error) {
	if problems := cfg.Validate(); len(problems) > 0 {
		return nil, errors.New(strings.Join(problems, "; "))
	}
	cfg.DialTimeout = 2 * time.Second
	for attempt := 0; ; attempt++ {
		store, err := discovery.Open(ctx, cfg, log)
		if err == nil {
			if attempt > 0 {
				log.Info("etcd answers", "endpoints", cfg.Endpoints, "after_attempts", attempt+1)
			}
			return store, nil
		}
		if attempt%30 == 0 {
			log.Warn("etcd does not answer yet; retrying every second", "err", err)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(time.Second):
		}
	}
}

// nodeCommands are the commands an agent runs its node with: systemd's
// (--manage systemd) with any --*-cmd given instead, or the --*-cmd
// options alone (all of them then); nil when the agent only reports.
func nodeCommands(manage, unit, grastate string, given nodeexec.Commands) (*nodeexec.Commands, error) {
	var c nodeexec.Commands
	switch manage {
	case "":
		if given == (nodeexec.Commands{}) {
			return nil, nil
		}
	case "systemd":
		c = nodeexec.Systemd(unit, grastate)
	default:
		return nil, fmt.Errorf("--manage %q: the only manager known is systemd (or give every --*-cmd)", manage)
	}
	for _, o := range []struct {
		dst *string
		v   string
	}{{&c.RunningCmd, given.RunningCmd}, {&c.StartCmd, given.StartCmd},
		{&c.BootstrapCmd, given.BootstrapCmd}, {&c.RecoverCmd, given.RecoverCmd}, {&c.PromoteCmd, given.PromoteCmd},
		{&c.RestartCmd, given.RestartCmd}, {&c.StopCmd, given.StopCmd}, {&c.ReadOnlyCmd, given.ReadOnlyCmd}} {
		if o.v != "" {
			*o.dst = o.v
		}
	}
	c.Grastate = grastate
	if err := c.Validate(); err != nil {
		return nil, fmt.Errorf("%w: give --manage systemd, or every one of --running-cmd --start-cmd --bootstrap-cmd --recover-cmd --promote-cmd --restart-cmd --stop-cmd, and --grastate", err)
	}
	return &c, nil
}
