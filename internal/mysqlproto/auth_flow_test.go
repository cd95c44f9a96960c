package mysqlproto

import (
	"bufio"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"math/big"
	"net"
	"sync"
	"testing"
	"time"
)

var (
	tlsOnce sync.Once
	tlsCert tls.Certificate
)

func testCert(t testing.TB) tls.Certificate {
	tlsOnce.Do(func() {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			panic(err)
		}
		tmpl := &x509.Certificate{
			SerialNumber: big.NewInt(1),
			NotBefore:    time.Now().Add(-time.Hour),
			NotAfter:     time.Now().Add(time.Hour),
			DNSNames:     []string{"galeon.test"},
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
		if err != nil {
			panic(err)
		}
		tlsCert = tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
	})
	return tlsCert
}

type authResult struct {
	clientErr, serverErr error
	server               *ServerAuth
	resp                 *HandshakeResponse
	client               *ClientAuth
}

// runAuth plays a whole connection phase between ClientAuth and ServerAuth
// over an in-memory connection, upgrading to real TLS if the client asks.
func runAuth(t *testing.T, hsPlugin string, scfg ServerAuthConfig, ccfg ClientConfig) authResult {
	t.Helper()
	return runAuthOpts(t, hsPlugin, scfg, ccfg, false)
}

// coalescingConn holds back the first write (the SSLRequest flushed by
// StartTLSClient) and sends it together with the next one (the TLS
// ClientHello), so the server reads both at once.
type coalescingConn struct {
	net.Conn
	hold    bool
	pending []byte
}

func (c *coalescingConn) Write(b []byte) (int, error) {
	if c.hold {
		c.hold = false
		c.pending = append([]byte(nil), b...)
		return len(b), nil
	}
	if c.pending != nil {
		all := append(c.pending, b...)
		c.pending = nil
		if _, err := c.Conn.Write(all); err != nil {
			return 0, err
		}
		return len(b), nil
	}
	return c.Conn.Write(b)
}

func runAuthOpts(t *testing.T, hsPlugin string, scfg ServerAuthConfig, ccfg ClientConfig, eagerClientHello bool) authResult {
	t.Helper()
	sConn, cConn := net.Pipe()
	deadline := time.Now().Add(10 * time.Second)
	_ = sConn.SetDeadline(deadline)
	_ = cConn.SetDeadline(deadline)
	var res authResult
	var wg sync.WaitGroup
	wg.Add(2)

	go func() { // server
		defer wg.Done()
		defer sConn.Close()
		res.serverErr = func() error {
			c := NewConn(bufio.NewReader(sConn), bufio.NewWriter(sConn), 0)
			scramble, err := NewScramble()
			if err != nil {
				return err
			}
			hs := &Handshake{ServerVersion: "8.0.36-galeon", ConnectionID: 9, AuthData: scramble,
				Capabilities: DefaultServerCapabilities | ClientSSL, Charset: 255,
				Status: ServerStatusAutocommit, AuthPlugin: hsPlugin}
			if err := c.WritePacket(AppendHandshake(nil, hs)); err != nil {
				return err
			}
			if err := c.Flush(); err != nil {
				return err
			}
			pkt, err := c.ReadPacket()
			if err != nil {
				return err
			}
			if IsSSLRequest(pkt) {
				if _, err := c.StartTLSServer(sConn, &tls.Config{Certificates: []tls.Certificate{testCert(t)}}); err != nil {
					return err
				}
				scfg.Secure = true
				if pkt, err = c.ReadPacket(); err != nil {
					return err
				}
			}
			resp, err := ParseHandshakeResponse(pkt)
			if err != nil {
				return err
			}
			res.resp = resp
			res.server = NewServerAuth(scramble, scfg)
			authErr := res.server.Run(c, resp)
			var se *SQLError
			switch {
			case authErr == nil:
				_ = c.WriteOK(&OKPacket{Status: ServerStatusAutocommit}, resp.Capabilities)
			case errors.As(authErr, &se):
				_ = c.WriteErr(se, resp.Capabilities)
			default:
				return authErr
			}
			_ = c.Flush()
			return authErr
		}()
	}()

	go func() { // client
		defer wg.Done()
		defer cConn.Close()
		res.clientErr = func() error {
			c := NewConn(bufio.NewReader(cConn), bufio.NewWriter(cConn), 0)
			pkt, err := c.ReadPacket()
			if err != nil {
				return err
			}
			hs, err := ParseHandshake(pkt)
			if err != nil {
				return err
			}
			a, err := NewClientAuth(&ccfg, hs)
			if err != nil {
				return err
			}
			res.client = a
			if ccfg.TLS {
				nc := net.Conn(cConn)
				if eagerClientHello {
					// The SSLRequest (flushed by StartTLSClient) and
					// the ClientHello reach the server in one write.
					nc = &coalescingConn{Conn: cConn, hold: true}
					c.SetWriter(bufio.NewWriter(nc))
				}
				if err := c.WritePacket(a.SSLRequest(nil)); err != nil {
					return err
				}
				if _, err := c.StartTLSClient(nc, &tls.Config{ServerName: "galeon.test", InsecureSkipVerify: true}); err != nil {
					return err
				}
			}
			return a.Run(c)
		}()
	}()
	wg.Wait()
	return res
}

