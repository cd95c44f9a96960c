package mysqlproto

import (
	"bufio"
	"io"
)

// Conn pairs a PacketReader and a PacketWriter that share one sequence
// counter, as the two directions of a MySQL connection do: a command goes
// out with id 0 and the reply continues at 1 (or the other way round on the
// server side). A Conn must not be copied after NewConn.
type Conn struct {
	PacketReader
	PacketWriter
	seq  uint8
	comp *Compressor
}

// NewConn returns a Conn over r and w; see NewPacketReader for
// maxPacketSize.
func NewConn(r *bufio.Reader, w *bufio.Writer, maxPacketSize int) *Conn {
	c := &Conn{}
	c.PacketReader.init(r, &c.seq, maxPacketSize)
	c.PacketWriter.init(w, &c.seq)
	return c
}

// Seq returns the next sequence id (shared by both directions).
func (c *Conn) Seq() uint8 { return c.seq }

// SetSeq sets the next sequence id.
func (c *Conn) SetSeq(n uint8) { c.seq = n }

// ResetSeq sets the next sequence id to 0, at the start of a command (and
// the compressed sequence too, in compressed mode).
func (c *Conn) ResetSeq() {
	c.seq = 0
	if c.comp != nil {
		c.comp.ResetSeq()
	}
}

// ReadPacket reads one logical packet (see PacketReader.ReadPacket). In
// compressed mode the packet sequence then continues from the compressed
// one, as in MySQL's and MariaDB's my_net_read, which count compressed
// packets only: a command over 16 MiB that came in three compressed
// packets for two inner ones is answered from 3, not 2.
func (c *Conn) ReadPacket() ([]byte, error) {
	p, err := c.PacketReader.ReadPacket()
	if c.comp != nil && err == nil {
		c.seq = c.comp.Seq()
	}
	return p, err
}

// Flush sends buffered packets. In compressed mode the packet sequence
// then continues from the compressed one, as MySQL's net_flush does.
func (c *Conn) Flush() error {
	err := c.PacketWriter.Flush()
	if c.comp != nil {
		c.seq = c.comp.Seq()
	}
	return err
}

// StartCompression switches c to the compressed protocol once the
// connection phase is over. Compressed packets are read through the
// current reader (which may already hold some) and written to dst; the
// caller points the PacketWriter's bufio.Writer at the returned Compressor
// (SetWriter, or Reset on the writer it lends). Packet sequence ids inside
// compressed packets are no longer checked, as neither MySQL nor MariaDB
// checks them.
func (c *Conn) StartCompression(dst io.Writer) *Compressor {
	src := c.PacketReader.r
	c.comp = NewCompressor(src, dst, c.PacketReader.maxSize)
	c.PacketReader.r = bufio.NewReaderSize(c.comp, max(src.Size(), 16<<10))
	c.PacketReader.lenientSeq = true
	return c.comp
}

// ReleaseLargeBuffers drops the buffers of c that one large packet grew
// past 1 MiB (the packet reader's, and in compressed mode the inflated
// and compressed packet buffers), and returns how many bytes it let go.
// Call it between commands, when nothing read is still in use.
func (c *Conn) ReleaseLargeBuffers() int {
	n := c.PacketReader.ReleaseLargeBuffer()
	if c.comp != nil {
		n += c.comp.releaseLarge()
	}
	return n
}
