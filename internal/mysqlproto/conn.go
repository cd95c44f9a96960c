package mysqlproto

import "bufio"

// Conn pairs a PacketReader and a PacketWriter that share one sequence
// counter, as the two directions of a MySQL connection do: a command goes
// out with id 0 and the reply continues at 1 (or the other way round on the
// server side). A Conn must not be copied after NewConn.
type Conn struct {
	PacketReader
	PacketWriter
	seq uint8
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

// ResetSeq sets the next sequence id to 0, at the start of a command.
func (c *Conn) ResetSeq() { c.seq = 0 }
