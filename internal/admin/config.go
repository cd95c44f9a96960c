package admin

import (
	"crypto/tls"
	"log/slog"
	"time"
)

// Config configures the admin endpoints.
type Config struct {
	// SQLListen is the MySQL-protocol address; default 127.0.0.1:6032
	// (ProxySQL's admin port, which operators already know).
	SQLListen string
	// HTTPListen is the address for /metrics and /api; default
	// 127.0.0.1:6080.
	HTTPListen string
	// User and Password are the admin account, for SQL logins and HTTP
	// basic auth on /api/*. User defaults to "admin"; an empty Password
	// means no password, acceptable only on a loopback address.
	User     string
	Password string
	// TLS, if set, is offered to SQL clients (they may still connect
	// without it) and served on the HTTP endpoint, which then speaks
	// HTTPS only: basic auth must not cross the network in clear text if
	// the operator went to the trouble of configuring certificates.
	TLS *tls.Config
	// Logger receives connection errors, failed logins and an audit line
	// for every change; default slog.Default().
	Logger *slog.Logger
}

// Defaults.
const (
	DefaultSQLListen  = "127.0.0.1:6032"
	DefaultHTTPListen = "127.0.0.1:6080"
	DefaultUser       = "admin"
)

// Limits of the SQL endpoint.
const (
	// maxPacketSize bounds a client packet. Admin statements are short;
	// a larger packet is a mistake or an attack, and is refused with
	// ER_NET_PACKET_TOO_LARGE before it is buffered.
	maxPacketSize = 1 << 20
	// handshakeTimeout bounds the connection phase, so clients that
	// connect and say nothing do not hold goroutines.
	handshakeTimeout = 10 * time.Second
	// serverVersion is what clients show as the server version. The
	// 8.0 prefix keeps MySQL clients on their modern code paths.
	serverVersion = "8.0.36-galeon-admin"
)

func (c Config) withDefaults() Config {
	if c.SQLListen == "" {
		c.SQLListen = DefaultSQLListen
	}
	if c.HTTPListen == "" {
		c.HTTPListen = DefaultHTTPListen
	}
	if c.User == "" {
		c.User = DefaultUser
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return c
}
