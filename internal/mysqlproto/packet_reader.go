package mysqlproto

import (
	"bufio"
	"errors"
	"fmt"
	"io"
)

// MaxPayloadLen is the largest payload one physical packet carries. A
// logical packet of this size or more is sent as a chain of MaxPayloadLen
// chunks ended by a shorter (possibly empty) one.
const MaxPayloadLen = 1<<24 - 1

// DefaultMaxPacketSize is the reader limit used when none is given. It
// matches the default max_allowed_packet of MySQL 8.0 (64 MiB).
const DefaultMaxPacketSize = 64 << 20

// retainBufferLimit bounds the buffer ReleaseLargeBuffer keeps.
const retainBufferLimit = 1 << 20

// PacketReader reads MySQL packets from a bufio.Reader, checking sequence
// ids and the size limit. It reuses one buffer for every packet, so the
// slices it returns are valid only until the next read.
//
// A PacketReader is not safe for concurrent use.
type PacketReader struct {
	r       *bufio.Reader
	seq     *uint8
	ownSeq  uint8
	maxSize int
	buf     []byte
	// lenientSeq accepts any sequence id and continues from it: inside
	// compressed packets the ids are not checked by MySQL peers.
	lenientSeq bool
}

// NewPacketReader returns a reader with its own sequence counter starting
// at 0. maxPacketSize limits a reassembled payload; values <= 0 mean
// DefaultMaxPacketSize.
func NewPacketReader(r *bufio.Reader, maxPacketSize int) *PacketReader {
	pr := &PacketReader{}
	pr.init(r, &pr.ownSeq, maxPacketSize)
	return pr
}

func (pr *PacketReader) init(r *bufio.Reader, seq *uint8, maxPacketSize int) {
	pr.r = r
	pr.seq = seq
	pr.SetMaxPacketSize(maxPacketSize)
}

// SetMaxPacketSize changes the payload limit; values <= 0 mean
// DefaultMaxPacketSize.
func (pr *PacketReader) SetMaxPacketSize(n int) {
	if n <= 0 {
		n = DefaultMaxPacketSize
	}
	pr.maxSize = n
}

// SetReader switches to a new source, keeping the sequence id and buffer.
// Use it after upgrading the connection to TLS: the handshake response that
// follows the SSLRequest continues the same sequence.
func (pr *PacketReader) SetReader(r *bufio.Reader) { pr.r = r }

// Seq returns the sequence id the next packet must carry.
func (pr *PacketReader) Seq() uint8 { return *pr.seq }

// SetSeq sets the sequence id the next packet must carry.
func (pr *PacketReader) SetSeq(n uint8) { *pr.seq = n }

// ResetSeq expects sequence id 0 next, as at the start of every command.
func (pr *PacketReader) ResetSeq() { *pr.seq = 0 }

// ReleaseLargeBuffer drops the read buffer if it has grown past 1 MiB, so
// one large BLOB does not pin megabytes to an idle connection, and
// returns how many bytes it let go. Call it when a connection goes idle,
// not between packets of a response.
func (pr *PacketReader) ReleaseLargeBuffer() int {
	if n := cap(pr.buf); n > retainBufferLimit {
		pr.buf = nil
		return n
	}
	return 0
}

// ReadPacket reads one logical packet and returns its payload, joining the
// chunks of a payload of MaxPayloadLen bytes or more. The slice is valid
// until the next call on pr.
func (pr *PacketReader) ReadPacket() ([]byte, error) {
	n := 0
	for {
		size, err := pr.readHeader(n > 0)
		if err != nil {
			return nil, err
		}
		if size > pr.maxSize-n {
			return nil, ErrPacketTooLarge
		}
		if err := pr.readInto(n, size); err != nil {
			return nil, err
		}
		n += size
		if size < MaxPayloadLen {
			return pr.buf[:n], nil
		}
	}
}

// ReadRawPacket reads one logical packet and returns it exactly as it came
// off the wire: each chunk's 4-byte header followed by its payload. It lets
// a proxy relay packets with PacketWriter.WriteRaw without copying them
// apart and back together. The first chunk's payload is RawPayload(raw).
// The slice is valid until the next call on pr.
func (pr *PacketReader) ReadRawPacket() ([]byte, error) {
	n, total := 0, 0
	for {
		hdr, size, err := pr.readRawHeader(n > 0)
		if err != nil {
			return nil, err
		}
		if size > pr.maxSize-total {
			return nil, ErrPacketTooLarge
		}
		pr.grow(n, n+4)
		copy(pr.buf[n:], hdr[:])
		if err := pr.readInto(n+4, size); err != nil {
			return nil, err
		}
		n += 4 + size
		total += size
		if size < MaxPayloadLen {
			return pr.buf[:n], nil
		}
	}
}

