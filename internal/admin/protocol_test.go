package admin

import (
	"bufio"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"math/big"
	"net"
	"strings"
	"testing"
	"time"

	mp "github.com/galeon-db/galeon/internal/mysqlproto"
)

// Protocol-level tests: a client built from mysqlproto's own pieces, so
// the tests can vary capabilities, send broken packets and check framing
// packet by packet.

type rawClient struct {
	t    *testing.T
	nc   net.Conn
	c    *mp.Conn
	caps mp.Capability
	hs   *mp.Handshake
}

// dialRaw connects and reads the server greeting.
func dialRaw(t *testing.T, s *Server) *rawClient {
	t.Helper()
	nc, err := net.DialTimeout("tcp", s.SQLAddr().String(), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	_ = nc.SetDeadline(time.Now().Add(10 * time.Second))
	rc := &rawClient{t: t, nc: nc, c: mp.NewConn(bufio.NewReader(nc), bufio.NewWriter(nc), 0)}
	pkt, err := rc.c.ReadPacket()
	if err != nil {
		t.Fatal(err)
	}
	if rc.hs, err = mp.ParseHandshake(pkt); err != nil {
		t.Fatal(err)
	}
	return rc
}

// login authenticates with ClientAuth, optionally over TLS.
func (rc *rawClient) login(caps mp.Capability, useTLS bool) error {
	a, err := mp.NewClientAuth(&mp.ClientConfig{User: testUser, Password: testPassword, Capabilities: caps, TLS: useTLS}, rc.hs)
	if err != nil {
		return err
	}
	if useTLS {
		if err := rc.c.WritePacket(a.SSLRequest(nil)); err != nil {
			return err
		}
		tc, err := rc.c.StartTLSClient(rc.nc, &tls.Config{InsecureSkipVerify: true})
		if err != nil {
			return err
		}
		rc.nc = tc
	}
	if err := a.Run(rc.c); err != nil {
		return err
	}
	rc.caps = a.Capabilities()
	return nil
}

// command sends one command packet and returns the response packets,
// framed by mysqlproto's ResponseFramer (which thereby checks ours).
func (rc *rawClient) command(payload []byte) [][]byte {
	rc.t.Helper()
	rc.c.ResetSeq()
	if err := rc.c.WritePacket(payload); err != nil {
		rc.t.Fatal(err)
	}
	if err := rc.c.Flush(); err != nil {
		rc.t.Fatal(err)
	}
	kind, ok := mp.ResponseKindFor(mp.Command(payload[0]))
	if !ok {
		return nil
	}
	var f mp.ResponseFramer
	f.Reset(kind, rc.caps)
	var out [][]byte
	for {
		pkt, err := rc.c.ReadPacket()
		if err != nil {
			rc.t.Fatalf("%s: %v", mp.Command(payload[0]), err)
		}
		out = append(out, append([]byte(nil), pkt...))
		st, err := f.Next(pkt)
		if err != nil {
			rc.t.Fatalf("%s: framing: %v", mp.Command(payload[0]), err)
		}
		if st == mp.FrameDone {
			return out
		}
	}
}

func (rc *rawClient) query(q string) [][]byte {
	rc.t.Helper()
	return rc.command(mp.AppendComQuery(nil, q, rc.caps))
}

// expectClosed checks that the server closes the connection within
// wait, after at most one more packet (an error message).
func (rc *rawClient) expectClosed(wait time.Duration) {
	rc.t.Helper()
	_ = rc.nc.SetReadDeadline(time.Now().Add(wait))
	for i := 0; i < 2; i++ {
		_, err := rc.c.ReadPacket()
		if err == nil {
			continue
		}
		var ne net.Error
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.As(err, &ne) && !ne.Timeout() {
			return
		}
		rc.t.Errorf("connection not closed: %v", err)
		return
	}
	rc.t.Error("connection not closed: still sending packets")
}

func expectErr(t *testing.T, pkt []byte, code mp.ErrorCode, msg string) {
	t.Helper()
	e, err := mp.ParseErr(pkt)
	if err != nil {
		t.Fatalf("want ERR %d, got packet %q", code, pkt)
	}
	if e.Code != code || !strings.Contains(e.Message, msg) {
		t.Errorf("got %d %s, want %d ...%s...", e.Code, e.Message, code, msg)
	}
}

// decodeRow reads a text-protocol row; NULL becomes "NULL".
func decodeRow(t *testing.T, pkt []byte, n int) []string {
	t.Helper()
	var out []string
	for i := 0; i < n; i++ {
		s, null, used, err := mp.ReadLenEncString(pkt)
		if err != nil {
			t.Fatalf("row %q: %v", pkt, err)
		}
		if null {
			out = append(out, "NULL")
		} else {
			out = append(out, string(s))
		}
		pkt = pkt[used:]
	}
	if len(pkt) != 0 {
		t.Errorf("trailing bytes in row: %q", pkt)
	}
	return out
}

func TestProtocolResultSetFraming(t *testing.T) {
	fs := newFakeServers()
	s := startServer(t, Config{}, []Table{fs.table(), statsTable()}, nil)
	base := mp.DefaultClientCapabilities
	for _, mode := range []struct {
		name string
		caps mp.Capability
		eof  int // classic EOF packets in a result set
	}{
		{"DEPRECATE_EOF", base, 0},
		{"classic EOF", base &^ mp.ClientDeprecateEOF, 1},
	} {
		t.Run(mode.name, func(t *testing.T) {
			rc := dialRaw(t, s)
			if err := rc.login(mode.caps, false); err != nil {
				t.Fatal(err)
			}
			if rc.caps&mp.ClientDeprecateEOF != mode.caps&mp.ClientDeprecateEOF {
				t.Fatalf("negotiated %#x", rc.caps)
			}
			out := rc.query("SELECT hostname, port, max_lag FROM servers ORDER BY hostname")
			if want := 1 + 3 + mode.eof + 3 + 1; len(out) != want {
				t.Fatalf("%d packets, want %d", len(out), want)
			}
			rows := out[1+3+mode.eof : len(out)-1]
			var got []string
			for _, r := range rows {
				got = append(got, strings.Join(decodeRow(t, r, 3), "|"))
			}
			if want := "db1|3306|1.5,db2|3306|NULL,db3|3307|0.25"; strings.Join(got, ",") != want {
				t.Errorf("rows %v", got)
			}
			// Empty result set.
			if out := rc.query("SELECT * FROM servers WHERE port = 1"); len(out) != 1+7+mode.eof+1 {
				t.Errorf("empty result: %d packets", len(out))
			}
			// OK for writes, with affected rows.
			out = rc.query("UPDATE servers SET weight = 1 WHERE hostgroup = 10")
			ok, err := mp.ParseOK(out[0], rc.caps)
			if err != nil || ok.AffectedRows != 2 || !ok.Status.Has(mp.ServerStatusAutocommit) {
				t.Errorf("OK %+v %v", ok, err)
			}
			// COM_FIELD_LIST: definitions then EOF, with a wildcard.
			out = rc.command(append([]byte{byte(mp.ComFieldList)}, "servers\x00host%"...))
			if len(out) != 3 {
				t.Errorf("field list: %d packets", len(out))
			}
			out = rc.command(append([]byte{byte(mp.ComFieldList)}, "nope\x00"...))
			expectErr(t, out[0], erNoSuchTable, "doesn't exist")
			// COM_PING, COM_INIT_DB, COM_STATISTICS, COM_SET_OPTION.
			if out := rc.command([]byte{byte(mp.ComPing)}); !mp.IsOK(out[0]) {
				t.Errorf("ping: %q", out[0])
			}
			if out := rc.command(append([]byte{byte(mp.ComInitDB)}, "whatever"...)); !mp.IsOK(out[0]) {
				t.Errorf("init db: %q", out[0])
			}
			out = rc.query("SELECT DATABASE()")
			if v := decodeRow(t, out[len(out)-2], 1); v[0] != "whatever" {
				t.Errorf("DATABASE() after COM_INIT_DB = %v", v)
			}
			if out := rc.command([]byte{byte(mp.ComStatistics)}); !strings.HasPrefix(string(out[0]), "Uptime: ") {
				t.Errorf("statistics: %q", out[0])
			}
			rc.command([]byte{byte(mp.ComSetOption), optionMultiStatementsOn, 0})
			if out := rc.query("SELECT 1; SELECT 2"); len(out) < 2 {
				t.Errorf("multi-statement after COM_SET_OPTION: %d packets", len(out))
			}
		})
	}
}

func TestProtocolCommandErrorsKeepSession(t *testing.T) {
	fs := newFakeServers()
	s := startServer(t, Config{}, []Table{fs.table()}, nil)
	rc := dialRaw(t, s)
	if err := rc.login(0, false); err != nil {
		t.Fatal(err)
	}
	out := rc.command(append([]byte{byte(mp.ComStmtPrepare)}, "SELECT 1"...))
	expectErr(t, out[0], erUnsupportedPS, prepareRefused)
	out = rc.command([]byte{byte(mp.ComStmtExecute), 1, 0, 0, 0, 0, 1, 0, 0, 0})
	expectErr(t, out[0], mp.ErUnknownStmtHandler, prepareRefused)
	rc.command([]byte{byte(mp.ComStmtClose), 1, 0, 0, 0}) // no response
	out = rc.command([]byte{0x99})
	expectErr(t, out[0], mp.ErUnknownComError, "Unknown command")
	out = rc.query("SELECT * FROM")
	expectErr(t, out[0], mp.ErParseError, "incomplete input")
	out = rc.query("")
	expectErr(t, out[0], erEmptyQuery, "Query was empty")
	if out := rc.command([]byte{byte(mp.ComPing)}); !mp.IsOK(out[0]) {
		t.Errorf("session unusable after errors: %q", out[0])
	}
	rc.command([]byte{byte(mp.ComQuit)})
	rc.expectClosed(5 * time.Second)
}

func TestProtocolBadPacketsClose(t *testing.T) {
	fs := newFakeServers()
	s := startServer(t, Config{}, []Table{fs.table()}, nil, func(s *Server) { s.handshakeTimeout = 500 * time.Millisecond })

	t.Run("oversize", func(t *testing.T) {
		rc := dialRaw(t, s)
		if err := rc.login(0, false); err != nil {
			t.Fatal(err)
		}
		size := maxPacketSize + 100
		hdr := []byte{byte(size), byte(size >> 8), byte(size >> 16), 0, byte(mp.ComQuery)}
		if _, err := rc.nc.Write(append(hdr, strings.Repeat("x", 1000)...)); err != nil {
			t.Fatal(err)
		}
		rc.c.SetSeq(1)
		pkt, err := rc.c.ReadPacket()
		if err != nil {
			t.Fatal(err)
		}
		expectErr(t, pkt, mp.ErNetPacketTooLarge, "max_allowed_packet")
		rc.expectClosed(5 * time.Second)
	})
	t.Run("empty command", func(t *testing.T) {
		rc := dialRaw(t, s)
		if err := rc.login(0, false); err != nil {
			t.Fatal(err)
		}
		rc.c.ResetSeq()
		_ = rc.c.WritePacket(nil)
		_ = rc.c.Flush()
		pkt, err := rc.c.ReadPacket()
		if err != nil {
			t.Fatal(err)
		}
		expectErr(t, pkt, mp.ErMalformedPacket, "empty command")
		rc.expectClosed(5 * time.Second)
	})
	t.Run("sequence", func(t *testing.T) {
		rc := dialRaw(t, s)
		if err := rc.login(0, false); err != nil {
			t.Fatal(err)
		}
		rc.c.SetSeq(5)
		_ = rc.c.WritePacket([]byte{byte(mp.ComPing)})
		_ = rc.c.Flush()
		rc.c.SetSeq(0)
		pkt, err := rc.c.ReadPacket()
		if err != nil {
			t.Fatal(err)
		}
		expectErr(t, pkt, mp.ErNetPacketsOutOfOrder, "out of order")
		rc.expectClosed(5 * time.Second)
	})
	t.Run("bad handshake response", func(t *testing.T) {
		rc := dialRaw(t, s)
		_ = rc.c.WritePacket([]byte{0x0f, 0xa2, 0, 0, 1})
		_ = rc.c.Flush()
		pkt, err := rc.c.ReadPacket()
		if err != nil {
			t.Fatal(err)
		}
		expectErr(t, pkt, mp.ErHandshakeError, "Bad handshake")
		rc.expectClosed(5 * time.Second)
	})
	t.Run("garbage bytes", func(t *testing.T) {
		rc := dialRaw(t, s)
		_, _ = rc.nc.Write([]byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"))
		rc.expectClosed(5 * time.Second)
	})
	t.Run("silent client times out", func(t *testing.T) {
		rc := dialRaw(t, s)
		rc.expectClosed(s.handshakeTimeout + 5*time.Second)
	})
	// The server is still serving.
	rc := dialRaw(t, s)
	if err := rc.login(0, false); err != nil {
		t.Fatalf("server unusable after bad clients: %v", err)
	}
}

// TestProtocolCachingSHA2 plays a client that answers the
// mysql_native_password greeting with caching_sha2_password, as MySQL 8
// clients configured for it do: it must be verified without a switch.
func TestProtocolCachingSHA2(t *testing.T) {
	fs := newFakeServers()
	s := startServer(t, Config{}, []Table{fs.table()}, nil)
	for _, tc := range []struct {
		password string
		ok       bool
	}{{testPassword, true}, {"wrong", false}} {
		rc := dialRaw(t, s)
		scramble := mp.TrimScramble(rc.hs.AuthData)
		caps := mp.DefaultClientCapabilities
		resp, err := mp.AppendHandshakeResponse(nil, &mp.HandshakeResponse{
			Capabilities:  caps,
			MaxPacketSize: 1 << 24,
			Charset:       45,
			Username:      testUser,
			AuthResponse:  mp.ScrambleCachingSHA2Password(tc.password, scramble),
			AuthPlugin:    mp.CachingSHA2PasswordPlugin,
		})
		if err != nil {
			t.Fatal(err)
		}
		_ = rc.c.WritePacket(resp)
		_ = rc.c.Flush()
		pkt, err := rc.c.ReadPacket()
		if err != nil {
			t.Fatal(err)
		}
		if !tc.ok {
			expectErr(t, pkt, mp.ErAccessDeniedError, "Access denied")
			continue
		}
		if len(pkt) != 2 || pkt[0] != mp.HeaderAuthMore || pkt[1] != mp.CachingSHA2FastAuthSuccess {
			t.Fatalf("want fast auth success, got %q", pkt)
		}
		if pkt, err = rc.c.ReadPacket(); err != nil || !mp.IsOK(pkt) {
			t.Fatalf("want OK, got %q %v", pkt, err)
		}
	}
}

// TestProtocolPluginSwitch checks a client offering a plugin we do not
// verify directly is switched to mysql_native_password.
func TestProtocolPluginSwitch(t *testing.T) {
	fs := newFakeServers()
	s := startServer(t, Config{}, []Table{fs.table()}, nil)
	rc := dialRaw(t, s)
	resp, _ := mp.AppendHandshakeResponse(nil, &mp.HandshakeResponse{
		Capabilities: mp.DefaultClientCapabilities, MaxPacketSize: 1 << 24, Charset: 45,
		Username: testUser, AuthResponse: []byte("x"), AuthPlugin: "client_ed25519",
	})
	_ = rc.c.WritePacket(resp)
	_ = rc.c.Flush()
	pkt, err := rc.c.ReadPacket()
	if err != nil {
		t.Fatal(err)
	}
	plugin, data, err := mp.ParseAuthSwitchRequest(pkt)
	if err != nil || plugin != mp.NativePasswordPlugin {
		t.Fatalf("want switch to native, got %q %v", pkt, err)
	}
	_ = rc.c.WritePacket(mp.ScrambleNativePassword(testPassword, mp.TrimScramble(data)))
	_ = rc.c.Flush()
	if pkt, err = rc.c.ReadPacket(); err != nil || !mp.IsOK(pkt) {
		t.Fatalf("want OK, got %q %v", pkt, err)
	}
}

func selfSignedTLS(t *testing.T) *tls.Config {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}}
}

