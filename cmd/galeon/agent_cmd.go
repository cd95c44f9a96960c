package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/galeon-db/galeon/internal/agent"
	"github.com/galeon-db/galeon/internal/discovery"
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

func runAgent(ctx context.Context, args []string) error {
	_ = mysql.SetLogger(quietLogger{})
	fs := flag.NewFlagSet("agent", flag.ContinueOnError)
	node := fs.String("node", "", "the node's name in the cluster (required)")
	addr := fs.String("address", "", "host:port of the node's mariadbd, as proxies reach it")
	user := fs.String("user", "", "account to read wsrep status (needs no privilege; default $GALEON_MONITOR_USER)")
	passwordFile := fs.String("password-file", "", "file holding its password (default $GALEON_MONITOR_PASSWORD)")
	grastate := fs.String("grastate", "", "path of the node's grastate.dat")
	segment := fs.Int("segment", 0, "the node's gmcast.segment")
	site := fs.String("site", "", "the node's site (data centre)")
	httpListen := fs.String("http", "127.0.0.1:9200", "clustercheck endpoint for HAProxy's httpchk (\"\" for none)")
	allowDonor := fs.Bool("allow-donor", false, "clustercheck: a Donor/Desynced node may take traffic (non-blocking SST only)")
	interval := fs.Duration("interval", 500*time.Millisecond, "how often the node is checked")
	sb := fs.String("sandbox", "", "take address, credentials and grastate.dat of --node from this sandbox")
	df := addDiscoveryFlags(fs)
	if _, err := parseInterleaved(fs, args); err != nil {
		return err
	}
	cfg := agent.Config{Node: *node, Address: *addr, User: *user, Grastate: *grastate, Segment: *segment, Site: *site,
		HTTPListen: *httpListen, AllowDonor: *allowDonor, Interval: *interval, Password: os.Getenv("GALEON_MONITOR_PASSWORD")}
	if cfg.User == "" {
		cfg.User = os.Getenv("GALEON_MONITOR_USER")
	}
	if *passwordFile != "" {
		b, err := os.ReadFile(*passwordFile)
		if err != nil {
			return fmt.Errorf("--password-file: %w", err)
		}
		cfg.Password = strings.TrimSpace(string(b))
	}
	if *sb != "" {
		s, err := sandbox.Open(sandbox.DirFor(*sb), sandbox.Control{})
		if err != nil {
			return err
		}
		n, err := s.Node(*node)
		if err != nil {
			return err
		}
		cfg.Address, cfg.Grastate = n.Addr(), s.GrastatePath(n)
		cfg.User, cfg.Password = s.Credentials.MonitorUser, s.Credentials.MonitorPassword
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
	dcfg, err := df.config()
	if err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	store, err := discovery.Open(ctx, dcfg, log)
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
