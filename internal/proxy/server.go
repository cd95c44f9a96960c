package proxy

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/galeon-db/galeon/internal/backend"
	"github.com/galeon-db/galeon/internal/config"
	"github.com/galeon-db/galeon/internal/digest"
	"github.com/galeon-db/galeon/internal/eventlog"
	"github.com/galeon-db/galeon/internal/memtrim"
	"github.com/galeon-db/galeon/internal/mysqlproto"
	"github.com/galeon-db/galeon/internal/topology"
)

// Proxy is a running data plane.
type Proxy struct {
	cfg  *config.Config
	log  *slog.Logger
	view *topology.View
	// pools holds one pool per node ever routed to, copied on write
	// (nodes come and go through discovery); see pool().
	pools  atomic.Pointer[map[string]*backend.Pool]
	poolMu sync.Mutex
	// discovered are the nodes added through SyncDiscovered;
	// discoverySeen: it has been called at least once.
	discovered map[string]DiscoveredNode
	// registered is the last set of registrations; lapsed the
	// discovered nodes kept, healthy, after their registration lapsed.
	registered    []DiscoveredNode
	lapsed        map[string]bool
	discoverySeen atomic.Bool
	// transfers are the state transfers in progress (SetStateTransfers).
	transfers atomic.Pointer[[]StateTransfer]
	// operation is the operator's operation in progress (SetOperation).
	operation atomic.Pointer[Operation]
	// replicas are the cluster's asynchronous replicas (SetReplicas).
	replicas atomic.Pointer[[]Replica]

	galera   *galeraState
	deciding deciding
	// readsServed: the reads each reader served lately, for the draw
	// that starts a session's run of reads (route.go).
	readsServed readsWindow

	// The shared runtime configuration (see Runtime): the accounts as
	// configured, node weights for nodes not in the view yet, the policy
	// settings, and the hook that shares an admin change.
	runtimeMu           sync.Mutex
	runtimeUsers        []config.User
	weights             map[string]config.Weights
	failbackSetting     string
	readerPolicySetting string
	shareChange         func() error

	users   atomic.Pointer[map[string]*user]
	rules   atomic.Pointer[[]rule]
	digests *digest.Stats
	hist    *histograms
	events  *eventlog.Log
	counts  counters
	pauses  pauses
	markers *markers

	tls    *tls.Config
	rsaKey *rsa.PrivateKey

	// newScramble makes handshake challenges; tests pin it.
	newScramble func() ([]byte, error)

	// learned is a node greeting read at start (see learnGreeting).
	learned atomic.Pointer[mysqlproto.Handshake]
	greeted chan struct{} // closed when learnGreeting is done
	greetBy time.Time     // clients wait for it until then (set by Serve)

	connIDs      atomic.Uint32
	clients      atomic.Int64
	clientsTotal atomic.Int64

	ln       net.Listener
	ready    chan struct{}
	mu       sync.Mutex
	sessions map[*session]struct{}
	wg       sync.WaitGroup
	checkNow map[string]chan struct{}
}

// rule is a compiled query rule.
type rule struct {
	re          *regexp.Regexp
	digest      uint64
	user        string
	destination string
	src         config.QueryRule
}

