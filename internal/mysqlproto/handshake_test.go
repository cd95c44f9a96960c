package mysqlproto

import (
	"bytes"
	"errors"
	"reflect"
	"testing"
)

var testScramble = []byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20}

func TestHandshakeRoundTrip(t *testing.T) {
	tests := []struct {
		name string
		h    Handshake
	}{
		{"mysql", Handshake{
			ServerVersion: "8.0.36-galeon", ConnectionID: 42, AuthData: testScramble,
			Capabilities: DefaultServerCapabilities | ClientSSL, Charset: 255,
			Status: ServerStatusAutocommit, AuthPlugin: CachingSHA2PasswordPlugin,
		}},
		{"mariadb extended capabilities", Handshake{
			ServerVersion: "5.5.5-10.11.6-MariaDB", ConnectionID: 1 << 31, AuthData: testScramble,
			Capabilities: (DefaultServerCapabilities &^ ClientMySQL) | MariaDBClientStmtBulkOperations | MariaDBClientProgress,
			Charset:      45, AuthPlugin: NativePasswordPlugin,
		}},
		{"no plugin auth", Handshake{
			ServerVersion: "5.0", ConnectionID: 7, AuthData: testScramble,
			Capabilities: ClientLongPassword | ClientProtocol41 | ClientSecureConnection, Charset: 8,
		}},
	}
	for _, tt := range tests {
		b := AppendHandshake(nil, &tt.h)
		got, err := ParseHandshake(b)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if !reflect.DeepEqual(*got, tt.h) {
			t.Errorf("%s:\n got %+v\nwant %+v", tt.name, *got, tt.h)
		}
	}
}

func TestHandshakeWireLayout(t *testing.T) {
	h := Handshake{ServerVersion: "8.0", ConnectionID: 1, AuthData: testScramble,
		Capabilities: DefaultServerCapabilities, Charset: 255, AuthPlugin: NativePasswordPlugin}
	b := AppendHandshake(nil, &h)
	d := decoder{b: b}
	d.u8()
	d.nulString()
	d.u32()
	if !bytes.Equal(d.take(8), testScramble[:8]) || d.u8() != 0 {
		t.Fatal("scramble part 1 / filler")
	}
	d.take(2 + 1 + 2 + 2)
	if n := d.u8(); n != 21 {
		t.Fatalf("auth data length %d, want 21", n)
	}
	if !bytes.Equal(d.take(10), make([]byte, 10)) {
		t.Fatal("reserved bytes not zero")
	}
	if p2 := d.take(13); !bytes.Equal(p2, append(testScramble[8:], 0)) {
		t.Fatalf("part 2 % x", p2)
	}
	if string(d.rest()) != NativePasswordPlugin+"\x00" {
		t.Fatal("plugin name")
	}
}

func TestParseHandshakeTolerance(t *testing.T) {
	h := Handshake{ServerVersion: "8.0", AuthData: testScramble, Capabilities: DefaultServerCapabilities, AuthPlugin: NativePasswordPlugin}
	b := AppendHandshake(nil, &h)
	// Plugin name without its NUL (MySQL bug #59453).
	got, err := ParseHandshake(b[:len(b)-1])
	if err != nil || got.AuthPlugin != NativePasswordPlugin {
		t.Fatalf("unterminated plugin: %v %v", got, err)
	}
	// Ending right after the lower capability flags (very old servers).
	short := b[:1+4+4+8+1+2]
	if got, err := ParseHandshake(short); err != nil || len(got.AuthData) != 8 {
		t.Fatalf("short handshake: %v %v", got, err)
	}
	// Every other truncation is an error.
	for cut := 0; cut < len(b)-len(NativePasswordPlugin)-1; cut++ {
		if cut == len(short) {
			continue
		}
		if _, err := ParseHandshake(b[:cut]); err == nil {
			t.Errorf("cut at %d accepted", cut)
		}
	}
}

