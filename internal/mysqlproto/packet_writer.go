package mysqlproto

import "bufio"

// PacketWriter writes MySQL packets to a bufio.Writer, numbering them with
// the sequence id. Writes are buffered; call Flush once per response so a
// whole result set goes out in as few syscalls as possible.
//
// A PacketWriter is not safe for concurrent use.
type PacketWriter struct {
	w       *bufio.Writer
	seq     *uint8
	ownSeq  uint8
	hdr     [4]byte
	scratch []byte
}

// NewPacketWriter returns a writer with its own sequence counter starting
// at 0.
func NewPacketWriter(w *bufio.Writer) *PacketWriter {
	pw := &PacketWriter{}
	pw.init(w, &pw.ownSeq)
	return pw
}

func (pw *PacketWriter) init(w *bufio.Writer, seq *uint8) {
	pw.w = w
	pw.seq = seq
}

// SetWriter switches to a new destination (after a TLS upgrade), keeping
// the sequence id. Flush the old writer first.
func (pw *PacketWriter) SetWriter(w *bufio.Writer) { pw.w = w }

// Seq returns the sequence id the next packet will carry.
func (pw *PacketWriter) Seq() uint8 { return *pw.seq }

// SetSeq sets the sequence id the next packet will carry.
func (pw *PacketWriter) SetSeq(n uint8) { *pw.seq = n }

// ResetSeq starts a new command: the next packet carries sequence id 0.
func (pw *PacketWriter) ResetSeq() { *pw.seq = 0 }

// WritePacket writes payload as one logical packet, split into
// MaxPayloadLen chunks if needed (with an empty trailing chunk when the
// length is an exact multiple, as the protocol requires).
func (pw *PacketWriter) WritePacket(payload []byte) error {
	for {
		n := min(len(payload), MaxPayloadLen)
		pw.hdr = [4]byte{byte(n), byte(n >> 8), byte(n >> 16), *pw.seq}
		*pw.seq++
		if _, err := pw.w.Write(pw.hdr[:]); err != nil {
			return err
		}
		if _, err := pw.w.Write(payload[:n]); err != nil {
			return err
		}
		if n < MaxPayloadLen {
			return nil
		}
		payload = payload[n:]
	}
}

// WriteRaw writes one or more complete packets (headers included), such as
// those returned by ReadRawPacket. The sequence id in each header is
// rewritten in place to this writer's sequence, so a relayed response stays
// well numbered even if the two sides' counters differ (for example after
// the proxy has answered part of an exchange itself). b is validated before
// anything is written; ErrMalformedPacket means b does not hold whole
// packets.
func (pw *PacketWriter) WriteRaw(b []byte) error {
	seq := *pw.seq
	for off := 0; off < len(b); {
		if len(b)-off < 4 {
			return malformed("raw packet header")
		}
		size := int(b[off]) | int(b[off+1])<<8 | int(b[off+2])<<16
		if len(b)-off-4 < size {
			return malformed("raw packet length")
		}
		b[off+3] = seq
		seq++
		off += 4 + size
	}
	*pw.seq = seq
	_, err := pw.w.Write(b)
	return err
}

// Flush sends buffered packets to the underlying writer.
func (pw *PacketWriter) Flush() error { return pw.w.Flush() }

// WriteOK writes an OK packet built in the writer's scratch buffer.
func (pw *PacketWriter) WriteOK(ok *OKPacket, caps Capability) error {
	pw.scratch = AppendOK(pw.scratch[:0], ok, caps)
	return pw.WritePacket(pw.scratch)
}

// WriteErr writes an ERR packet built in the writer's scratch buffer.
func (pw *PacketWriter) WriteErr(e *SQLError, caps Capability) error {
	pw.scratch = AppendErr(pw.scratch[:0], e, caps)
	return pw.WritePacket(pw.scratch)
}

// WriteEOF writes the packet that ends a result set (or its metadata): a
// classic EOF packet, or with CLIENT_DEPRECATE_EOF an OK packet with the
// 0xFE header. See AppendResultSetTerminator.
func (pw *PacketWriter) WriteEOF(warnings uint16, status StatusFlag, caps Capability) error {
	pw.scratch = AppendResultSetTerminator(pw.scratch[:0], warnings, status, caps)
	return pw.WritePacket(pw.scratch)
}