// New builds a proxy from a validated configuration.
func New(cfg *config.Config, log *slog.Logger) (*Proxy, error) {
	if log == nil {
		log = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	p := &Proxy{
		cfg: cfg, log: log, digests: &digest.Stats{}, markers: newMarkers(), hist: newHistograms(), discovered: map[string]DiscoveredNode{},
		ready: make(chan struct{}), sessions: map[*session]struct{}{}, checkNow: map[string]chan struct{}{},
		newScramble: mysqlproto.NewScramble, greeted: make(chan struct{}),
	}
	var servers []topology.Server
	pools := map[string]*backend.Pool{}
	for _, s := range cfg.Servers {
		servers = append(servers, topology.Server{Name: s.Name, Addr: s.Address, WriterWeight: s.WriterWeight, ReaderWeight: s.ReaderWeight, Site: s.Site})
		pools[s.Name] = p.newPool(s.Name, s.Address)
		p.checkNow[s.Name] = make(chan struct{}, 1)
	}
	p.pools.Store(&pools)
	p.view = topology.NewView(servers)
	if cfg.Proxy.Site != "" && cfg.Proxy.Site != topology.AutoSite {
		p.view.SetHomeSite(cfg.Proxy.Site)
	}
	p.events = eventlog.New(log, func() uint64 { return p.view.Load().Epoch })
	p.setupGalera()
	users := map[string]*user{}
	for _, u := range cfg.Users {
		users[u.Name] = newUser(u)
	}
	p.users.Store(&users)
	p.runtimeUsers, p.weights = append([]config.User(nil), cfg.Users...), map[string]config.Weights{}
	p.failbackSetting, p.readerPolicySetting = cfg.Galera.Failback, cfg.Galera.WriterIsAlsoReader
	if err := p.SetRules(cfg.QueryRules); err != nil {
		return nil, err
	}
	if cfg.Proxy.TLSCert != "" {
		cert, err := tls.LoadX509KeyPair(cfg.Proxy.TLSCert, cfg.Proxy.TLSKey)
		if err != nil {
			return nil, fmt.Errorf("proxy.tls_cert: %w", err)
		}
		p.tls = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	}
	key, err := loadOrGenerateRSAKey(cfg.Proxy.RSAKey)
	if err != nil {
		return nil, fmt.Errorf("proxy.rsa_key: %w", err)
	}
	p.rsaKey = key
	return p, nil
}

// newPool makes the connection pool of one node.
func (p *Proxy) newPool(name, addr string) *backend.Pool {
	c := p.cfg.Pool
	return backend.NewPool(backend.ServerInfo{Name: name, Addr: addr}, backend.Options{
		MaxConns: c.MaxConnections, ConnectTimeout: c.ConnectTimeout.D(),
		IdleTimeout: c.IdleTimeout.D(), PingAfterIdle: c.PingAfterIdle.D(), Compress: c.Compress,
	})
}

// anyBackendProfile is the login of some configured user, for connections
// that only need to reach a node (health checks, reading its greeting).
func (p *Proxy) anyBackendProfile() backend.Profile {
	for _, u := range *p.users.Load() {
		return backend.Profile{User: u.backendUser, Password: u.backendPassword}
	}
	return backend.Profile{}
}

// pool returns the pool of a node (nil for a node never known).
func (p *Proxy) pool(name string) *backend.Pool { return (*p.pools.Load())[name] }

func loadOrGenerateRSAKey(path string) (*rsa.PrivateKey, error) {
	if path == "" {
		return rsa.GenerateKey(rand.Reader, 2048)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	block, _ := pem.Decode(b)
	if block == nil {
		return nil, errors.New("no PEM block found")
	}
	if k, err := x509.ParsePKCS1PrivateKey(block.Bytes); err == nil {
		return k, nil
	}
	k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		return nil, err
	}
	rk, ok := k.(*rsa.PrivateKey)
	if !ok {
		return nil, errors.New("not an RSA key")
	}
	return rk, nil
}

// SetRules replaces the query rules atomically.
func (p *Proxy) SetRules(rules []config.QueryRule) error {
	out := make([]rule, 0, len(rules))
	for i, r := range rules {
		cr := rule{user: r.User, destination: r.Destination, src: r}
		if r.Match != "" {
			re, err := regexp.Compile(r.Match)
			if err != nil {
				return fmt.Errorf("query_rules[%d].match: %w", i, err)
			}
			cr.re = re
		}
		if r.Digest != "" {
			d, err := strconv.ParseUint(strings.TrimPrefix(r.Digest, "0x"), 16, 64)
			if err != nil {
				return fmt.Errorf("query_rules[%d].digest: %w", i, err)
			}
			cr.digest = d
		}
		out = append(out, cr)
	}
	p.rules.Store(&out)
	return nil
}

// View is the routing state, for the admin interface and tests.
func (p *Proxy) View() *topology.View { return p.view }

// Addr is the listening address, once Serve has started.
func (p *Proxy) Addr() net.Addr {
	<-p.ready
	return p.ln.Addr()
}

// Serve listens on the configured address and serves until ctx ends; then
// it closes the listener and every client connection and waits for all
// its goroutines.
func (p *Proxy) Serve(ctx context.Context) error {
	ln, err := net.Listen("tcp", p.cfg.Proxy.Listen)
	if err != nil {
		return fmt.Errorf("proxy.listen %s: %w", p.cfg.Proxy.Listen, err)
	}
	return p.ServeListener(ctx, ln)
}

// ServeListener serves on an existing listener (tests use port 0).
func (p *Proxy) ServeListener(ctx context.Context, ln net.Listener) error {
	p.ln = ln
	close(p.ready)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if p.galera.monitor != nil {
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			p.galera.monitor.Run(ctx)
		}()
	} else {
		for name := range *p.pools.Load() {
			p.wg.Add(1)
			go func() {
				defer p.wg.Done()
				p.healthLoop(ctx, name)
			}()
		}
	}
	p.greetBy = time.Now().Add(p.cfg.Pool.ConnectTimeout.D())
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		memtrim.Run(ctx, 5*time.Second, func(n int64) {
			p.log.Debug("returned memory to the system after large packets", "dropped_bytes", n)
		})
	}()
	if p.cfg.Proxy.Site == topology.AutoSite {
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			p.learnHomeSite(ctx)
		}()
	}
	p.wg.Add(3)
	go func() {
		defer p.wg.Done()
		p.fenceLoop(ctx)
	}()
	go func() {
		defer p.wg.Done()
		p.localTablesLoop(ctx)
	}()
	go func() {
		defer p.wg.Done()
		p.learnGreeting(ctx)
	}()
	go func() {
		<-ctx.Done()
		ln.Close()
		p.mu.Lock()
		for s := range p.sessions {
			s.nc.Close()
		}
		p.mu.Unlock()
	}()
	var tempDelay time.Duration
	for {
		nc, err := ln.Accept()
		if err != nil {
			if ctx.Err() != nil {
				break
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				tempDelay = min(max(2*tempDelay, 5*time.Millisecond), time.Second)
				time.Sleep(tempDelay)
				continue
			}
			// EMFILE and friends: back off instead of spinning.
			p.log.Warn("accept", "err", err)
			time.Sleep(50 * time.Millisecond)
			continue
		}
		tempDelay = 0
		if p.clients.Load() >= int64(p.cfg.Proxy.MaxClients) {
			p.refuse(nc)
			continue
		}
		s := newSession(p, nc)
		p.mu.Lock()
		p.sessions[s] = struct{}{}
		p.mu.Unlock()
		p.clients.Add(1)
		p.clientsTotal.Add(1)
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			s.run()
			p.clients.Add(-1)
			p.mu.Lock()
			delete(p.sessions, s)
			p.mu.Unlock()
		}()
	}
	p.wg.Wait()
	for _, pool := range *p.pools.Load() {
		pool.CloseIdle(true)
	}
	return nil
}

