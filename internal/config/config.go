// Package config loads and validates galeon's TOML configuration. Every
// problem is reported at load time with the key it concerns ("servers[2].
// address: ..."), all problems at once, so an operator fixes a file in one
// pass and the proxy never starts half-configured.
package config

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/BurntSushi/toml"
)

// Hostgroup names known to the router. Query rules and hints may route to
// either; per-user defaults choose where statements go when nothing else
// decides.
const (
	HostgroupWriter = "writer"
	HostgroupReader = "reader"
)

// Config is the whole file.
type Config struct {
	Proxy      Proxy       `toml:"proxy"`
	Admin      Admin       `toml:"admin"`
	Pool       Pool        `toml:"pool"`
	Galera     Galera      `toml:"galera"`
	Discovery  Discovery   `toml:"discovery"`
	Users      []User      `toml:"users"`
	Servers    []Server    `toml:"servers"`
	QueryRules []QueryRule `toml:"query_rules"`
	Operations Operations  `toml:"operations"`
}

// Operations lets this proxy run the cluster operations an operator
// starts from its admin interface (schema changes, as galeon cluster ddl
// runs them). It stays in this file: the shared configuration never
// carries it.
type Operations struct {
	// NodeUser is the account used on every node (DDL, SET GLOBAL);
	// empty: the admin interface shows operations but cannot start them.
	NodeUser string `toml:"node_user"`
	// NodePassword is its password; empty: $GALEON_NODE_PASSWORD.
	NodePassword string `toml:"node_password"`
}

// Proxy is the client-facing MySQL endpoint.
type Proxy struct {
	Listen string `toml:"listen"`
	// Site is the proxy's home site (data centre): reads go to readers in
	// it while one is online, and to the other sites' only when none is
	// left. Nodes get their site from servers[].site or from their
	// agents (galeon agent --site). Empty: every reader, wherever it is.
	// "auto": the site whose nodes answer the health checks clearly
	// fastest (a third of every other site's round trip or less), learned
	// once after start; where no site stands out, every reader.
	Site string `toml:"site"`
	// ServerVersion overrides the version galeon greets clients with.
	// Empty (the default): the nodes' own greeting, e.g.
	// "5.5.5-10.11.19-MariaDB-0+deb12u1" — drivers parse it to choose
	// between MySQL 8 and MariaDB behaviour, so only override it with a
	// string of the same family.
	ServerVersion string `toml:"server_version"`
	MaxPacketSize Size   `toml:"max_packet_size"`
	// Compression offers the compressed protocol (CLIENT_COMPRESS, zlib)
	// to clients that ask for it.
	Compression bool `toml:"compression"`
	// MaxLocalInfileSize bounds the file one LOAD DATA LOCAL INFILE may
	// stream through galeon; beyond it the load is aborted on the node
	// (nothing of it is committed) and the client gets an error.
	MaxLocalInfileSize Size     `toml:"max_local_infile_size"`
	NoBackendWait      Duration `toml:"no_backend_timeout"`
	MaxClients         int      `toml:"max_clients"`
	// MaxPausedWrites bounds the sessions whose statement waits for a
	// writer (a writer switch, or no node fit to write); one more gets
	// error 9001 at once instead of queueing.
	MaxPausedWrites int `toml:"max_paused_writes"`
	// Threads is how many cores the proxy's Go scheduler uses (GOMAXPROCS).
	// 0: half the machine's cores, at least 1. The proxy shares the machine
	// with clients and often databases. On 2 cores shared with sysbench and
	// three mariadbd, six alternated bench runs without a node taken out
	// (bench/README, 2026-11-28 09:25-09:54) gave, as medians of
	// galeon/HAProxy QPS, one thread against two: point selects 0.83 vs
	// 0.87 at 8 clients and 0.85 vs 0.89 at 64, read_only at 64 clients
	// 0.96 vs 0.84, read_write at 16 0.92 vs 0.85. Two threads win a little
	// on the lightest statements and lose more on the heavier ones, so one
	// thread stays the default here.
	Threads    int    `toml:"threads"`
	TLSCert    string `toml:"tls_cert"`
	TLSKey     string `toml:"tls_key"`
	RequireTLS bool   `toml:"require_tls"`
	// RSAKey is a PEM private key for caching_sha2_password full
	// authentication without TLS; generated at start when empty.
	RSAKey string `toml:"rsa_key"`
}