func TestParseHandshakeErrors(t *testing.T) {
	e := NewSQLError(ErConCountError, "Too many connections")
	_, err := ParseHandshake(AppendErr(nil, e, ClientProtocol41))
	var se *SQLError
	if !errors.As(err, &se) || se.Code != ErConCountError {
		t.Fatalf("err = %v", err)
	}
	if _, err := ParseHandshake([]byte{9, 'x', 0}); !errors.Is(err, ErrUnsupported) {
		t.Fatalf("protocol 9: %v", err)
	}
}

func TestNewScramble(t *testing.T) {
	a, err := NewScramble()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := NewScramble()
	if len(a) != ScrambleLength || bytes.Equal(a, b) {
		t.Fatal("scrambles not random or wrong length")
	}
	for _, c := range append(a, b...) {
		if c == 0 || c == '$' || c > 127 {
			t.Fatalf("bad scramble byte %#x", c)
		}
	}
}

func TestHandshakeResponseRoundTrip(t *testing.T) {
	base := ClientProtocol41 | ClientLongPassword | ClientTransactions
	scramble := ScrambleNativePassword("secret", testScramble)
	tests := []struct {
		name string
		r    HandshakeResponse
	}{
		{"lenenc auth data", HandshakeResponse{
			Capabilities:  base | ClientSecureConnection | ClientPluginAuth | ClientPluginAuthLenencClientData | ClientConnectWithDB | ClientConnectAttrs,
			MaxPacketSize: 1 << 24, Charset: 255, Username: "app", AuthResponse: scramble,
			Database: "shop", AuthPlugin: NativePasswordPlugin,
			ConnectAttrs: map[string]string{"_client_name": "libmysql", "program_name": "mysql", "empty": ""},
		}},
		{"one-byte length", HandshakeResponse{
			Capabilities: base | ClientSecureConnection | ClientPluginAuth,
			Charset:      45, Username: "root", AuthResponse: scramble, AuthPlugin: CachingSHA2PasswordPlugin,
		}},
		{"NUL-terminated", HandshakeResponse{
			Capabilities: base | ClientConnectWithDB, Username: "old", AuthResponse: []byte("abcdefgh"), Database: "db",
		}},
		{"empty password", HandshakeResponse{
			Capabilities: base | ClientSecureConnection | ClientPluginAuth | ClientPluginAuthLenencClientData,
			Username:     "anon", AuthResponse: []byte{}, AuthPlugin: NativePasswordPlugin,
		}},
		{"mariadb extended", HandshakeResponse{
			Capabilities: (base &^ ClientMySQL) | ClientSecureConnection | ClientPluginAuth | MariaDBClientStmtBulkOperations,
			Username:     "m", AuthResponse: scramble, AuthPlugin: NativePasswordPlugin,
		}},
	}
	for _, tt := range tests {
		b, err := AppendHandshakeResponse(nil, &tt.r)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if IsSSLRequest(b) {
			t.Fatalf("%s: looks like an SSLRequest", tt.name)
		}
		got, err := ParseHandshakeResponse(b)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if !reflect.DeepEqual(*got, tt.r) {
			t.Errorf("%s:\n got %+v\nwant %+v", tt.name, *got, tt.r)
		}
		// Output is deterministic (attributes are sorted).
		b2, _ := AppendHandshakeResponse(nil, got)
		if !bytes.Equal(b, b2) {
			t.Errorf("%s: re-encoding differs", tt.name)
		}
	}
}

func TestHandshakeResponseEncodingErrors(t *testing.T) {
	r := HandshakeResponse{Capabilities: ClientProtocol41 | ClientSecureConnection, AuthResponse: make([]byte, 256)}
	if _, err := AppendHandshakeResponse(nil, &r); err == nil {
		t.Error("256-byte auth response with 1-byte length accepted")
	}
	r = HandshakeResponse{Capabilities: ClientProtocol41, AuthResponse: []byte{1, 0, 2}}
	if _, err := AppendHandshakeResponse(nil, &r); err == nil {
		t.Error("NUL inside NUL-terminated auth response accepted")
	}
}

