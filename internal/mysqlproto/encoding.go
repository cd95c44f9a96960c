package mysqlproto

import (
	"bytes"
	"encoding/binary"
)

// Length-encoded integer prefixes. 0xFB marks NULL in row data; 0xFF never
// starts a length-encoded integer (it would be an ERR packet header).
const (
	lenEncNull  = 0xfb
	lenEnc2Byte = 0xfc
	lenEnc3Byte = 0xfd
	lenEnc8Byte = 0xfe
)

// AppendLenEncInt appends v as a length-encoded integer (int<lenenc>).
func AppendLenEncInt(dst []byte, v uint64) []byte {
	switch {
	case v < 251:
		return append(dst, byte(v))
	case v < 1<<16:
		return append(dst, lenEnc2Byte, byte(v), byte(v>>8))
	case v < 1<<24:
		return append(dst, lenEnc3Byte, byte(v), byte(v>>8), byte(v>>16))
	default:
		dst = append(dst, lenEnc8Byte)
		return binary.LittleEndian.AppendUint64(dst, v)
	}
}

// LenEncIntSize returns how many bytes AppendLenEncInt uses for v.
func LenEncIntSize(v uint64) int {
	switch {
	case v < 251:
		return 1
	case v < 1<<16:
		return 3
	case v < 1<<24:
		return 4
	default:
		return 9
	}
}

// AppendLenEncString appends s as a length-encoded string (string<lenenc>).
func AppendLenEncString(dst []byte, s string) []byte {
	dst = AppendLenEncInt(dst, uint64(len(s)))
	return append(dst, s...)
}

// AppendLenEncBytes is AppendLenEncString for a byte slice.
func AppendLenEncBytes(dst, b []byte) []byte {
	dst = AppendLenEncInt(dst, uint64(len(b)))
	return append(dst, b...)
}

// AppendNullString appends s followed by a NUL byte (string<NUL>). s must
// not contain NUL; that is the caller's contract, as in the protocol.
func AppendNullString(dst []byte, s string) []byte {
	dst = append(dst, s...)
	return append(dst, 0)
}

// AppendUint16 appends v as int<2> (little endian).
func AppendUint16(dst []byte, v uint16) []byte { return binary.LittleEndian.AppendUint16(dst, v) }

// AppendUint24 appends the low 24 bits of v as int<3>.
func AppendUint24(dst []byte, v uint32) []byte { return append(dst, byte(v), byte(v>>8), byte(v>>16)) }

// AppendUint32 appends v as int<4>.
func AppendUint32(dst []byte, v uint32) []byte { return binary.LittleEndian.AppendUint32(dst, v) }

// AppendUint64 appends v as int<8>.
func AppendUint64(dst []byte, v uint64) []byte { return binary.LittleEndian.AppendUint64(dst, v) }

// ReadLenEncInt decodes a length-encoded integer at the start of b and
// returns its value, whether it was the NULL marker (0xFB), and how many
// bytes it used.
func ReadLenEncInt(b []byte) (v uint64, isNull bool, n int, err error) {
	d := decoder{b: b}
	v, isNull = d.lenEncInt()
	if d.err != nil {
		return 0, false, 0, d.err
	}
	return v, isNull, d.pos, nil
}

// ReadLenEncString decodes a length-encoded string at the start of b. The
// returned slice aliases b.
func ReadLenEncString(b []byte) (s []byte, isNull bool, n int, err error) {
	d := decoder{b: b}
	l, isNull := d.lenEncInt()
	if !isNull {
		s = d.bytesN(l)
	}
	if d.err != nil {
		return nil, false, 0, d.err
	}
	return s, isNull, d.pos, nil
}

// ReadNullString decodes a NUL-terminated string at the start of b. n
// includes the terminator; s aliases b and excludes it.
func ReadNullString(b []byte) (s []byte, n int, err error) {
	d := decoder{b: b}
	s = d.nulString()
	if d.err != nil {
		return nil, 0, d.err
	}
	return s, d.pos, nil
}

// ReadUint16 decodes int<2> at the start of b.
func ReadUint16(b []byte) (uint16, error) {
	if len(b) < 2 {
		return 0, malformed("int<2>")
	}
	return binary.LittleEndian.Uint16(b), nil
}