// Admin is the operators' endpoint.
type Admin struct {
	Listen     string `toml:"listen"`
	HTTPListen string `toml:"http_listen"`
	User       string `toml:"user"`
	// Password empty: one is generated at start and printed.
	Password string `toml:"password"`
}

// Pool sizes and times the per-node backend connection pools.
type Pool struct {
	MaxConnections int      `toml:"max_connections"`
	MinIdle        int      `toml:"min_idle"`
	ConnectTimeout Duration `toml:"connect_timeout"`
	IdleTimeout    Duration `toml:"idle_timeout"`
	// PingAfterIdle: a connection idle longer than this is pinged before
	// it is handed out (health on borrow).
	PingAfterIdle  Duration `toml:"ping_after_idle"`
	HealthInterval Duration `toml:"health_interval"`
	// MaxMissedChecks is the number of plain health checks in a row
	// (without the Galera monitor), each unanswered within
	// connect_timeout, that takes a node out; a refused connection or an
	// error answer takes it out at once.
	MaxMissedChecks int `toml:"max_missed_checks"`
	// Compress uses the compressed protocol to the nodes: worth its CPU
	// only when they are across a slow link.
	Compress bool `toml:"compress"`
	// Affinity keeps each session on the node connection it used last
	// while connections suffice (backend.Pool.Keep), and a session's
	// reads on one reader for a run of statements (proxy: readerRun).
	Affinity bool `toml:"affinity"`
}

// Galera configures the wsrep monitor and the writer/reader policies.
// Without monitor_user, galeon treats the nodes as plain MySQL servers
// (up/down by connect and ping only).
type Galera struct {
	MonitorUser     string   `toml:"monitor_user"`
	MonitorPassword string   `toml:"monitor_password"`
	Interval        Duration `toml:"interval"`
	CheckTimeout    Duration `toml:"check_timeout"`
	OKChecks        int      `toml:"ok_checks"`
	MaxMissedChecks int      `toml:"max_missed_checks"`
	// MaxTransactionsBehind: wsrep_local_recv_queue above this makes a
	// node lag (no reads; writer only as last resort). 0 disables.
	MaxTransactionsBehind int64 `toml:"max_transactions_behind"`
	AllowDonor            bool  `toml:"allow_donor"`
	// Failback: "never" (default), "immediate" or a duration ("5m": after
	// the better node has been healthy that long).
	Failback           string   `toml:"failback"`
	WriterIsAlsoReader string   `toml:"writer_is_also_reader"`
	DrainGrace         Duration `toml:"drain_grace"`
	MaxWriters         int      `toml:"max_writers"`
	// WriterSite is the site the writer belongs in (servers[].site or the
	// agents' --site); "" keeps it in whatever site it is. While a node
	// of that site can take the role, the writer is one of them.
	WriterSite string `toml:"writer_site"`
	// SiteHoldDown is how long the writer's site must have had no fit
	// node before the role moves to another site: a short partition or a
	// latency spike pauses writes rather than move them across the WAN.
	// Default DefaultSiteHoldDown; 0 moves it at once. Nodes without a
	// site are one site: the hold-down never delays their failovers.
	SiteHoldDown Duration `toml:"site_hold_down"`
	// StaleReads lets reads go to nodes outside the Primary component
	// (with wsrep_dirty_reads) when no node of a Primary component can
	// serve them: a proxy in a site cut off from the others answers
	// reads with the data as of the cut instead of failing them. Writes
	// still fail. Off by default: a stale answer must be chosen.
	StaleReads bool `toml:"stale_reads"`
	// ReadYourWrites: "on" (default) makes a session that wrote read its
	// own writes on any node: after each write, its first read on each
	// other node is a causal read (wsrep_sync_wait = 9 for that
	// statement). "off" reads wherever the router says, as Galera does
	// without causal reads.
	ReadYourWrites string `toml:"read_your_writes"`
	// CommitOutcome: "on" (default) writes a commit marker in the
	// write-set of every transaction that wrote, sent with its COMMIT in
	// one round trip, and wraps each autocommit write with one, so that
	// a COMMIT or write whose answer is lost with the writer is settled
	// (committed or not) instead of reported unknown. "commits" marks
	// COMMITs only: autocommit writes go alone (wrapping one costs its
	// node six more commands). "off" sends COMMIT alone.
	CommitOutcome string `toml:"commit_outcome"`
	// CommitSettleTimeout bounds how long a session waits for the
	// cluster to settle a lost COMMIT (the survivors' view without the
	// old writer, or its connection ended there) before it answers that
	// the outcome is unknown.
	CommitSettleTimeout Duration `toml:"commit_settle_timeout"`
	// TransactionReplay: "on" (default) records each open transaction's
	// statements and a checksum of their answers, and runs it again on
	// the new writer when the writer is lost before its COMMIT (or the
	// COMMIT did not happen); "off" ends such a transaction with 9002.
	TransactionReplay string `toml:"transaction_replay"`
	// TransactionReplayMaxSize bounds the recorded statements of one
	// transaction (bytes); a larger transaction is not replayed.
	TransactionReplayMaxSize int `toml:"transaction_replay_max_size"`
}