func TestParseHandshakeResponseTruncated(t *testing.T) {
	r := HandshakeResponse{
		Capabilities: ClientProtocol41 | ClientSecureConnection | ClientPluginAuth | ClientPluginAuthLenencClientData | ClientConnectWithDB | ClientConnectAttrs,
		Username:     "app", AuthResponse: testScramble, Database: "shop", AuthPlugin: NativePasswordPlugin,
		ConnectAttrs: map[string]string{"k": "v"},
	}
	b, _ := AppendHandshakeResponse(nil, &r)
	// The fixed head, user name and auth response are mandatory.
	mandatory := 32 + len("app") + 1 + 1 + len(testScramble)
	for cut := 0; cut < mandatory; cut++ {
		if _, err := ParseHandshakeResponse(b[:cut]); err == nil {
			t.Errorf("cut at %d accepted", cut)
		}
	}
	// Cutting inside the attribute block is an error too.
	if _, err := ParseHandshakeResponse(b[:len(b)-1]); err == nil {
		t.Error("truncated attributes accepted")
	}
	// Bad attribute block contents.
	bad := append(b[:len(b)-5:len(b)-5], 3, 1, 'k', 9) // value claims 9 bytes
	if _, err := ParseHandshakeResponse(bad); err == nil {
		t.Error("inconsistent attributes accepted")
	}
	// Pre-4.1 clients are refused.
	if _, err := ParseHandshakeResponse([]byte{0, 0, 0, 0, 0}); !errors.Is(err, ErrUnsupported) {
		t.Errorf("pre-4.1: %v", err)
	}
}

func TestSSLRequest(t *testing.T) {
	req := SSLRequest{Capabilities: DefaultClientCapabilities, MaxPacketSize: 1 << 24, Charset: 255}
	b := AppendSSLRequest(nil, req)
	if len(b) != 32 || !IsSSLRequest(b) {
		t.Fatalf("len %d, IsSSLRequest %v", len(b), IsSSLRequest(b))
	}
	got, err := ParseSSLRequest(b)
	req.Capabilities |= ClientSSL
	if err != nil || got != req {
		t.Fatalf("got %+v, %v", got, err)
	}
	if _, err := ParseSSLRequest(b[:31]); err == nil {
		t.Error("short SSLRequest accepted")
	}
	if _, err := ParseHandshakeResponse(b); err == nil {
		t.Error("SSLRequest parsed as a full handshake response")
	}
	noSSL := bytes.Clone(b)
	noSSL[1] &^= byte(ClientSSL >> 8)
	if IsSSLRequest(noSSL) {
		t.Error("32-byte packet without CLIENT_SSL taken as SSLRequest")
	}
}

func TestAuthSwitchAndMoreData(t *testing.T) {
	data := append(bytes.Clone(testScramble), 0)
	b := AppendAuthSwitchRequest(nil, CachingSHA2PasswordPlugin, data)
	plugin, got, err := ParseAuthSwitchRequest(b)
	if err != nil || plugin != CachingSHA2PasswordPlugin || !bytes.Equal(got, data) {
		t.Fatalf("%q % x %v", plugin, got, err)
	}
	if !bytes.Equal(TrimScramble(got), testScramble) {
		t.Fatal("TrimScramble")
	}
	if _, _, err := ParseAuthSwitchRequest([]byte{0xfe}); !errors.Is(err, ErrUnsupported) {
		t.Errorf("old password switch: %v", err)
	}
	if _, _, err := ParseAuthSwitchRequest([]byte{0x01, 'x'}); err == nil {
		t.Error("wrong header accepted")
	}
	m := AppendAuthMoreData(nil, []byte{CachingSHA2FastAuthSuccess})
	if d, err := ParseAuthMoreData(m); err != nil || !bytes.Equal(d, []byte{3}) {
		t.Fatalf("% x %v", d, err)
	}
	if _, err := ParseAuthMoreData([]byte{0}); err == nil {
		t.Error("wrong header accepted")
	}
}
