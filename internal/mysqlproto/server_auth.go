package mysqlproto

import (
	"bytes"
	"crypto/rsa"
	"crypto/subtle"
	"errors"
)

// Credential is what the proxy knows about an account's password. It holds
// hashes, never the password: SHA1(SHA1(pw)) verifies
// mysql_native_password, SHA256(SHA256(pw)) verifies caching_sha2_password
// fast authentication, and either verifies a clear-text password received
// during full authentication.
type Credential struct {
	// NoPassword marks an account without a password. The zero Credential
	// matches nothing, so a missing entry can never let anyone in.
	NoPassword bool
	NativeHash []byte // SHA1(SHA1(password)), see NativePasswordHash
	SHA2Hash   []byte // SHA256(SHA256(password)), see CachingSHA2Hash
}

// NewCredential derives both hashes from a clear-text password.
func NewCredential(password string) Credential {
	if password == "" {
		return Credential{NoPassword: true}
	}
	return Credential{NativeHash: NativePasswordHash(password), SHA2Hash: CachingSHA2Hash(password)}
}

// ServerAuthConfig configures the server side of authentication for one
// client connection, once the proxy has looked up the account named in the
// handshake response.
type ServerAuthConfig struct {
	// Plugin is the account's plugin: NativePasswordPlugin,
	// CachingSHA2PasswordPlugin (the default when empty) or
	// ClearPasswordPlugin. Clients that answered with another plugin are
	// switched to it.
	Plugin     string
	Credential Credential
	// Secure is true on TLS (or Unix socket) connections, where clients
	// may send passwords in clear text.
	Secure bool
	// PrivateKey enables caching_sha2_password full authentication without
	// TLS: clients fetch its public key and send the RSA-encrypted password.
	PrivateKey *rsa.PrivateKey
	// ForceFullAuth makes caching_sha2_password skip fast authentication,
	// as MySQL does on a cache miss. The proxy then learns the clear-text
	// password (see ServerAuth.Password), e.g. to log into backends.
	ForceFullAuth bool
	// ClientHost appears in "Access denied for user 'u'@'host'".
	ClientHost string
}

type serverAuthState uint8

const (
	serverStart serverAuthState = iota
	serverAwaitSwitch
	serverAwaitFullAuth
	serverDone
)

// ServerAuth runs the server side of authentication after the client's
// HandshakeResponse41 has been read. If the client's first packet is an
// SSLRequest (IsSSLRequest), call Conn.StartTLSServer, read the handshake
// response over TLS and set ServerAuthConfig.Secure. Like ClientAuth it
// does no I/O of its own.
//
// Start and Next return a reply to send (if non-nil) and done when the
// exchange is over. On success (done, nil error) the caller sends its OK
// packet; on failure err is usually an *SQLError (ER_ACCESS_DENIED_ERROR)
// to send as an ERR packet.
type ServerAuth struct {
	cfg          ServerAuthConfig
	scramble     []byte
	user         string
	usedPassword bool
	state        serverAuthState
	sentKey      bool
	password     []byte
}

// NewServerAuth prepares to verify a client that was sent scramble in the
// initial handshake.
func NewServerAuth(scramble []byte, cfg ServerAuthConfig) *ServerAuth {
	if cfg.Plugin == "" {
		cfg.Plugin = CachingSHA2PasswordPlugin
	}
	return &ServerAuth{cfg: cfg, scramble: TrimScramble(scramble)}
}

// Password returns the client's clear-text password if the exchange
// revealed it (caching_sha2_password full authentication,
// mysql_clear_password) and it was correct.
func (s *ServerAuth) Password() ([]byte, bool) { return s.password, s.password != nil }

// Start checks the auth response in the client's handshake response, or
// switches the client to the account's plugin.
func (s *ServerAuth) Start(resp *HandshakeResponse) (reply []byte, done bool, err error) {
	if s.state != serverStart {
		return nil, false, errors.New("mysqlproto: authentication already started")
	}
	s.user = resp.Username
	clientPlugin := resp.AuthPlugin
	if resp.Capabilities&ClientPluginAuth == 0 {
		clientPlugin = NativePasswordPlugin
	}
	if clientPlugin == s.cfg.Plugin {
		return s.check(resp.AuthResponse)
	}
	if resp.Capabilities&ClientPluginAuth == 0 {
		// The client cannot switch plugins.
		s.usedPassword = len(resp.AuthResponse) > 0
		return s.deny()
	}
	s.state = serverAwaitSwitch
	data := append(append([]byte(nil), s.scramble...), 0)
	return AppendAuthSwitchRequest(nil, s.cfg.Plugin, data), false, nil
}

