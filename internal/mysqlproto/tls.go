package mysqlproto

import (
	"bufio"
	"crypto/tls"
	"net"
)

// StartTLSServer upgrades the server side of c to TLS after the client's
// SSLRequest has been read, and switches c to the TLS stream. The packet
// sequence carries on: the handshake response that follows continues it.
//
// Use it rather than calling tls.Server on nc yourself: clients send their
// TLS ClientHello right behind the SSLRequest without waiting for an
// answer, so part of it is often already sitting in c's read buffer, and a
// TLS handshake on the raw connection would wait forever for those bytes.
func (c *Conn) StartTLSServer(nc net.Conn, cfg *tls.Config) (*tls.Conn, error) {
	return c.startTLS(tls.Server(c.handOff(nc), cfg))
}

// StartTLSClient upgrades the client side of c to TLS after the caller has
// written the SSLRequest (see ClientAuth.SSLRequest); it flushes pending
// writes first.
func (c *Conn) StartTLSClient(nc net.Conn, cfg *tls.Config) (*tls.Conn, error) {
	if err := c.Flush(); err != nil {
		return nil, err
	}
	return c.startTLS(tls.Client(c.handOff(nc), cfg))
}

func (c *Conn) startTLS(tc *tls.Conn) (*tls.Conn, error) {
	if err := tc.Handshake(); err != nil {
		return nil, err
	}
	c.SetReader(bufio.NewReaderSize(tc, c.PacketReader.r.Size()))
	c.SetWriter(bufio.NewWriterSize(tc, c.PacketWriter.w.Size()))
	return tc, nil
}

// handOff returns nc with any bytes c has read from it but not consumed
// put back in front.
func (c *Conn) handOff(nc net.Conn) net.Conn {
	n := c.PacketReader.r.Buffered()
	if n == 0 {
		return nc
	}
	b, _ := c.PacketReader.r.Peek(n)
	pc := &prefixConn{Conn: nc, prefix: append([]byte(nil), b...)}
	_, _ = c.PacketReader.r.Discard(n)
	return pc
}

// prefixConn is a net.Conn whose reads return prefix before reading from
// the connection.
type prefixConn struct {
	net.Conn
	prefix []byte
}

func (p *prefixConn) Read(b []byte) (int, error) {
	if len(p.prefix) > 0 {
		n := copy(b, p.prefix)
		p.prefix = p.prefix[n:]
		return n, nil
	}
	return p.Conn.Read(b)
}
