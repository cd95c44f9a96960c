package discovery

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"

	"go.etcd.io/etcd/client/pkg/v3/transport"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"
	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"

	"github.com/galeon-db/galeon/internal/config"
)

// Embedded is the Endpoints value that runs etcd inside the process.
const Embedded = config.EmbeddedEndpoints

// Config says where the store is. Every field is checked by Validate,
// with the key it comes from in the message.
type Config struct {
	// Endpoints is "embedded" or a comma-separated list of etcd client
	// URLs: etcd://h1:2379,h2:2379 (plain) or etcds://h1:2379 (TLS);
	// http:// and https:// are accepted as etcd writes them.
	Endpoints string
	// Cluster names the Galera cluster: keys live under /galeon/<cluster>/.
	Cluster string
	// DataDir is where an embedded etcd keeps its data.
	DataDir string
	// ClientListen and PeerListen are the embedded etcd's addresses
	// (loopback by default: 127.0.0.1:2379 and 127.0.0.1:2380).
	ClientListen, PeerListen string
	// MemberName, Peers, Join, ClientURL and PeerURL make the embedded
	// etcd one member of a cluster of proxies (embedded.go).
	MemberName         string
	Peers              []string
	Join               string
	ClientURL, PeerURL string
	// Username and Password for etcd's authentication, if enabled.
	Username, Password string
	// CAFile verifies the servers' certificates (TLS); CertFile and
	// KeyFile are a client certificate, for clusters that require one.
	CAFile, CertFile, KeyFile string
	// DialTimeout bounds the first connection (default 5s).
	DialTimeout time.Duration
}

// FromSettings is the store's view of a configuration file's
// [discovery] section.
func FromSettings(d config.Discovery) Config {
	return Config{Endpoints: d.Endpoints, Cluster: d.Cluster, DataDir: d.DataDir,
		ClientListen: d.ClientListen, PeerListen: d.PeerListen, Username: d.Username, Password: d.Password,
		CAFile: d.CAFile, CertFile: d.CertFile, KeyFile: d.KeyFile,
		MemberName: d.MemberName, Peers: d.Peers, Join: d.Join, ClientURL: d.ClientURL, PeerURL: d.PeerURL}
}

// settings is c as the configuration's [discovery] section.
func (c Config) settings() config.Discovery {
	return config.Discovery{Endpoints: c.Endpoints, Cluster: c.Cluster, DataDir: c.DataDir,
		ClientListen: c.ClientListen, PeerListen: c.PeerListen, Username: c.Username, Password: c.Password,
		CAFile: c.CAFile, CertFile: c.CertFile, KeyFile: c.KeyFile,
		MemberName: c.MemberName, Peers: c.Peers, Join: c.Join, ClientURL: c.ClientURL, PeerURL: c.PeerURL}
}

// Validate lists the problems of c, each naming its key (discovery.*).
func (c Config) Validate() []string {
	return c.settings().ValidateStore()
}

// Store is an open connection to the control-plane store.
type Store struct {
	// Client is the etcd client, for packages that use etcd primitives
	// (leases, elections) directly.
	Client *clientv3.Client
	Keys   Keys
	// Endpoints are the client URLs in use.
	Endpoints []string

	server    *embed.Etcd
	log       *slog.Logger
	closeOnce sync.Once
}

// Open connects to the store, starting the embedded etcd first when so
// configured, and checks that it answers: a store that cannot be reached
// is an error at start, naming the endpoints, not a silent retry loop.
func Open(ctx context.Context, cfg Config, log *slog.Logger) (*Store, error) {
	if problems := cfg.Validate(); len(problems) > 0 {
		return nil, errors.New(strings.Join(problems, "; "))
	}
	if log == nil {
		log = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	if cfg.DialTimeout <= 0 {
		cfg.DialTimeout = 5 * time.Second
	}
	s := &Store{Keys: NewKeys(cfg.Cluster), log: log}
	var secure bool
	var autoSync time.Duration
	if cfg.Endpoints == Embedded {
		srv, urls, err := startEmbedded(ctx, cfg, log)
		if err != nil {
			return nil, err
		}
		s.server, s.Endpoints = srv, urls
		if len(urls) > 1 || len(cfg.Peers) > 0 || cfg.Join != "" {
			// Members come and go (member replace), and a member that
			// was not up yet when this one became ready has published
			// no client URL: follow the membership.
			autoSync = 5 * time.Second
		}
	} else {
		s.Endpoints, secure, _ = config.ParseEndpoints(cfg.Endpoints)
	}
	ccfg := clientv3.Config{
		Endpoints: s.Endpoints, DialTimeout: cfg.DialTimeout, Logger: zap.NewNop(),
		Username: cfg.Username, Password: cfg.Password,
		DialKeepAliveTime: 2 * time.Second, DialKeepAliveTimeout: 2 * time.Second,
		// gRPC's default reconnect backoff grows to two minutes: after
		// etcd was away for 20 s a client would wait ~8 s more before it
		// even tried again (agents re-registered late, proxies stayed
		// degraded). etcd's return must be noticed within a second.
		DialOptions: []grpc.DialOption{grpc.WithConnectParams(grpc.ConnectParams{
			Backoff:           backoff.Config{BaseDelay: 100 * time.Millisecond, Multiplier: 1.6, Jitter: 0.2, MaxDelay: time.Second},
			MinConnectTimeout: time.Second,
		})},
		AutoSyncInterval: autoSync,
	}
	if secure || cfg.CAFile != "" {
		tc, err := tlsConfig(cfg)
		if err != nil {
			s.Close()
			return nil, err
		}
		ccfg.TLS = tc
	}
	cli, err := clientv3.New(ccfg)
	if err != nil {
		s.Close()
		return nil, fmt.Errorf("discovery.endpoints %s: %w", strings.Join(s.Endpoints, ","), err)
	}
	s.Client = cli
	pctx, cancel := context.WithTimeout(ctx, cfg.DialTimeout)
	defer cancel()
	if _, err := cli.Get(pctx, s.Keys.Root(), clientv3.WithCountOnly()); err != nil {
		s.Close()
		return nil, fmt.Errorf("discovery.endpoints %s: etcd does not answer within %s: %v (is it running and reachable? are the TLS and user settings right?)",
			strings.Join(s.Endpoints, ","), cfg.DialTimeout, err)
	}
	return s, nil
}

func tlsConfig(cfg Config) (*tls.Config, error) {
	info := transport.TLSInfo{TrustedCAFile: cfg.CAFile, CertFile: cfg.CertFile, KeyFile: cfg.KeyFile}
	tc, err := info.ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("discovery TLS files (ca_file, cert_file, key_file): %w", err)
	}
	return tc, nil
}

// Close closes the client and stops the embedded etcd, if any.
// Closing again does nothing.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		if s.Client != nil {
			s.Client.Close()
		}
		if s.server != nil {
			s.server.Close()
		}
	})
	return nil
}
