package mysqlproto

import (
	"crypto/rsa"
	"errors"
	"fmt"
)

// ClientConfig describes how the proxy logs into a backend.
type ClientConfig struct {
	User     string
	Password string
	Database string // optional initial schema

	// Capabilities the proxy wants; zero means DefaultClientCapabilities.
	// The result is intersected with the server's flags. ClientSSL,
	// ClientConnectWithDB and ClientConnectAttrs are derived from TLS,
	// Database and ConnectAttrs instead.
	Capabilities  Capability
	Charset       byte   // collation id; zero means the server's default
	MaxPacketSize uint32 // zero means DefaultMaxPacketSize
	ConnectAttrs  map[string]string

	// TLS says the caller upgrades the connection to TLS after sending
	// SSLRequest. It also makes clear-text password exchanges acceptable.
	TLS bool
	// ServerPublicKey, if set, is used for caching_sha2_password full
	// authentication without TLS.
	ServerPublicKey *rsa.PublicKey
	// AllowPublicKeyRetrieval lets the client ask the server for its RSA
	// key when full authentication is needed without TLS. It is open to a
	// man in the middle substituting its own key; prefer TLS or a pinned
	// ServerPublicKey.
	AllowPublicKeyRetrieval bool
	// AllowCleartextPassword permits mysql_clear_password without TLS.
	AllowCleartextPassword bool
	// Compress asks for the compressed protocol (CLIENT_COMPRESS) when the
	// server offers it; the caller starts it after authentication when
	// Capabilities() has ClientCompress.
	Compress bool
}

type clientAuthState uint8

const (
	clientAwaitResult clientAuthState = iota
	clientAwaitPublicKey
	clientDone
)

// ClientAuth runs the client side of the connection phase against a MySQL
// or MariaDB server: it negotiates capabilities, builds the handshake
// response and answers AuthSwitchRequest and AuthMoreData packets for
// mysql_native_password, caching_sha2_password (fast and full
// authentication, over TLS or RSA) and mysql_clear_password.
//
// It does no I/O itself (Run is a convenience loop), so it works the same
// before and after a TLS upgrade. The usual sequence is:
//
//	hs, err := ParseHandshake(first packet)
//	a, err := NewClientAuth(cfg, hs)
//	if cfg.TLS {
//		conn.WritePacket(a.SSLRequest(nil))
//		conn.StartTLSClient(netConn, tlsConfig)
//	}
//	err = a.Run(conn)
type ClientAuth struct {
	cfg      ClientConfig
	caps     Capability
	plugin   string
	scramble []byte
	state    clientAuthState
	status   StatusFlag
}

// NewClientAuth negotiates capabilities with the server described by hs.
func NewClientAuth(cfg *ClientConfig, hs *Handshake) (*ClientAuth, error) {
	want := cfg.Capabilities
	if want == 0 {
		want = DefaultClientCapabilities
	}
	want &^= ClientSSL | ClientConnectWithDB | ClientConnectAttrs | ClientCompress
	if cfg.Database != "" {
		want |= ClientConnectWithDB
	}
	if len(cfg.ConnectAttrs) > 0 {
		want |= ClientConnectAttrs
	}
	if cfg.TLS {
		want |= ClientSSL
	}
	if cfg.Compress {
		want |= ClientCompress
	}
	caps := want & hs.Capabilities
	switch {
	case caps&ClientProtocol41 == 0:
		return nil, fmt.Errorf("%w: server does not speak protocol 4.1", ErrUnsupported)
	case caps&ClientSecureConnection == 0:
		return nil, fmt.Errorf("%w: server does not support secure authentication", ErrUnsupported)
	case cfg.TLS && caps&ClientSSL == 0:
		return nil, errors.New("mysqlproto: server does not support TLS")
	case cfg.Database != "" && caps&ClientConnectWithDB == 0:
		return nil, fmt.Errorf("%w: server cannot select a database at login", ErrUnsupported)
	}
	a := &ClientAuth{cfg: *cfg, caps: caps, scramble: TrimScramble(hs.AuthData)}
	if a.cfg.Charset == 0 {
		a.cfg.Charset = hs.Charset
	}
	if a.cfg.MaxPacketSize == 0 {
		a.cfg.MaxPacketSize = DefaultMaxPacketSize
	}
	a.plugin = hs.AuthPlugin
	if caps&ClientPluginAuth == 0 || !clientPluginSupported(a.plugin) {
		// Answer with a native scramble; a server that wants another
		// plugin will send an AuthSwitchRequest.
		a.plugin = NativePasswordPlugin
	}
	return a, nil
}

func clientPluginSupported(name string) bool {
	switch name {
	case NativePasswordPlugin, CachingSHA2PasswordPlugin, ClearPasswordPlugin:
		return true
	}
	return false
}

// Capabilities returns the negotiated capability flags: what this
// connection and the response framing must assume.
func (a *ClientAuth) Capabilities() Capability { return a.caps }

// Status returns the server status from the final OK packet.
func (a *ClientAuth) Status() StatusFlag { return a.status }

// SSLRequest appends the SSLRequest to send before upgrading to TLS.
func (a *ClientAuth) SSLRequest(dst []byte) []byte {
	return AppendSSLRequest(dst, SSLRequest{a.caps, a.cfg.MaxPacketSize, a.cfg.Charset})
}