// NextBuffered returns the next packet, header included, if the whole of
// it is already in the read buffer: a slice of the buffer itself, not a
// copy, valid until the next read that needs more data from the
// connection (ReadRawPacket, ReadPacket, or a NextBuffered that returns
// false does not count: it reads nothing). Packets returned one after
// another are adjacent in memory, so a relay can write a whole run of
// them at once. ok is false when the packet is not all buffered, or is a
// chunk of a payload of 16 MiB or more: then use ReadRawPacket. The
// sequence id is checked as ReadRawPacket checks it.
func (pr *PacketReader) NextBuffered() (raw []byte, ok bool, err error) {
	n := pr.r.Buffered()
	if n < 4 {
		return nil, false, nil
	}
	h, _ := pr.r.Peek(4)
	size := int(h[0]) | int(h[1])<<8 | int(h[2])<<16
	if size >= MaxPayloadLen || n < 4+size {
		return nil, false, nil
	}
	if size > pr.maxSize {
		return nil, false, ErrPacketTooLarge
	}
	if got, want := h[3], *pr.seq; got != want {
		if !pr.lenientSeq {
			return nil, false, fmt.Errorf("%w: got sequence id %d, want %d", ErrPacketSequence, got, want)
		}
		*pr.seq = got
	}
	*pr.seq++
	raw, _ = pr.r.Peek(4 + size) // buffered: no read
	_, _ = pr.r.Discard(4 + size)
	return raw, true, nil
}

// RawPayload returns the payload of the first physical packet in raw (as
// returned by ReadRawPacket), or nil if raw is too short. For packets under
// 16 MiB that is the whole payload; for longer ones it is the first
// MaxPayloadLen bytes, which is all that packet classification (and so
// ResponseFramer) needs.
func RawPayload(raw []byte) []byte {
	if len(raw) < 4 {
		return nil
	}
	size := int(raw[0]) | int(raw[1])<<8 | int(raw[2])<<16
	if len(raw)-4 < size {
		return nil
	}
	return raw[4 : 4+size]
}

func (pr *PacketReader) readRawHeader(continuation bool) (hdr [4]byte, size int, err error) {
	h, err := pr.r.Peek(4)
	if err != nil {
		if len(h) > 0 || continuation {
			err = noEOF(err)
		}
		return hdr, 0, err
	}
	copy(hdr[:], h)
	_, _ = pr.r.Discard(4) // cannot fail: the bytes are buffered
	if got, want := hdr[3], *pr.seq; got != want {
		if !pr.lenientSeq {
			return hdr, 0, fmt.Errorf("%w: got sequence id %d, want %d", ErrPacketSequence, got, want)
		}
		*pr.seq = got
	}
	*pr.seq++
	return hdr, int(hdr[0]) | int(hdr[1])<<8 | int(hdr[2])<<16, nil
}

func (pr *PacketReader) readHeader(continuation bool) (int, error) {
	_, size, err := pr.readRawHeader(continuation)
	return size, err
}

// readInto reads size bytes into pr.buf at off. The buffer grows with the
// data actually received rather than with the length the header claims, so
// a peer cannot make the proxy allocate max-packet-size bytes per
// connection by sending headers alone.
func (pr *PacketReader) readInto(off, size int) error {
	end := off + size
	for off < end {
		step := min(end-off, max(readStep, cap(pr.buf)-off, off))
		pr.grow(off, off+step)
		if _, err := io.ReadFull(pr.r, pr.buf[off:off+step]); err != nil {
			return noEOF(err)
		}
		off += step
	}
	return nil
}

// readStep is the smallest amount readInto grows the buffer by at once.
const readStep = 64 << 10

// minReadBuffer is the smallest read buffer: a login's packets fit, so an
// idle client connection holds no more (it was 4 KiB, which was a third
// of the memory of an idle client session; BenchmarkIdleSession in
// internal/proxy). A connection whose packets are larger grows it by
// doubling, a few times at most, and keeps it.
const minReadBuffer = 512

// grow makes pr.buf at least need bytes long, keeping the first keep bytes.
func (pr *PacketReader) grow(keep, need int) {
	if need <= cap(pr.buf) {
		pr.buf = pr.buf[:cap(pr.buf)]
		return
	}
	newCap := max(need, 2*cap(pr.buf), minReadBuffer)
	nb := make([]byte, newCap)
	copy(nb, pr.buf[:keep])
	pr.buf = nb
}

// noEOF turns a clean EOF in the middle of a packet into io.ErrUnexpectedEOF.
// A clean EOF before a packet's first byte stays io.EOF: the peer closed.
func noEOF(err error) error {
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}