// TestTLSUpgradeWithBufferedClientHello: the server has read the
// SSLRequest and the start of the ClientHello in one go; StartTLSServer
// must hand those buffered bytes to crypto/tls.
func TestTLSUpgradeWithBufferedClientHello(t *testing.T) {
	res := runAuthOpts(t, CachingSHA2PasswordPlugin,
		ServerAuthConfig{Credential: NewCredential("secret"), ForceFullAuth: true},
		ClientConfig{User: "app", Password: "secret", TLS: true}, true)
	if res.clientErr != nil || res.serverErr != nil {
		t.Fatalf("client err = %v, server err = %v", res.clientErr, res.serverErr)
	}
	if pw, ok := res.server.Password(); !ok || string(pw) != "secret" {
		t.Fatal("password not received over TLS")
	}
}

func sqlCode(err error) ErrorCode {
	var se *SQLError
	if errors.As(err, &se) {
		return se.Code
	}
	return 0
}

func TestAuthFlows(t *testing.T) {
	key := rsaKey(t)
	secret := NewCredential("secret")
	tests := []struct {
		name     string
		hsPlugin string
		server   ServerAuthConfig
		client   ClientConfig
		wantCode ErrorCode // 0: success
		// clientFails: the client gives up on its own (no SQL error).
		clientFails  bool
		wantPassword bool
	}{
		{name: "native", hsPlugin: NativePasswordPlugin,
			server: ServerAuthConfig{Plugin: NativePasswordPlugin, Credential: secret},
			client: ClientConfig{User: "app", Password: "secret"}},
		{name: "native wrong password", hsPlugin: NativePasswordPlugin,
			server: ServerAuthConfig{Plugin: NativePasswordPlugin, Credential: secret},
			client: ClientConfig{User: "app", Password: "wrong"}, wantCode: ErAccessDeniedError},
		{name: "native over TLS", hsPlugin: NativePasswordPlugin,
			server: ServerAuthConfig{Plugin: NativePasswordPlugin, Credential: secret},
			client: ClientConfig{User: "app", Password: "secret", TLS: true}},
		{name: "sha2 fast auth", hsPlugin: CachingSHA2PasswordPlugin,
			server: ServerAuthConfig{Plugin: CachingSHA2PasswordPlugin, Credential: secret},
			client: ClientConfig{User: "app", Password: "secret"}},
		{name: "sha2 fast auth wrong password", hsPlugin: CachingSHA2PasswordPlugin,
			server: ServerAuthConfig{Plugin: CachingSHA2PasswordPlugin, Credential: secret},
			client: ClientConfig{User: "app", Password: "nope"}, wantCode: ErAccessDeniedError},
		{name: "sha2 full auth over TLS", hsPlugin: CachingSHA2PasswordPlugin,
			server: ServerAuthConfig{Credential: secret, ForceFullAuth: true},
			client: ClientConfig{User: "app", Password: "secret", TLS: true}, wantPassword: true},
		{name: "sha2 full auth over TLS wrong password", hsPlugin: CachingSHA2PasswordPlugin,
			server: ServerAuthConfig{Credential: secret, ForceFullAuth: true},
			client: ClientConfig{User: "app", Password: "bad", TLS: true}, wantCode: ErAccessDeniedError},
		{name: "sha2 full auth RSA with key retrieval", hsPlugin: CachingSHA2PasswordPlugin,
			server: ServerAuthConfig{Credential: secret, ForceFullAuth: true, PrivateKey: key},
			client: ClientConfig{User: "app", Password: "secret", AllowPublicKeyRetrieval: true}, wantPassword: true},
		{name: "sha2 full auth RSA with pinned key", hsPlugin: CachingSHA2PasswordPlugin,
			server: ServerAuthConfig{Credential: secret, ForceFullAuth: true, PrivateKey: key},
			client: ClientConfig{User: "app", Password: "secret", ServerPublicKey: &key.PublicKey}, wantPassword: true},
		{name: "sha2 full auth RSA wrong password", hsPlugin: CachingSHA2PasswordPlugin,
			server: ServerAuthConfig{Credential: secret, ForceFullAuth: true, PrivateKey: key},
			client: ClientConfig{User: "app", Password: "bad", AllowPublicKeyRetrieval: true}, wantCode: ErAccessDeniedError},
		{name: "sha2 full auth: server without key", hsPlugin: CachingSHA2PasswordPlugin,
			server: ServerAuthConfig{Credential: secret, ForceFullAuth: true},
			client: ClientConfig{User: "app", Password: "secret", AllowPublicKeyRetrieval: true}, wantCode: ErAccessDeniedError},
		{name: "sha2 full auth: client without TLS or key", hsPlugin: CachingSHA2PasswordPlugin,
			server: ServerAuthConfig{Credential: secret, ForceFullAuth: true, PrivateKey: key},
			client: ClientConfig{User: "app", Password: "secret"}, clientFails: true},
		{name: "sha2 full auth with only the native hash", hsPlugin: CachingSHA2PasswordPlugin,
			server: ServerAuthConfig{Credential: Credential{NativeHash: NativePasswordHash("secret")}},
			client: ClientConfig{User: "app", Password: "secret", TLS: true}, wantPassword: true},
		{name: "switch sha2 -> native", hsPlugin: CachingSHA2PasswordPlugin,
			server: ServerAuthConfig{Plugin: NativePasswordPlugin, Credential: secret},
			client: ClientConfig{User: "app", Password: "secret"}},
		{name: "switch native -> sha2", hsPlugin: NativePasswordPlugin,
			server: ServerAuthConfig{Plugin: CachingSHA2PasswordPlugin, Credential: secret},
			client: ClientConfig{User: "app", Password: "secret"}},
		{name: "switch to clear over TLS", hsPlugin: NativePasswordPlugin,
			server: ServerAuthConfig{Plugin: ClearPasswordPlugin, Credential: secret},
			client: ClientConfig{User: "app", Password: "secret", TLS: true}, wantPassword: true},
		{name: "clear refused without TLS", hsPlugin: NativePasswordPlugin,
			server: ServerAuthConfig{Plugin: ClearPasswordPlugin, Credential: secret},
			client: ClientConfig{User: "app", Password: "secret"}, clientFails: true},
		{name: "unknown advertised plugin falls back to native", hsPlugin: "client_ed25519",
			server: ServerAuthConfig{Plugin: NativePasswordPlugin, Credential: secret},
			client: ClientConfig{User: "app", Password: "secret"}},
		{name: "empty password native", hsPlugin: NativePasswordPlugin,
			server: ServerAuthConfig{Plugin: NativePasswordPlugin, Credential: NewCredential("")},
			client: ClientConfig{User: "anon"}},
		{name: "empty password sha2", hsPlugin: CachingSHA2PasswordPlugin,
			server: ServerAuthConfig{Credential: NewCredential("")},
			client: ClientConfig{User: "anon"}},
		{name: "password given for passwordless account", hsPlugin: CachingSHA2PasswordPlugin,
			server: ServerAuthConfig{Credential: NewCredential("")},
			client: ClientConfig{User: "anon", Password: "x"}, wantCode: ErAccessDeniedError},
		{name: "no password given", hsPlugin: NativePasswordPlugin,
			server: ServerAuthConfig{Plugin: NativePasswordPlugin, Credential: secret},
			client: ClientConfig{User: "app"}, wantCode: ErAccessDeniedError},
		{name: "zero credential matches nothing", hsPlugin: NativePasswordPlugin,
			server: ServerAuthConfig{Plugin: NativePasswordPlugin},
			client: ClientConfig{User: "ghost"}, wantCode: ErAccessDeniedError},
		{name: "database and attributes", hsPlugin: CachingSHA2PasswordPlugin,
			server: ServerAuthConfig{Credential: secret},
			client: ClientConfig{User: "app", Password: "secret", Database: "shop",
				ConnectAttrs: map[string]string{"program_name": "galeon"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := runAuth(t, tt.hsPlugin, tt.server, tt.client)
			switch {
			case tt.clientFails:
				if res.clientErr == nil || sqlCode(res.clientErr) != 0 {
					t.Fatalf("client err = %v, want a local failure", res.clientErr)
				}
				if res.serverErr == nil {
					t.Fatal("server did not notice the client giving up")
				}
				return
			case tt.wantCode != 0:
				if sqlCode(res.clientErr) != tt.wantCode || sqlCode(res.serverErr) != tt.wantCode {
					t.Fatalf("client err = %v, server err = %v, want code %d", res.clientErr, res.serverErr, tt.wantCode)
				}
				return
			}
			if res.clientErr != nil || res.serverErr != nil {
				t.Fatalf("client err = %v, server err = %v", res.clientErr, res.serverErr)
			}
			if res.client.Status() != ServerStatusAutocommit {
				t.Errorf("client saw status %#x", res.client.Status())
			}
			pw, ok := res.server.Password()
			if ok != tt.wantPassword || (ok && string(pw) != tt.client.Password) {
				t.Errorf("server learned password %q (%v), want %v", pw, ok, tt.wantPassword)
			}
			if res.resp.Username != tt.client.User || res.resp.Database != tt.client.Database {
				t.Errorf("server saw user %q db %q", res.resp.Username, res.resp.Database)
			}
			if len(tt.client.ConnectAttrs) > 0 && res.resp.ConnectAttrs["program_name"] != "galeon" {
				t.Errorf("attributes %v", res.resp.ConnectAttrs)
			}
		})
	}
}

func TestAccessDeniedMessage(t *testing.T) {
	s := NewServerAuth(testScramble, ServerAuthConfig{Plugin: NativePasswordPlugin, ClientHost: "10.0.0.5",
		Credential: NewCredential("secret")})
	_, done, err := s.Start(&HandshakeResponse{Capabilities: ClientProtocol41 | ClientPluginAuth,
		Username: "bob", AuthPlugin: NativePasswordPlugin, AuthResponse: []byte("01234567890123456789")})
	if !done || err == nil || err.Error() != "ERROR 1045 (28000): Access denied for user 'bob'@'10.0.0.5' (using password: YES)" {
		t.Fatalf("done=%v err=%v", done, err)
	}
	if _, _, err := s.Next([]byte{1}); err == nil {
		t.Fatal("packet after the end accepted")
	}
	if _, _, err := s.Start(&HandshakeResponse{}); err == nil {
		t.Fatal("second Start accepted")
	}
}

func TestServerAuthClientWithoutPluginAuth(t *testing.T) {
	// An old client (no CLIENT_PLUGIN_AUTH) speaks native only: fine for a
	// native account, refused for a caching_sha2 one.
	resp := &HandshakeResponse{Capabilities: ClientProtocol41 | ClientSecureConnection, Username: "u",
		AuthResponse: ScrambleNativePassword("secret", testScramble)}
	s := NewServerAuth(testScramble, ServerAuthConfig{Plugin: NativePasswordPlugin, Credential: NewCredential("secret")})
	if _, done, err := s.Start(resp); !done || err != nil {
		t.Fatalf("native: %v %v", done, err)
	}
	s = NewServerAuth(testScramble, ServerAuthConfig{Credential: NewCredential("secret")})
	if _, _, err := s.Start(resp); sqlCode(err) != ErAccessDeniedError {
		t.Fatalf("sha2: %v", err)
	}
}

func TestClientAuthErrors(t *testing.T) {
	hs := &Handshake{AuthData: testScramble, Capabilities: DefaultServerCapabilities, AuthPlugin: NativePasswordPlugin}
	if _, err := NewClientAuth(&ClientConfig{TLS: true}, hs); err == nil {
		t.Error("TLS accepted from a server without CLIENT_SSL")
	}
	if _, err := NewClientAuth(&ClientConfig{}, &Handshake{Capabilities: ClientSecureConnection}); !errors.Is(err, ErrUnsupported) {
		t.Error("pre-4.1 server accepted")
	}
	a, err := NewClientAuth(&ClientConfig{User: "u", Password: "p"}, hs)
	if err != nil {
		t.Fatal(err)
	}
	if a.Capabilities()&ClientSSL != 0 || a.Capabilities()&ClientConnectWithDB != 0 {
		t.Errorf("unexpected capabilities %#x", a.Capabilities())
	}
	for _, bad := range [][]byte{nil, {0x42}, AppendAuthMoreData(nil, []byte{3}), {0xfe}, AppendAuthSwitchRequest(nil, "dialog", nil)} {
		if _, _, err := a.Next(bad); err == nil {
			t.Errorf("Next(% x) accepted", bad)
		}
	}
	_, _, err = a.Next(AppendErr(nil, NewSQLError(ErAccessDeniedError, "no"), ClientProtocol41))
	if sqlCode(err) != ErAccessDeniedError {
		t.Fatalf("ERR: %v", err)
	}
	if _, _, err := a.Next(AppendOK(nil, &OKPacket{}, ClientProtocol41)); err == nil {
		t.Fatal("packet after the end accepted")
	}
}
