package proxy

import (
	"bytes"
	"io"
	"log/slog"
	"net"
	"testing"
	"time"

	"github.com/galeon-db/galeon/internal/config"
	"github.com/galeon-db/galeon/internal/mysqlproto"
)

// fuzzProxy has one user and a backend nobody listens on: the fuzz target
// exercises the handshake and command decoding, never a real backend.
func fuzzProxy(f *testing.F) *Proxy {
	cfg := config.Defaults()
	cfg.Proxy.NoBackendWait = config.Duration(50 * time.Millisecond)
	cfg.Pool.ConnectTimeout = config.Duration(50 * time.Millisecond)
	cfg.Users = []config.User{{Name: "u", Password: "p"}}
	cfg.Servers = []config.Server{{Name: "n1", Address: "127.0.0.1:1", WriterWeight: 1, ReaderWeight: 1}}
	p, err := New(&cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		f.Fatal(err)
	}
	return p
}

// loginPackets is a valid handshake response for user u / password p:
// the fuzzer mutates it and the commands that follow.
func seedSession(scramble []byte, commands ...[]byte) []byte {
	resp := &mysqlproto.HandshakeResponse{
		Capabilities: mysqlproto.DefaultClientCapabilities, MaxPacketSize: 1 << 24, Charset: 45,
		Username: "u", AuthResponse: mysqlproto.ScrambleNativePassword("p", scramble),
		AuthPlugin: mysqlproto.NativePasswordPlugin,
	}
	payload, _ := mysqlproto.AppendHandshakeResponse(nil, resp)
	var b bytes.Buffer
	writePkt(&b, 1, payload)
	for _, c := range commands {
		writePkt(&b, 0, c)
	}
	return b.Bytes()
}

func writePkt(b *bytes.Buffer, seq byte, payload []byte) {
	n := len(payload)
	b.Write([]byte{byte(n), byte(n >> 8), byte(n >> 16), seq})
	b.Write(payload)
}

// FuzzSession feeds arbitrary bytes to a session as if a client sent them.
// The session must never panic or hang; whatever it answers is fine.
func FuzzSession(f *testing.F) {
	p := fuzzProxy(f)
	zero := make([]byte, 20)
	f.Add(seedSession(zero, []byte{byte(mysqlproto.ComPing)}, []byte{byte(mysqlproto.ComQuit)}))
	f.Add(seedSession(zero, append([]byte{byte(mysqlproto.ComQuery)}, "SET NAMES utf8mb4"...)))
	f.Add(seedSession(zero, []byte{byte(mysqlproto.ComStmtExecute), 1, 0, 0, 0, 0, 1, 0, 0, 0}))
	f.Add(seedSession(zero, []byte{byte(mysqlproto.ComChangeUser), 'u', 0, 0}))
	f.Add([]byte{0xff, 0xff, 0xff, 1})
	p.newScramble = func() ([]byte, error) { return zero, nil }
	f.Fuzz(func(t *testing.T, in []byte) {
		conn := &scriptedConn{in: bytes.NewReader(in)}
		done := make(chan struct{})
		go func() {
			defer close(done)
			newSession(p, conn).run()
		}()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Fatal("session did not end when its input ended")
		}
	})
}

// scriptedConn is a client that sends a fixed byte string, then EOF, and
// swallows whatever the proxy answers.
type scriptedConn struct {
	in *bytes.Reader
}

func (c *scriptedConn) Read(b []byte) (int, error)  { return c.in.Read(b) }
func (c *scriptedConn) Write(b []byte) (int, error) { return len(b), nil }
func (c *scriptedConn) Close() error                { return nil }
func (c *scriptedConn) LocalAddr() net.Addr {
	return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 6033}
}
func (c *scriptedConn) RemoteAddr() net.Addr {
	return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 50000}
}
func (c *scriptedConn) SetDeadline(time.Time) error      { return nil }
func (c *scriptedConn) SetReadDeadline(time.Time) error  { return nil }
func (c *scriptedConn) SetWriteDeadline(time.Time) error { return nil }