// setPlainHealth publishes that a health check found name up, without
// undoing an operator drain: the drain is read inside the view's lock,
// after Drain recorded it and before or after its own update, so
// whichever lands last leaves the node drained (a check that set it
// ONLINE every interval used to undo a drain within 200 ms, and a
// write waiting for a writer then went to the drained node).
func (p *Proxy) setPlainHealth(name string) bool {
	return p.view.SetState(name, func(s *topology.Server) {
		drained := p.OperatorDrained(name)
		s.Online, s.Draining, s.Reason = !drained, drained, ""
		if drained {
			s.Reason = "operator drain"
		}
	})
}

// healthLoop pings the node every health interval (and at once when a
// data connection reports a failure) and publishes up/down changes.
func (p *Proxy) healthLoop(ctx context.Context, name string) {
	pool := p.pool(name)
	interval := p.cfg.Pool.HealthInterval.D()
	t := time.NewTicker(interval)
	defer t.Stop()
	var conn *backend.Conn
	// quit says goodbye (COM_QUIT) within a short deadline, then closes.
	quit := func(c *backend.Conn) {
		c.SetDeadline(time.Now().Add(100 * time.Millisecond))
		c.Quit()
	}
	defer func() {
		if conn != nil {
			quit(conn)
		}
	}()
	prof := p.anyBackendProfile()
	timeout := p.cfg.Pool.ConnectTimeout.D()
	answeredLate := false // the last check's answer was read after its deadline
	// once is one check (a dial when needed, then a ping, each within
	// the timeout): how late past the failed step's deadline the proxy
	// noticed its error (judgePing), and the error.
	once := func() (late time.Duration, err error) {
		answeredLate = false
		deadline := time.Now().Add(timeout)
		if conn == nil {
			conn, err = backend.Dial(ctx, pool.Server().Addr, prof, timeout)
			late = time.Since(deadline)
		}
		if err == nil {
			deadline = time.Now().Add(timeout)
			conn.SetDeadline(deadline)
			err = conn.Ping()
			late = time.Since(deadline)
			conn.SetDeadline(time.Time{})
			if isTimeout(err) && conn.Unread() {
				// The answer is there: the node answered, and the proxy
				// did not run in time to see it before the deadline. It
				// is read all the same: an error is the node's answer.
				conn.SetDeadline(time.Now().Add(stallSlack(timeout)))
				if err = conn.ReadAnswer(); err == nil {
					p.log.Info("health check: the node's answer arrived, noticed after the deadline; not a miss", "server", name, "late", late.Round(time.Millisecond))
					answeredLate = true
				}
				conn.SetDeadline(time.Time{})
			}
		}
		if err != nil && conn != nil {
			quit(conn) // the node reads a goodbye when it runs again, not an aborted connection
			conn = nil
		}
		return late, err
	}
	check := func() {
		start := time.Now()
		c := pingCheck{timeout: timeout, maxMissed: p.cfg.Pool.MaxMissedChecks}
		c.late, c.err = once()
	judge:
		for ctx.Err() == nil {
			switch judgePing(c) {
			case pingAgain:
				c.lateBefore++
				p.log.Info("health check noticed late, checking again", "server", name, "late", c.late.Round(time.Millisecond), "err", c.err)
			case pingMissed:
				c.missedBefore++
				p.log.Info("health check missed, checking again", "server", name, "missed", c.missedBefore, "max_missed_checks", c.maxMissed, "err", c.err)
			default:
				break judge
			}
			start = time.Now()
			c.late, c.err = once()
		}
		err := c.err
		if ctx.Err() != nil {
			return // shutting down: a cancelled check says nothing of the node
		}
		if err != nil {
			if p.view.SetHealth(name, false, "unreachable: "+err.Error()) {
				p.log.Warn("backend offline", "server", name, "err", err)
				p.reconsider()
			}
			pool.CloseIdle(true)
			return
		}
		if !answeredLate { // else the round trip is not known, only that it ended before the proxy looked
			pool.SetLatency(time.Since(start))
		}
		if p.setPlainHealth(name) {
			p.log.Info("backend online", "server", name)
			p.reconsider()
		}
	}
	check()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			pool.CloseIdle(false)
		case <-p.checkNow[name]:
		}
		check()
	}
}

// suspect asks for an immediate health check of a node after a data
// connection failed on it.
func (p *Proxy) suspect(name string) {
	if p.galera.monitor != nil {
		p.galera.monitor.Check(name)
		return
	}
	select {
	case p.checkNow[name] <- struct{}{}:
	default:
	}
}