// Discovery connects the proxy to the control plane (etcd), where agents
// register the cluster's nodes: a node that registers is monitored and
// routed to with no change to this file.
type Discovery struct {
	// Endpoints: "embedded" (an etcd inside this proxy, on loopback: the
	// default when a [discovery] section is present) or
	// etcd://h1:2379,h2:2379 (etcds:// for TLS). With no [discovery]
	// section the proxy runs on its [[servers]] alone.
	Endpoints string `toml:"endpoints"`
	// ProxyName names this proxy in the control plane (its record and
	// controller election); default <hostname>-<mysql port>.
	ProxyName string `toml:"proxy_name"`
	// SecretKeyFile holds the key that seals passwords in the shared
	// configuration (created on first start; every proxy of a cluster
	// needs a copy). Default: galeon-secret.key beside this file.
	SecretKeyFile string `toml:"secret_key_file"`
	Cluster       string `toml:"cluster"`
	DataDir       string `toml:"data_dir"`
	ClientListen  string `toml:"client_listen"`
	PeerListen    string `toml:"peer_listen"`
	// MemberName, Peers, Join, ClientURL and PeerURL make the embedded
	// etcd one member of a cluster of several proxies (discovery.go,
	// EmbeddedMember): Peers ("name=http://host:2380", etcd's
	// initial-cluster) for members formed together, Join (a running
	// member's client URL) for a member added later.
	MemberName string   `toml:"member_name"`
	Peers      []string `toml:"peers"`
	Join       string   `toml:"join"`
	ClientURL  string   `toml:"client_url"`
	PeerURL    string   `toml:"peer_url"`
	Username   string   `toml:"username"`
	Password   string   `toml:"password"`
	CAFile     string   `toml:"ca_file"`
	CertFile   string   `toml:"cert_file"`
	KeyFile    string   `toml:"key_file"`
	// WriterWeight and ReaderWeight are given to discovered nodes (a
	// [[servers]] entry of the same name keeps its own).
	WriterWeight int `toml:"writer_weight"`
	ReaderWeight int `toml:"reader_weight"`
}

// Name is this proxy's name in the control plane: proxy_name, or
// <hostname>-<port of listen>.
func (d Discovery) Name(listen string) string {
	if d.ProxyName != "" {
		return d.ProxyName
	}
	host, _ := os.Hostname()
	_, port, _ := net.SplitHostPort(listen)
	name := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.' {
			return r
		}
		return '-'
	}, strings.TrimLeft(host, ".-_")+"-"+port)
	return strings.TrimLeft(name, "-")
}

// Enabled says whether the proxy follows service discovery.
func (d Discovery) Enabled() bool { return d.Endpoints != "" }

// RequireAfterShared lists what a proxy with discovery still lacks once
// the cluster's shared configuration is merged in: it may start with a
// file that has only the discovery endpoint, but not without users or a
// monitor account from one or the other.
func (c *Config) RequireAfterShared() []string {
	var p []string
	if len(c.Users) == 0 {
		p = append(p, "users: no [[users]] in this file nor in the cluster's shared configuration: clients log in to galeon with these")
	}
	if !c.Galera.Enabled() {
		p = append(p, "galera.monitor_user: required with discovery (in this file or the cluster's shared configuration): galeon checks every discovered node before routing to it")
	}
	return p
}

