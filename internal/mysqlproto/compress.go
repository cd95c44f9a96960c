package mysqlproto

import (
	"bytes"
	"compress/zlib"
	"errors"
	"fmt"
	"io"
)

// The compressed protocol (CLIENT_COMPRESS) wraps the ordinary packet
// stream, once the connection phase is over, in compressed packets:
//
//	3 bytes  length of the (compressed) payload
//	1 byte   compressed sequence id
//	3 bytes  length before compression, or 0 if the payload is stored as is
//	payload  zlib data (or the raw bytes)
//
// The inner stream is the ordinary packets, cut anywhere: one compressed
// packet may hold many packets or part of one. Two behaviours of MySQL's
// and MariaDB's net_serv.cc matter for interoperating, and Compressor
// follows both: the compressed sequence restarts at 0 with every command
// (like the packet sequence), and when a command has been read or a
// response flushed the packet sequence jumps to the compressed one (Conn
// does both). Clients therefore do not check the inner packets' sequence
// ids in compressed mode, and neither do servers, which check only the
// compressed sequence.

// minCompressLength is the payload size below which MySQL sends a
// compressed packet's payload uncompressed (MIN_COMPRESS_LENGTH).
const minCompressLength = 50

// compressLevel trades ratio for proxy CPU: zlib level 1 compresses SQL
// text and result rows to within a few percent of the default level at
// several times the speed.
const compressLevel = zlib.BestSpeed

// Compressor is the compressed-packet layer of one connection: reads
// return the decompressed stream, each write is sent as one or more
// compressed packets. Put a bufio.Reader and bufio.Writer above it, so
// that a response goes out in as few compressed packets as it has flushes.
type Compressor struct {
	r   io.Reader
	w   io.Writer
	seq uint8

	in  []byte // decompressed bytes not yet returned by Read
	hdr [7]byte
	raw []byte // one compressed payload as read
	out bytes.Buffer
	zw  *zlib.Writer
	zr  io.ReadCloser
	dec bytes.Buffer
	max int
}

// ErrCompressedPacket reports a malformed compressed packet.
var ErrCompressedPacket = errors.New("mysqlproto: malformed compressed packet")

// NewCompressor returns the compressed layer over r and w (usually both the
// network connection). maxPacketSize bounds one decompressed payload.
func NewCompressor(r io.Reader, w io.Writer, maxPacketSize int) *Compressor {
	if maxPacketSize <= 0 {
		maxPacketSize = DefaultMaxPacketSize
	}
	return &Compressor{r: r, w: w, max: maxPacketSize}
}

// releaseLarge drops the packet buffers (read and written) grown past
// 1 MiB, unless decompressed bytes are still waiting to be read; it
// returns how many bytes it let go.
func (c *Compressor) releaseLarge() int {
	if len(c.in) > 0 {
		return 0
	}
	n := 0
	if cap(c.raw) > retainBufferLimit {
		n += cap(c.raw)
		c.raw = nil
	}
	if c.dec.Cap() > retainBufferLimit {
		n += c.dec.Cap()
		c.dec = bytes.Buffer{}
	}
	if c.out.Cap() > retainBufferLimit {
		n += c.out.Cap()
		c.out = bytes.Buffer{}
	}
	c.in = nil
	return n
}

// ResetSeq starts a command: the next compressed packet carries id 0.
func (c *Compressor) ResetSeq() { c.seq = 0 }

// Seq is the compressed sequence id of the next packet.
func (c *Compressor) Seq() uint8 { return c.seq }

// Read returns decompressed bytes, reading the next compressed packet when
// the previous one is used up. The peer's compressed sequence id is taken
// as it comes: clients and servers alike do not insist on it (a server may
// answer with an error before it has read all of a command).
func (c *Compressor) Read(p []byte) (int, error) {
	for len(c.in) == 0 {
		if err := c.readPacket(); err != nil {
			return 0, err
		}
	}
	n := copy(p, c.in)
	c.in = c.in[n:]
	return n, nil
}

func (c *Compressor) readPacket() error {
	if _, err := io.ReadFull(c.r, c.hdr[:]); err != nil {
		return err // io.EOF: the peer closed between packets
	}
	clen := int(c.hdr[0]) | int(c.hdr[1])<<8 | int(c.hdr[2])<<16
	ulen := int(c.hdr[4]) | int(c.hdr[5])<<8 | int(c.hdr[6])<<16
	c.seq = c.hdr[3] + 1
	if clen > c.max || ulen > c.max {
		return ErrPacketTooLarge
	}
	if cap(c.raw) < clen {
		c.raw = make([]byte, clen)
	}
	c.raw = c.raw[:clen]
	if _, err := io.ReadFull(c.r, c.raw); err != nil {
		return noEOF(err)
	}
	if ulen == 0 {
		c.in = c.raw
		return nil
	}
	br := bytes.NewReader(c.raw)
	if c.zr == nil {
		zr, err := zlib.NewReader(br)
		if err != nil {
			return fmt.Errorf("%w: %v", ErrCompressedPacket, err)
		}
		c.zr = zr
	} else if err := c.zr.(zlib.Resetter).Reset(br, nil); err != nil {
		return fmt.Errorf("%w: %v", ErrCompressedPacket, err)
	}
	c.dec.Reset()
	c.dec.Grow(ulen)
	// Read one byte more than announced, to catch a payload that lies
	// about its size without inflating an unbounded amount.
	n, err := io.Copy(&c.dec, io.LimitReader(c.zr, int64(ulen)+1))
	if err != nil {
		return fmt.Errorf("%w: %v", ErrCompressedPacket, err)
	}
	if int(n) != ulen {
		return fmt.Errorf("%w: %d bytes announced, %d inflated", ErrCompressedPacket, ulen, n)
	}
	c.in = c.dec.Bytes()
	return nil
}

// Write sends p as compressed packets (one per MaxPayloadLen bytes).
func (c *Compressor) Write(p []byte) (int, error) {
	written := 0
	for len(p) > 0 {
		chunk := p[:min(len(p), MaxPayloadLen)]
		if err := c.writePacket(chunk); err != nil {
			return written, err
		}
		written += len(chunk)
		p = p[len(chunk):]
	}
	return written, nil
}

func (c *Compressor) writePacket(chunk []byte) error {
	c.out.Reset()
	c.out.Write(c.hdr[:]) // room for the header
	ulen := 0
	if len(chunk) >= minCompressLength {
		if c.zw == nil {
			c.zw, _ = zlib.NewWriterLevel(&c.out, compressLevel)
		} else {
			c.zw.Reset(&c.out)
		}
		_, err := c.zw.Write(chunk)
		if err == nil {
			err = c.zw.Close()
		}
		if err == nil && c.out.Len()-7 < len(chunk) {
			ulen = len(chunk)
		}
	}
	if ulen == 0 { // too small or incompressible: store as is
		c.out.Truncate(7)
		c.out.Write(chunk)
	}
	b := c.out.Bytes()
	clen := len(b) - 7
	b[0], b[1], b[2] = byte(clen), byte(clen>>8), byte(clen>>16)
	b[3] = c.seq
	b[4], b[5], b[6] = byte(ulen), byte(ulen>>8), byte(ulen>>16)
	c.seq++
	_, err := c.w.Write(b)
	return err
}
