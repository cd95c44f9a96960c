package mysqlproto

import (
	"bytes"
	"errors"
	"testing"
)

func TestLenEncIntRoundTrip(t *testing.T) {
	tests := []struct {
		v      uint64
		prefix byte // first encoded byte, 0 for "the value itself"
		size   int
	}{
		{0, 0, 1},
		{1, 0, 1},
		{250, 0, 1},
		{251, 0xfc, 3},
		{0xffff, 0xfc, 3},
		{0x10000, 0xfd, 4},
		{0xffffff, 0xfd, 4},
		{0x1000000, 0xfe, 9},
		{1<<64 - 1, 0xfe, 9},
	}
	for _, tt := range tests {
		enc := AppendLenEncInt([]byte{0xaa}, tt.v)[1:]
		if len(enc) != tt.size || LenEncIntSize(tt.v) != tt.size {
			t.Errorf("%d: encoded %d bytes (size fn %d), want %d", tt.v, len(enc), LenEncIntSize(tt.v), tt.size)
		}
		if tt.prefix != 0 && enc[0] != tt.prefix {
			t.Errorf("%d: prefix %#x, want %#x", tt.v, enc[0], tt.prefix)
		}
		v, isNull, n, err := ReadLenEncInt(append(enc, 0x99))
		if err != nil || isNull || n != tt.size || v != tt.v {
			t.Errorf("%d: read back %d null=%v n=%d err=%v", tt.v, v, isNull, n, err)
		}
		for cut := 0; cut < len(enc); cut++ {
			if _, _, _, err := ReadLenEncInt(enc[:cut]); !errors.Is(err, ErrMalformedPacket) {
				t.Errorf("%d truncated to %d: err = %v", tt.v, cut, err)
			}
		}
	}
}

func TestLenEncIntSpecialPrefixes(t *testing.T) {
	if _, isNull, n, err := ReadLenEncInt([]byte{0xfb}); err != nil || !isNull || n != 1 {
		t.Errorf("0xFB: null=%v n=%d err=%v", isNull, n, err)
	}
	if _, _, _, err := ReadLenEncInt([]byte{0xff, 0, 0}); !errors.Is(err, ErrMalformedPacket) {
		t.Errorf("0xFF: err = %v", err)
	}
}

func TestLenEncStringRoundTrip(t *testing.T) {
	for _, n := range []int{0, 1, 250, 251, 70000} {
		s := bytes.Repeat([]byte{'x'}, n)
		enc := AppendLenEncBytes(nil, s)
		if !bytes.Equal(enc, AppendLenEncString(nil, string(s))) {
			t.Fatalf("%d: string and bytes encoders differ", n)
		}
		got, isNull, used, err := ReadLenEncString(append(enc, 'z'))
		if err != nil || isNull || used != len(enc) || !bytes.Equal(got, s) {
			t.Fatalf("%d: got %d bytes used=%d err=%v", n, len(got), used, err)
		}
		if _, _, _, err := ReadLenEncString(enc[:len(enc)-1]); n > 0 && err == nil {
			t.Errorf("%d: truncated string accepted", n)
		}
	}
	if _, isNull, _, err := ReadLenEncString([]byte{0xfb}); err != nil || !isNull {
		t.Errorf("NULL string: null=%v err=%v", isNull, err)
	}
}

func TestNullString(t *testing.T) {
	enc := AppendNullString(nil, "root")
	s, n, err := ReadNullString(append(enc, "rest"...))
	if err != nil || string(s) != "root" || n != 5 {
		t.Fatalf("got %q n=%d err=%v", s, n, err)
	}
	if _, _, err := ReadNullString([]byte("no terminator")); !errors.Is(err, ErrMalformedPacket) {
		t.Errorf("unterminated: err = %v", err)
	}
	if s, n, err := ReadNullString([]byte{0}); err != nil || len(s) != 0 || n != 1 {
		t.Errorf("empty: %q %d %v", s, n, err)
	}
}

func TestFixedInts(t *testing.T) {
	b := AppendUint16(nil, 0x1234)
	b = AppendUint24(b, 0x563412)
	b = AppendUint32(b, 0xdeadbeef)
	b = AppendUint64(b, 0x0102030405060708)
	want := []byte{0x34, 0x12, 0x12, 0x34, 0x56, 0xef, 0xbe, 0xad, 0xde, 8, 7, 6, 5, 4, 3, 2, 1}
	if !bytes.Equal(b, want) {
		t.Fatalf("encoded % x", b)
	}
	if v, err := ReadUint16(b); err != nil || v != 0x1234 {
		t.Errorf("u16 %x %v", v, err)
	}
	if v, err := ReadUint24(b[2:]); err != nil || v != 0x563412 {
		t.Errorf("u24 %x %v", v, err)
	}
	if v, err := ReadUint32(b[5:]); err != nil || v != 0xdeadbeef {
		t.Errorf("u32 %x %v", v, err)
	}
	if v, err := ReadUint64(b[9:]); err != nil || v != 0x0102030405060708 {
		t.Errorf("u64 %x %v", v, err)
	}
	short := []byte{1}
	for name, err := range map[string]error{
		"u16": second(ReadUint16(short)), "u24": second(ReadUint24(short[:0])),
		"u32": second(ReadUint32(b[:3])), "u64": second(ReadUint64(b[:7])),
	} {
		if !errors.Is(err, ErrMalformedPacket) {
			t.Errorf("%s truncated: %v", name, err)
		}
	}
}

func second[T any](_ T, err error) error { return err }

func TestDecoderNeverPanicsOnShortInput(t *testing.T) {
	d := decoder{b: []byte{1}}
	d.u32()
	d.u8()
	d.take(-1)
	d.bytesN(1 << 62)
	d.nulString()
	d.lenEncBytes()
	if d.err == nil || d.remaining() != 0 {
		t.Fatalf("err=%v remaining=%d", d.err, d.remaining())
	}
}