// Enabled says whether the Galera monitor runs.
func (g Galera) Enabled() bool { return g.MonitorUser != "" }

// User maps a client account to backend credentials.
type User struct {
	Name string `toml:"name"`
	// Password is the client's password, plain, or a mysql_native_password
	// hash "*HEX" (then only mysql_native_password clients can log in).
	Password         string `toml:"password"`
	BackendUser      string `toml:"backend_user"`
	BackendPassword  string `toml:"backend_password"`
	DefaultHostgroup string `toml:"default_hostgroup"`
	DefaultSchema    string `toml:"default_schema"`
	MaxConnections   int    `toml:"max_connections"`
	// AuthPlugin is what clients authenticate with: mysql_native_password
	// (default, what MariaDB clients expect) or caching_sha2_password.
	AuthPlugin string `toml:"auth_plugin"`
	// LocalInfile allows LOAD DATA LOCAL INFILE (the client streams a file
	// of its own through galeon to the writer). Unset means allowed; the
	// client must allow it too.
	LocalInfile *bool `toml:"local_infile"`
}

// LocalInfileAllowed says whether the user may LOAD DATA LOCAL INFILE.
func (u User) LocalInfileAllowed() bool { return u.LocalInfile == nil || *u.LocalInfile }

// Server is one backend node. A weight of 0 keeps the node out of that
// hostgroup. Reader weights are the operator's and are never rewritten.
type Server struct {
	Name         string `toml:"name"`
	Address      string `toml:"address"`
	WriterWeight int    `toml:"writer_weight"`
	ReaderWeight int    `toml:"reader_weight"`
	// Site is the data centre the node is in; a proxy with a home site
	// (proxy.site) reads from nodes of its own site while one can serve.
	Site string `toml:"site"`
}

// QueryRule routes statements whose text matches Match (a regular
// expression) or whose digest equals Digest to Destination. First match
// wins; rules are tried in file order.
type QueryRule struct {
	Match       string `toml:"match"`
	Digest      string `toml:"digest"`
	User        string `toml:"user"`
	Destination string `toml:"destination"`
}

// DefaultSiteHoldDown is galera.site_hold_down's default: the WAN
// profile's suspect timeout, so that a short cut or spike pauses writes
// instead of moving the writer across sites.
const DefaultSiteHoldDown = 30 * time.Second

// Defaults is the configuration of an empty file.
func Defaults() Config {
	return Config{
		Proxy: Proxy{
			Listen:             "127.0.0.1:6033",
			MaxPacketSize:      64 << 20,
			Compression:        true,
			MaxLocalInfileSize: 1 << 30,
			NoBackendWait:      Duration(2 * time.Second),
			MaxClients:         20000,
			MaxPausedWrites:    1000,
		},
		Admin: Admin{Listen: "127.0.0.1:6032", HTTPListen: "127.0.0.1:6080", User: "admin"},
		Pool: Pool{
			MaxConnections:  200,
			ConnectTimeout:  Duration(2 * time.Second),
			IdleTimeout:     Duration(5 * time.Minute),
			PingAfterIdle:   Duration(5 * time.Second),
			Affinity:        true,
			HealthInterval:  Duration(time.Second),
			MaxMissedChecks: 2,
		},
		Discovery: Discovery{Cluster: "galeon", WriterWeight: 100, ReaderWeight: 100},
		Galera: Galera{
			Interval: Duration(500 * time.Millisecond), CheckTimeout: Duration(300 * time.Millisecond),
			OKChecks: 2, MaxMissedChecks: 2, MaxTransactionsBehind: 100, Failback: "never",
			WriterIsAlsoReader: "when_no_other_reader", DrainGrace: Duration(10 * time.Second), MaxWriters: 1,
			SiteHoldDown:   Duration(DefaultSiteHoldDown),
			ReadYourWrites: "on",
			CommitOutcome:  "on", CommitSettleTimeout: Duration(30 * time.Second),
			TransactionReplay: "on", TransactionReplayMaxSize: 1 << 20,
		},
	}
}

