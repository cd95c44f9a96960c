package proxy

import (
	"context"
	"time"

	"github.com/galeon-db/galeon/internal/backend"
	"github.com/galeon-db/galeon/internal/mysqlproto"
)

// Drivers decide a lot from the server greeting: MySQL Connector/J and
// Connector/Python treat a version >= 8.0 as MySQL 8 (and then ask for
// @@transaction_isolation or send collation utf8mb4_0900_ai_ci, which
// MariaDB does not know), MariaDB Connector/J batches with
// COM_STMT_BULK_EXECUTE only when the MariaDB extended capabilities are
// offered. So galeon greets clients with its nodes' own version string,
// capabilities and collation, minus only what it cannot relay.

// relayCaps are the capabilities galeon can carry between a client and a
// node. Not in it: CLIENT_SSL and CLIENT_COMPRESS (galeon terminates both
// itself and adds them by configuration), CLIENT_QUERY_ATTRIBUTES and
// CLIENT_OPTIONAL_RESULTSET_METADATA (MySQL 8 wire variants galeon does
// not parse), and of MariaDB's: progress reports (interleaved pseudo-error
// packets), COM_MULTI, and metadata caching (a statement moves between
// backend connections, whose cached metadata differ from the client's).
const relayCaps = mysqlproto.DefaultServerCapabilities | mysqlproto.ClientLocalFiles |
	mysqlproto.MariaDBClientStmtBulkOperations | mysqlproto.MariaDBClientExtendedMetadata |
	mysqlproto.MariaDBClientBulkUnitResults

// insistCaps are capabilities a client must not ask for unless galeon
// offered them: they change the byte stream from the next packet on, so
// masking them silently would leave client and proxy out of step.
const insistCaps = mysqlproto.ClientCompress | mysqlproto.ClientZstdCompressionAlgorithm | mysqlproto.ClientSSL

// fallbackGreeting stands in for the nodes' greeting until galeon has
// reached one: MariaDB 10.11's.
var fallbackGreeting = mysqlproto.Handshake{
	ServerVersion: "5.5.5-10.11.0-MariaDB-galeon",
	Capabilities:  relayCaps &^ mysqlproto.ClientMySQL,
	Charset:       45, // utf8mb4_general_ci
}

// nodeGreeting is the greeting of the writer's node if galeon has seen
// one, else of any node, else the fallback.
func (p *Proxy) nodeGreeting() *mysqlproto.Handshake {
	snap := p.view.Load()
	if w, ok := snap.Writer(); ok {
		if g := p.pool(w.Name).Greeting(); g != nil {
			return g
		}
	}
	for _, s := range snap.Servers {
		if g := p.pool(s.Name).Greeting(); g != nil {
			return g
		}
	}
	if g := p.learned.Load(); g != nil {
		return g
	}
	return &fallbackGreeting
}

// frontGreeting is what a new client is greeted with. Clients that
// arrive right after start wait for learnGreeting to reach a node, but
// never past one connect timeout after start: with every node down,
// clients are greeted at once (with the fallback) rather than each
// waiting.
func (p *Proxy) frontGreeting() (version string, caps mysqlproto.Capability, charset byte) {
	select {
	case <-p.greeted:
	default:
		if wait := time.Until(p.greetBy); wait > 0 {
			t := time.NewTimer(wait)
			select {
			case <-p.greeted:
			case <-t.C:
			}
			t.Stop()
		}
	}
	g := p.nodeGreeting()
	caps = presentedCaps(g.Capabilities, p.cfg.Proxy.Compression, p.tls != nil)
	version = g.ServerVersion
	if p.cfg.Proxy.ServerVersion != "" {
		version = p.cfg.Proxy.ServerVersion
	}
	return version, caps, g.Charset
}

// presentedCaps derives the capabilities galeon offers from a node's: what
// it can relay, in the node's style (MariaDB's extended capabilities or
// MySQL's CLIENT_MYSQL), plus compression and TLS, which galeon
// terminates itself.
func presentedCaps(node mysqlproto.Capability, compress, tls bool) mysqlproto.Capability {
	caps := node & relayCaps
	if node&mysqlproto.ClientMySQL == 0 {
		caps &^= mysqlproto.ClientMySQL // MariaDB style: extended capabilities follow
	} else {
		caps |= mysqlproto.ClientMySQL
		caps &= 1<<32 - 1
	}
	if compress {
		caps |= mysqlproto.ClientCompress
	}
	if tls {
		caps |= mysqlproto.ClientSSL
	}
	return caps
}

// learnGreeting logs into the nodes once at start until one answers, so
// that the first clients already get the nodes' greeting. Pools record
// every later greeting themselves.
func (p *Proxy) learnGreeting(ctx context.Context) {
	prof := p.anyBackendProfile()
	defer close(p.greeted)
	for delay := 100 * time.Millisecond; ; delay = min(2*delay, 5*time.Second) {
		for _, s := range p.view.Load().Servers {
			if p.pool(s.Name).Greeting() != nil {
				return
			}
			c, err := backend.Dial(ctx, s.Addr, prof, p.cfg.Pool.ConnectTimeout.D())
			if err == nil {
				p.learned.Store(c.Greeting())
				c.Quit()
				return
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(delay):
		}
	}
}

// unofferedMessage explains the refusal of a capability galeon did not
// offer, with what to do about it.
func unofferedMessage(extra mysqlproto.Capability) string {
	switch {
	case extra&mysqlproto.ClientZstdCompressionAlgorithm != 0:
		return "galeon offers zlib compression only (the nodes do not offer zstd): connect with compression algorithm zlib, or without compression"
	case extra&mysqlproto.ClientCompress != 0:
		return "compression is turned off on this galeon (proxy.compression = false): connect without compression"
	default:
		return "TLS is not configured on this galeon (proxy.tls_cert): connect without TLS or ask the operator to configure it"
	}
}