// ReadUint24 decodes int<3> at the start of b.
func ReadUint24(b []byte) (uint32, error) {
	if len(b) < 3 {
		return 0, malformed("int<3>")
	}
	return uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16, nil
}

// ReadUint32 decodes int<4> at the start of b.
func ReadUint32(b []byte) (uint32, error) {
	if len(b) < 4 {
		return 0, malformed("int<4>")
	}
	return binary.LittleEndian.Uint32(b), nil
}

// ReadUint64 decodes int<8> at the start of b.
func ReadUint64(b []byte) (uint64, error) {
	if len(b) < 8 {
		return 0, malformed("int<8>")
	}
	return binary.LittleEndian.Uint64(b), nil
}

// decoder is a bounds-checked cursor over a payload. The first short read
// latches err and every later read returns zero values, so a parser reads
// all its fields and checks err once; no input can make it panic or index
// out of range.
type decoder struct {
	b   []byte
	pos int
	err error
}

func (d *decoder) fail() {
	if d.err == nil {
		d.err = ErrMalformedPacket
	}
	d.pos = len(d.b)
}

func (d *decoder) remaining() int { return len(d.b) - d.pos }

func (d *decoder) take(n int) []byte {
	if d.err != nil || n < 0 || n > len(d.b)-d.pos {
		d.fail()
		return nil
	}
	s := d.b[d.pos : d.pos+n : d.pos+n]
	d.pos += n
	return s
}

func (d *decoder) u8() byte {
	if s := d.take(1); s != nil {
		return s[0]
	}
	return 0
}

func (d *decoder) peek() (byte, bool) {
	if d.err != nil || d.pos >= len(d.b) {
		return 0, false
	}
	return d.b[d.pos], true
}

func (d *decoder) u16() uint16 {
	if s := d.take(2); s != nil {
		return binary.LittleEndian.Uint16(s)
	}
	return 0
}

func (d *decoder) u24() uint32 {
	if s := d.take(3); s != nil {
		return uint32(s[0]) | uint32(s[1])<<8 | uint32(s[2])<<16
	}
	return 0
}

func (d *decoder) u32() uint32 {
	if s := d.take(4); s != nil {
		return binary.LittleEndian.Uint32(s)
	}
	return 0
}

func (d *decoder) u64() uint64 {
	if s := d.take(8); s != nil {
		return binary.LittleEndian.Uint64(s)
	}
	return 0
}

// bytesN takes n bytes where n came off the wire as a uint64.
func (d *decoder) bytesN(n uint64) []byte {
	if n > uint64(d.remaining()) {
		d.fail()
		return nil
	}
	return d.take(int(n))
}

func (d *decoder) lenEncInt() (v uint64, isNull bool) {
	switch c := d.u8(); c {
	case lenEncNull:
		return 0, true
	case lenEnc2Byte:
		return uint64(d.u16()), false
	case lenEnc3Byte:
		return uint64(d.u24()), false
	case lenEnc8Byte:
		return d.u64(), false
	case 0xff:
		d.fail()
		return 0, false
	default:
		return uint64(c), false
	}
}

// lenEncBytes reads a string<lenenc>; NULL is treated as malformed because
// outside row data a NULL length has no meaning.
func (d *decoder) lenEncBytes() []byte {
	n, isNull := d.lenEncInt()
	if isNull {
		d.fail()
		return nil
	}
	return d.bytesN(n)
}

func (d *decoder) nulString() []byte {
	if d.err != nil {
		return nil
	}
	i := bytes.IndexByte(d.b[d.pos:], 0)
	if i < 0 {
		d.fail()
		return nil
	}
	s := d.b[d.pos : d.pos+i : d.pos+i]
	d.pos += i + 1
	return s
}

// nulStringOrRest reads a NUL-terminated string, accepting a missing
// terminator at the end of the packet: some servers and clients omit it on
// the last field (MySQL bug #59453 for the plugin name).
func (d *decoder) nulStringOrRest() []byte {
	if d.err != nil {
		return nil
	}
	if bytes.IndexByte(d.b[d.pos:], 0) < 0 {
		return d.rest()
	}
	return d.nulString()
}

func (d *decoder) rest() []byte {
	if d.err != nil {
		return nil
	}
	s := d.b[d.pos:len(d.b):len(d.b)]
	d.pos = len(d.b)
	return s
}