// Load reads path over the defaults and validates the result.
func Load(path string) (*Config, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(string(b), path)
}

// Parse decodes TOML text (name is used in messages) and validates it.
func Parse(text, name string) (*Config, error) {
	cfg := Defaults()
	md, err := toml.Decode(text, &cfg)
	if err != nil {
		var perr toml.ParseError
		if errors.As(err, &perr) {
			return nil, fmt.Errorf("%s: line %d: %s", name, perr.Position.Line, perr.Message)
		}
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if md.IsDefined("discovery") && cfg.Discovery.Endpoints == "" {
		cfg.Discovery.Endpoints = EmbeddedEndpoints
	}
	if cfg.Discovery.Enabled() && cfg.Discovery.SecretKeyFile == "" {
		cfg.Discovery.SecretKeyFile = filepath.Join(filepath.Dir(name), "galeon-secret.key")
	}
	if cfg.Discovery.Endpoints == EmbeddedEndpoints && cfg.Discovery.DataDir == "" {
		// The embedded etcd keeps its data beside the proxy's state.
		cfg.Discovery.DataDir = filepath.Join(filepath.Dir(name), "galeon-discovery")
	}
	var problems []string
	for _, k := range md.Undecoded() {
		problems = append(problems, fmt.Sprintf("%s: unknown key (check the spelling; docs/configuration.md lists the keys galeon knows)", k))
	}
	problems = append(problems, cfg.Validate()...)
	if len(problems) > 0 {
		return nil, fmt.Errorf("%s: invalid configuration:\n  %s", name, strings.Join(problems, "\n  "))
	}
	return &cfg, nil
}

// Validate returns one message per problem, each naming its key.
func (c *Config) Validate() []string {
	var p []string
	add := func(key, format string, args ...any) {
		p = append(p, key+": "+fmt.Sprintf(format, args...))
	}
	checkAddr := func(key, addr string, optional bool) {
		if addr == "" && optional {
			return
		}
		if _, port, err := net.SplitHostPort(addr); err != nil {
			add(key, "%q is not host:port (%v)", addr, err)
		} else if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
			add(key, "port %q is not a number between 0 and 65535", port)
		}
	}
	checkAddr("proxy.listen", c.Proxy.Listen, false)
	checkAddr("admin.listen", c.Admin.Listen, true)
	checkAddr("admin.http_listen", c.Admin.HTTPListen, true)
	if c.Proxy.MaxPacketSize < 1024 || c.Proxy.MaxPacketSize > 1<<30 {
		add("proxy.max_packet_size", "%d is out of range (1KiB to 1GiB)", c.Proxy.MaxPacketSize)
	}
	if c.Proxy.MaxLocalInfileSize < 0 {
		add("proxy.max_local_infile_size", "must be 0 (no LOAD DATA LOCAL at all) or a size such as \"1GiB\"")
	}
	if v := c.Proxy.ServerVersion; v != "" && (len(v) > 250 || strings.ContainsRune(v, 0)) {
		add("proxy.server_version", "must be at most 250 characters without NUL bytes; leave it empty to present the nodes' own version")
	}
	if c.Proxy.Threads < 0 {
		add("proxy.threads", "must be 0 (auto: half the cores) or more")
	}
	if c.Pool.MaxMissedChecks < 1 {
		add("pool.max_missed_checks", "must be at least 1 (the unanswered health checks in a row that take a node out)")
	}
	if c.Proxy.NoBackendWait <= 0 {
		add("proxy.no_backend_timeout", "must be positive, e.g. \"2s\"")
	}
	if c.Proxy.MaxPausedWrites < 1 {
		add("proxy.max_paused_writes", "must be at least 1 (sessions that may wait for a writer at once)")
	}
	if (c.Proxy.TLSCert == "") != (c.Proxy.TLSKey == "") {
		add("proxy.tls_cert", "tls_cert and tls_key must be given together")
	}
	if c.Proxy.RequireTLS && c.Proxy.TLSCert == "" {
		add("proxy.require_tls", "needs tls_cert and tls_key")
	}
	if c.Admin.User == "" {
		add("admin.user", "must not be empty")
	}
	if c.Pool.MaxConnections < 1 {
		add("pool.max_connections", "must be at least 1")
	}
	if c.Pool.MinIdle < 0 || c.Pool.MinIdle > c.Pool.MaxConnections {
		add("pool.min_idle", "must be between 0 and pool.max_connections")
	}
	for key, d := range map[string]Duration{"pool.connect_timeout": c.Pool.ConnectTimeout, "pool.idle_timeout": c.Pool.IdleTimeout, "pool.health_interval": c.Pool.HealthInterval} {
		if d <= 0 {
			add(key, "must be positive, e.g. \"2s\"")
		}
	}
	if d := c.Discovery; d.Enabled() {
		p = append(p, d.ValidateStore()...)
		if d.WriterWeight < 0 || d.ReaderWeight < 0 {
			add("discovery.writer_weight", "weights must be 0 or more")
		}
		if d.ProxyName != "" {
			if err := ValidName("proxy", d.ProxyName); err != nil {
				add("discovery.proxy_name", "%v", err)
			}
		}
	} else if len(c.Servers) == 0 {
		add("servers", "at least one [[servers]] entry is required (or [discovery] endpoints)")
	}
	g := c.Galera
	if g.Interval < Duration(50*time.Millisecond) {
		add("galera.interval", "must be at least 50ms")
	}
	if g.CheckTimeout <= 0 || g.CheckTimeout > g.Interval*10 {
		add("galera.check_timeout", "must be positive and at most 10 intervals")
	}
	if g.OKChecks < 1 {
		add("galera.ok_checks", "must be at least 1")
	}
	if g.MaxMissedChecks < 1 {
		add("galera.max_missed_checks", "must be at least 1")
	}
	if g.MaxTransactionsBehind < 0 {
		add("galera.max_transactions_behind", "must be 0 (off) or more")
	}
	if g.WriterSite != "" && !validSite(g.WriterSite) {
		add("galera.writer_site", "%q: use letters, digits, '-' and '_' (at most 32)", g.WriterSite)
	}
	if g.SiteHoldDown.D() < 0 || g.SiteHoldDown.D() > 10*time.Minute {
		add("galera.site_hold_down", "%s: use 0 (move at once) to 10m", g.SiteHoldDown.D())
	}
	if _, err := ParseFailback(g.Failback); err != nil {
		add("galera.failback", "%v", err)
	}
	switch g.ReadYourWrites {
	case "on", "off":
	default:
		add("galera.read_your_writes", "%q: use on (a session reads its own writes on every node) or off", g.ReadYourWrites)
	}
	switch g.CommitOutcome {
	case "on", "commits", "off":
	default:
		add("galera.commit_outcome", "%q: use on (a COMMIT or autocommit write lost with the writer is settled from a marker), commits (COMMITs only) or off", g.CommitOutcome)
	}
	switch g.TransactionReplay {
	case "on", "off":
	default:
		add("galera.transaction_replay", "%q: use on (a transaction lost with the writer is run again on the new one) or off", g.TransactionReplay)
	}
	if g.TransactionReplayMaxSize < 0 || g.TransactionReplayMaxSize > 1<<30 {
		add("galera.transaction_replay_max_size", "%d: use 0 to 1073741824 bytes", g.TransactionReplayMaxSize)
	}
	if d := g.CommitSettleTimeout.D(); d < time.Second || d > 10*time.Minute {
		add("galera.commit_settle_timeout", "%s: use 1s to 10m (how long a lost COMMIT waits for the cluster to settle it)", d)
	}
	if err := checkReaderPolicy(g.WriterIsAlsoReader); err != nil {
		add("galera.writer_is_also_reader", "%v", err)
	}
	if g.DrainGrace <= 0 {
		add("galera.drain_grace", "must be positive, e.g. \"10s\"")
	}
	if g.MaxWriters != 1 {
		add("galera.max_writers", "only 1 is supported: galeon keeps exactly one writer (multi-writer Galera invites certification conflicts)")
	}
	uniqueName := func(key, name string, seen map[string]bool) {
		if name == "" {
			add(key+".name", "must not be empty")
		} else if seen[name] {
			add(key+".name", "%q is used twice", name)
		}
		seen[name] = true
	}
	names := map[string]bool{}
	writers := 0
	for i, s := range c.Servers {
		key := fmt.Sprintf("servers[%d]", i)
		uniqueName(key, s.Name, names)
		checkAddr(key+".address", s.Address, false)
		if s.WriterWeight < 0 {
			add(key+".writer_weight", "must be 0 or more")
		}
		if s.ReaderWeight < 0 {
			add(key+".reader_weight", "must be 0 or more")
		}
		if s.WriterWeight > 0 {
			writers++
		}
		if s.Site != "" && !validSite(s.Site) {
			add(key+".site", "%q: use letters, digits, '-' and '_' (at most 32)", s.Site)
		}
		if s.Site == "auto" {
			add(key+".site", "\"auto\" is reserved (proxy.site = \"auto\" learns the proxy's site): name the node's data centre")
		}
	}
	if c.Proxy.Site != "" && !validSite(c.Proxy.Site) {
		add("proxy.site", "%q: use letters, digits, '-' and '_' (at most 32)", c.Proxy.Site)
	}
	if len(c.Servers) > 0 && writers == 0 {
		add("servers", "no server has writer_weight > 0: writes would have nowhere to go")
	}
	users := map[string]bool{}
	for i, u := range c.Users {
		key := fmt.Sprintf("users[%d]", i)
		uniqueName(key, u.Name, users)
		if strings.HasPrefix(u.Password, "*") && len(u.Password) != 41 {
			add(key+".password", "a hash must be '*' and 40 hex digits (as in mysql.user)")
		}
		if u.DefaultHostgroup != "" && !validHostgroup(u.DefaultHostgroup) {
			add(key+".default_hostgroup", "%q: use %q or %q", u.DefaultHostgroup, HostgroupWriter, HostgroupReader)
		}
		switch u.AuthPlugin {
		case "", "mysql_native_password":
		case "caching_sha2_password":
			if strings.HasPrefix(u.Password, "*") {
				add(key+".auth_plugin", "caching_sha2_password needs the plain password, not a mysql_native_password hash")
			}
		default:
			add(key+".auth_plugin", "%q: use mysql_native_password or caching_sha2_password", u.AuthPlugin)
		}
		if strings.HasPrefix(u.Password, "*") && u.BackendPassword == "" {
			add(key+".backend_password", "required when password is a hash: galeon must log into the nodes")
		}
		if u.MaxConnections < 0 {
			add(key+".max_connections", "must be 0 (unlimited) or more")
		}
	}
	if len(c.Users) == 0 && !c.Discovery.Enabled() {
		add("users", "at least one [[users]] entry is required: clients log in to galeon with these")
	}
	for i, r := range c.QueryRules {
		key := fmt.Sprintf("query_rules[%d]", i)
		if (r.Match == "") == (r.Digest == "") {
			add(key, "give exactly one of match (regular expression) or digest")
		}
		if r.Match != "" {
			if _, err := regexp.Compile(r.Match); err != nil {
				add(key+".match", "invalid regular expression: %v", err)
			}
		}
		if r.Digest != "" {
			if _, err := strconv.ParseUint(strings.TrimPrefix(r.Digest, "0x"), 16, 64); err != nil {
				add(key+".digest", "%q is not a hexadecimal digest (as shown in stats_query_digest)", r.Digest)
			}
		}
		if !validHostgroup(r.Destination) {
			add(key+".destination", "%q: use %q or %q", r.Destination, HostgroupWriter, HostgroupReader)
		}
		if r.User != "" && !users[r.User] {
			add(key+".user", "%q is not a configured user", r.User)
		}
	}
	sort.Strings(p)
	return p
}

// ParseFailback reads galera.failback: "never", "immediate" or a duration.
func ParseFailback(s string) (time.Duration, error) {
	switch s {
	case "never", "":
		return -1, nil
	case "immediate":
		return 0, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("%q: use never, immediate or a duration such as \"5m\"", s)
	}
	return d, nil
}

func validHostgroup(h string) bool { return h == HostgroupWriter || h == HostgroupReader }

// validSite accepts site names as `galeon plan --dc` and the agents do.
func validSite(s string) bool {
	if s == "" || len(s) > 32 {
		return false
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}