// Next consumes the client's next packet of the exchange.
func (s *ServerAuth) Next(payload []byte) (reply []byte, done bool, err error) {
	switch s.state {
	case serverAwaitSwitch:
		return s.check(payload)
	case serverAwaitFullAuth:
		return s.fullAuth(payload)
	}
	return nil, false, errors.New("mysqlproto: unexpected packet during authentication")
}

func (s *ServerAuth) check(data []byte) ([]byte, bool, error) {
	s.state = serverDone
	cred := &s.cfg.Credential
	switch s.cfg.Plugin {
	case NativePasswordPlugin:
		if len(data) == 0 {
			return s.result(cred.NoPassword)
		}
		s.usedPassword = true
		return s.result(!cred.NoPassword && VerifyNativePassword(s.scramble, data, cred.NativeHash))
	case CachingSHA2PasswordPlugin:
		if len(data) == 0 || (len(data) == 1 && data[0] == 0) {
			return s.result(cred.NoPassword)
		}
		s.usedPassword = true
		if cred.NoPassword {
			return s.deny()
		}
		if cred.SHA2Hash != nil && !s.cfg.ForceFullAuth {
			if !VerifyCachingSHA2Password(s.scramble, data, cred.SHA2Hash) {
				return s.deny()
			}
			return []byte{HeaderAuthMore, CachingSHA2FastAuthSuccess}, true, nil
		}
		s.state = serverAwaitFullAuth
		return []byte{HeaderAuthMore, CachingSHA2PerformFullAuth}, false, nil
	case ClearPasswordPlugin:
		return s.checkCleartext(bytes.TrimSuffix(data, []byte{0}))
	}
	return nil, false, NewSQLError(CrAuthPluginCannotLoadError, "Plugin '%s' is not supported", s.cfg.Plugin)
}

func (s *ServerAuth) fullAuth(payload []byte) ([]byte, bool, error) {
	key := s.cfg.PrivateKey
	if len(payload) == 1 && payload[0] == CachingSHA2RequestPublicKey && !s.cfg.Secure {
		if key == nil || s.sentKey {
			s.state = serverDone
			return s.deny()
		}
		pemKey, err := MarshalPublicKeyPEM(&key.PublicKey)
		if err != nil {
			return nil, false, err
		}
		s.sentKey = true
		return AppendAuthMoreData(nil, pemKey), false, nil
	}
	s.state = serverDone
	if s.cfg.Secure {
		return s.checkCleartext(bytes.TrimSuffix(payload, []byte{0}))
	}
	if key == nil {
		return s.deny()
	}
	pw, err := DecryptPassword(payload, s.scramble, key)
	if err != nil {
		return s.deny()
	}
	return s.checkCleartext(pw)
}

func (s *ServerAuth) checkCleartext(pw []byte) ([]byte, bool, error) {
	s.state = serverDone
	s.usedPassword = len(pw) > 0
	cred := &s.cfg.Credential
	var ok bool
	switch {
	case cred.NoPassword:
		ok = len(pw) == 0
	case cred.SHA2Hash != nil:
		ok = subtle.ConstantTimeCompare(CachingSHA2Hash(string(pw)), cred.SHA2Hash) == 1
	case cred.NativeHash != nil:
		ok = subtle.ConstantTimeCompare(NativePasswordHash(string(pw)), cred.NativeHash) == 1
	}
	if ok {
		s.password = append([]byte{}, pw...)
	}
	return s.result(ok)
}

func (s *ServerAuth) result(ok bool) ([]byte, bool, error) {
	if ok {
		return nil, true, nil
	}
	return s.deny()
}

func (s *ServerAuth) deny() ([]byte, bool, error) {
	s.state = serverDone
	using := "NO"
	if s.usedPassword {
		using = "YES"
	}
	return nil, true, NewSQLError(ErAccessDeniedError, "Access denied for user '%s'@'%s' (using password: %s)",
		s.user, s.cfg.ClientHost, using)
}

// Run drives the exchange over c: it sends replies and reads client
// packets until authentication succeeds or fails. It does not send the
// final OK or ERR; the caller does, with its own status flags.
func (s *ServerAuth) Run(c *Conn, resp *HandshakeResponse) error {
	reply, done, err := s.Start(resp)
	for {
		if reply != nil {
			if werr := c.WritePacket(reply); werr != nil {
				return werr
			}
			if !done {
				if werr := c.Flush(); werr != nil {
					return werr
				}
			}
		}
		if err != nil || done {
			return err
		}
		pkt, rerr := c.ReadPacket()
		if rerr != nil {
			return rerr
		}
		reply, done, err = s.Next(pkt)
	}
}
