// Package prototest is the MySQL protocol's two ends for tests: a client
// that logs in over a raw connection, and a fake node that accepts any
// user with one password and answers commands as the test says. Tests
// of the pool and of the proxy's relay use them where a real node could
// not make the stream misbehave on purpose.
package prototest

import (
	"bufio"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/galeon-db/galeon/internal/mysqlproto"
)

// Client is a logged-in raw protocol connection.
type Client struct {
	NC   net.Conn
	BR   *bufio.Reader
	BW   *bufio.Writer
	PC   *mysqlproto.Conn
	Caps mysqlproto.Capability
}

// Login connects to addr and authenticates; the connection has a 30 s
// deadline and is closed when the test ends.
func Login(t testing.TB, addr, user, password string) *Client {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	_ = nc.SetDeadline(time.Now().Add(30 * time.Second))
	c := &Client{NC: nc, BR: bufio.NewReader(nc), BW: bufio.NewWriter(nc)}
	c.PC = mysqlproto.NewConn(c.BR, c.BW, 64<<20)
	pkt, err := c.PC.ReadPacket()
	if err != nil {
		t.Fatal(err)
	}
	hs, err := mysqlproto.ParseHandshake(pkt)
	if err != nil {
		t.Fatal(err)
	}
	auth, err := mysqlproto.NewClientAuth(&mysqlproto.ClientConfig{User: user, Password: password}, hs)
	if err != nil {
		t.Fatal(err)
	}
	if err := auth.Run(c.PC); err != nil {
		t.Fatal(err)
	}
	c.Caps = auth.Capabilities()
	return c
}

// Answer handles one command on a fake node's connection (its packet
// sequence reset before the command was read) and reports whether to go
// on; it writes its response through pc (and flushes) or straight to nc.
type Answer func(pc *mysqlproto.Conn, nc net.Conn, caps mysqlproto.Capability, cmd []byte) bool

// FakeNode listens on loopback, logs in anyone with password, and hands
// each command to answer until it says stop, the client quits or the
// test ends. bufSize sizes its output buffer (small values cut responses
// into many writes). It returns the address and a count of accepted
// connections.
func FakeNode(t testing.TB, password string, bufSize int, answer Answer) (string, func() int) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	accepted := 0
	var wg sync.WaitGroup
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			nc, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			accepted++
			mu.Unlock()
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer nc.Close()
				serve(nc, password, bufSize, answer)
			}()
		}
	}()
	return ln.Addr().String(), func() int { mu.Lock(); defer mu.Unlock(); return accepted }
}

func serve(nc net.Conn, password string, bufSize int, answer Answer) {
	pc := mysqlproto.NewConn(bufio.NewReader(nc), bufio.NewWriterSize(nc, bufSize), 64<<20)
	scramble, _ := mysqlproto.NewScramble()
	hs := mysqlproto.Handshake{ServerVersion: "fake", ConnectionID: 1, AuthData: scramble,
		Capabilities: mysqlproto.DefaultServerCapabilities &^ mysqlproto.ClientCompress, Charset: 45, AuthPlugin: mysqlproto.NativePasswordPlugin}
	_ = pc.WritePacket(mysqlproto.AppendHandshake(nil, &hs))
	_ = pc.Flush()
	pkt, err := pc.ReadPacket()
	if err != nil {
		return
	}
	resp, err := mysqlproto.ParseHandshakeResponse(pkt)
	if err != nil {
		return
	}
	auth := mysqlproto.NewServerAuth(scramble, mysqlproto.ServerAuthConfig{Plugin: mysqlproto.NativePasswordPlugin, Credential: mysqlproto.NewCredential(password)})
	if err := auth.Run(pc, resp); err != nil {
		return
	}
	_ = pc.WriteOK(&mysqlproto.OKPacket{Status: mysqlproto.ServerStatusAutocommit}, resp.Capabilities) // logged in
	_ = pc.Flush()
	for {
		pc.ResetSeq()
		cmd, err := pc.ReadPacket()
		if err != nil || len(cmd) > 0 && cmd[0] == byte(mysqlproto.ComQuit) {
			return
		}
		if !answer(pc, nc, resp.Capabilities, cmd) {
			return
		}
	}
}

// OK answers every command with OK.
func OK(pc *mysqlproto.Conn, _ net.Conn, caps mysqlproto.Capability, _ []byte) bool {
	_ = pc.WriteOK(&mysqlproto.OKPacket{Status: mysqlproto.ServerStatusAutocommit}, caps)
	return pc.Flush() == nil
}