func TestProtocolTLS(t *testing.T) {
	fs := newFakeServers()
	s := startServer(t, Config{TLS: selfSignedTLS(t)}, []Table{fs.table()}, nil)
	rc := dialRaw(t, s)
	if rc.hs.Capabilities&mp.ClientSSL == 0 {
		t.Fatal("server does not offer TLS")
	}
	if err := rc.login(0, true); err != nil {
		t.Fatal(err)
	}
	if _, ok := rc.nc.(*tls.Conn); !ok {
		t.Fatal("not upgraded")
	}
	out := rc.query("SELECT @@have_ssl")
	if v := decodeRow(t, out[len(out)-2], 1); v[0] != "YES" {
		t.Errorf("@@have_ssl = %v", v)
	}
	// Plain connections are still accepted.
	plain := dialRaw(t, s)
	if err := plain.login(0, false); err != nil {
		t.Errorf("plain login with TLS configured: %v", err)
	}
	// A client asking for TLS where none is configured is refused.
	s2 := startServer(t, Config{}, []Table{fs.table()}, nil)
	rc2 := dialRaw(t, s2)
	_ = rc2.c.WritePacket(mp.AppendSSLRequest(nil, mp.SSLRequest{Capabilities: mp.DefaultClientCapabilities, MaxPacketSize: 1 << 24, Charset: 45}))
	_ = rc2.c.Flush()
	pkt, err := rc2.c.ReadPacket()
	if err != nil {
		t.Fatal(err)
	}
	expectErr(t, pkt, mp.ErHandshakeError, "TLS is not configured")
}