// HandshakeResponse appends the HandshakeResponse41 with the first auth
// response for the server's plugin.
func (a *ClientAuth) HandshakeResponse(dst []byte) ([]byte, error) {
	auth, err := a.authResponse()
	if err != nil {
		return dst, err
	}
	r := &HandshakeResponse{
		Capabilities:  a.caps,
		MaxPacketSize: a.cfg.MaxPacketSize,
		Charset:       a.cfg.Charset,
		Username:      a.cfg.User,
		AuthResponse:  auth,
		Database:      a.cfg.Database,
		AuthPlugin:    a.plugin,
		ConnectAttrs:  a.cfg.ConnectAttrs,
	}
	return AppendHandshakeResponse(dst, r)
}

func (a *ClientAuth) authResponse() ([]byte, error) {
	switch a.plugin {
	case NativePasswordPlugin:
		return ScrambleNativePassword(a.cfg.Password, a.scramble), nil
	case CachingSHA2PasswordPlugin:
		return ScrambleCachingSHA2Password(a.cfg.Password, a.scramble), nil
	case ClearPasswordPlugin:
		if !a.cfg.TLS && !a.cfg.AllowCleartextPassword {
			return nil, errors.New("mysqlproto: server asks for mysql_clear_password on a connection without TLS")
		}
		return append([]byte(a.cfg.Password), 0), nil
	}
	return nil, fmt.Errorf("%w: authentication plugin %q", ErrUnsupported, a.plugin)
}

// Next consumes one packet from the server. A non-nil reply (which may be
// empty: an empty packet is a valid auth response) must be sent, in a new
// packet continuing the sequence, before reading the next one. done is
// true once the server accepted the login with an OK packet. If the server
// rejects it, err is the server's *SQLError.
func (a *ClientAuth) Next(payload []byte) (reply []byte, done bool, err error) {
	if len(payload) == 0 {
		return nil, false, malformed("empty auth packet")
	}
	if a.state == clientDone {
		return nil, false, errors.New("mysqlproto: authentication already finished")
	}
	switch payload[0] {
	case HeaderOK:
		ok, err := ParseOK(payload, a.caps)
		if err != nil {
			return nil, false, err
		}
		a.status = ok.Status
		a.state = clientDone
		return nil, true, nil
	case HeaderErr:
		e, err := ParseErr(payload)
		if err != nil {
			return nil, false, err
		}
		a.state = clientDone
		return nil, false, e
	case HeaderEOF:
		plugin, data, err := ParseAuthSwitchRequest(payload)
		if err != nil {
			return nil, false, err
		}
		if !clientPluginSupported(plugin) {
			return nil, false, fmt.Errorf("%w: authentication plugin %q", ErrUnsupported, plugin)
		}
		a.plugin = plugin
		a.scramble = append([]byte(nil), TrimScramble(data)...)
		a.state = clientAwaitResult
		resp, err := a.authResponse()
		if err != nil {
			return nil, false, err
		}
		return nonNil(resp), false, nil
	case HeaderAuthMore:
		return a.moreData(payload[1:])
	}
	return nil, false, malformed("unexpected packet during authentication")
}

func (a *ClientAuth) moreData(data []byte) ([]byte, bool, error) {
	if a.plugin != CachingSHA2PasswordPlugin {
		return nil, false, malformed("auth more data for " + a.plugin)
	}
	if a.state == clientAwaitPublicKey {
		pub, err := ParsePublicKeyPEM(data)
		if err != nil {
			return nil, false, err
		}
		a.state = clientAwaitResult
		ct, err := EncryptPassword(a.cfg.Password, a.scramble, pub)
		return ct, false, err
	}
	if len(data) != 1 {
		return nil, false, malformed("caching_sha2_password status")
	}
	switch data[0] {
	case CachingSHA2FastAuthSuccess:
		return nil, false, nil // an OK packet follows
	case CachingSHA2PerformFullAuth:
		switch {
		case a.cfg.TLS:
			return append([]byte(a.cfg.Password), 0), false, nil
		case a.cfg.ServerPublicKey != nil:
			ct, err := EncryptPassword(a.cfg.Password, a.scramble, a.cfg.ServerPublicKey)
			return ct, false, err
		case a.cfg.AllowPublicKeyRetrieval:
			a.state = clientAwaitPublicKey
			return []byte{CachingSHA2RequestPublicKey}, false, nil
		}
		return nil, false, errors.New("mysqlproto: caching_sha2_password full authentication needs TLS or the server's RSA public key")
	}
	return nil, false, malformed("caching_sha2_password status")
}

// Run sends the handshake response and answers the server until it
// accepts or rejects the login. Call it after reading the Handshake and,
// with cfg.TLS, after the TLS upgrade.
func (a *ClientAuth) Run(c *Conn) error {
	resp, err := a.HandshakeResponse(nil)
	if err != nil {
		return err
	}
	for {
		if err := c.WritePacket(resp); err != nil {
			return err
		}
		if err := c.Flush(); err != nil {
			return err
		}
		for {
			pkt, err := c.ReadPacket()
			if err != nil {
				return err
			}
			reply, done, err := a.Next(pkt)
			if err != nil || done {
				return err
			}
			if reply != nil {
				resp = reply
				break
			}
		}
	}
}

func nonNil(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}
