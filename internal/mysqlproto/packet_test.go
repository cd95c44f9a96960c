package mysqlproto

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"testing"
)

// writePackets returns the wire bytes of payloads written with sequence
// ids starting at 0.
func writePackets(t testing.TB, payloads ...[]byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := bufio.NewWriter(&buf)
	pw := NewPacketWriter(w)
	for _, p := range payloads {
		if err := pw.WritePacket(p); err != nil {
			t.Fatal(err)
		}
	}
	if err := pw.Flush(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func newReader(b []byte, max int) *PacketReader {
	return NewPacketReader(bufio.NewReader(bytes.NewReader(b)), max)
}

func pattern(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7 + i>>16)
	}
	return b
}

func TestPacketRoundTrip(t *testing.T) {
	sizes := []int{0, 1, 100, MaxPayloadLen - 1, MaxPayloadLen, MaxPayloadLen + 1, 2*MaxPayloadLen + 5}
	wantPackets := []int{1, 1, 1, 1, 2, 2, 3}
	for i, size := range sizes {
		p := pattern(size)
		wire := writePackets(t, p, []byte("after"))
		if got, want := len(wire), size+4*wantPackets[i]+4+5; got != want {
			t.Errorf("size %d: %d wire bytes, want %d", size, got, want)
		}
		r := newReader(wire, 3*MaxPayloadLen)
		got, err := r.ReadPacket()
		if err != nil || !bytes.Equal(got, p) {
			t.Fatalf("size %d: got %d bytes, err %v", size, len(got), err)
		}
		if r.Seq() != uint8(wantPackets[i]) {
			t.Errorf("size %d: next seq %d, want %d", size, r.Seq(), wantPackets[i])
		}
		got, err = r.ReadPacket()
		if err != nil || string(got) != "after" {
			t.Fatalf("size %d: trailing packet %q, %v", size, got, err)
		}
		if _, err := r.ReadPacket(); err != io.EOF {
			t.Errorf("size %d: at end err = %v, want io.EOF", size, err)
		}
	}
}

func TestWritePacketExactMultipleSendsEmptyTrailer(t *testing.T) {
	wire := writePackets(t, make([]byte, MaxPayloadLen))
	if len(wire) != MaxPayloadLen+8 {
		t.Fatalf("wire length %d", len(wire))
	}
	trailer := wire[len(wire)-4:]
	if !bytes.Equal(trailer, []byte{0, 0, 0, 1}) {
		t.Fatalf("trailer header % x", trailer)
	}
	if !bytes.Equal(wire[:4], []byte{0xff, 0xff, 0xff, 0}) {
		t.Fatalf("first header % x", wire[:4])
	}
}

func TestMaxPacketSize(t *testing.T) {
	tests := []struct {
		name string
		size int
		max  int
		ok   bool
	}{
		{"at limit", 1000, 1000, true},
		{"over limit", 1001, 1000, false},
		{"split packet over limit", MaxPayloadLen + 10, MaxPayloadLen + 9, false},
		{"split packet at limit", MaxPayloadLen + 10, MaxPayloadLen + 10, true},
	}
	for _, tt := range tests {
		wire := writePackets(t, pattern(tt.size))
		for _, raw := range []bool{false, true} {
			r := newReader(wire, tt.max)
			var err error
			if raw {
				_, err = r.ReadRawPacket()
			} else {
				_, err = r.ReadPacket()
			}
			if tt.ok && err != nil {
				t.Errorf("%s (raw=%v): %v", tt.name, raw, err)
			}
			if !tt.ok && !errors.Is(err, ErrPacketTooLarge) {
				t.Errorf("%s (raw=%v): err = %v, want ErrPacketTooLarge", tt.name, raw, err)
			}
		}
	}
}

func TestSequenceMismatch(t *testing.T) {
	wire := writePackets(t, []byte("a"), []byte("b"))
	r := newReader(wire, 0)
	r.SetSeq(1)
	if _, err := r.ReadPacket(); !errors.Is(err, ErrPacketSequence) {
		t.Fatalf("err = %v, want ErrPacketSequence", err)
	}

	// Skipping a packet is detected too.
	r = newReader(wire[5:], 0)
	if _, err := r.ReadPacket(); !errors.Is(err, ErrPacketSequence) {
		t.Fatalf("err = %v, want ErrPacketSequence", err)
	}

	// A bad sequence id on a continuation chunk.
	big := writePackets(t, make([]byte, MaxPayloadLen+1))
	big[MaxPayloadLen+4+3] = 7
	if _, err := newReader(big, 0).ReadPacket(); !errors.Is(err, ErrPacketSequence) {
		t.Fatalf("continuation: err = %v", err)
	}
}

func TestSequenceWraps(t *testing.T) {
	payloads := make([][]byte, 300)
	for i := range payloads {
		payloads[i] = []byte{byte(i)}
	}
	r := newReader(writePackets(t, payloads...), 0)
	for i := range payloads {
		p, err := r.ReadPacket()
		if err != nil || p[0] != byte(i) {
			t.Fatalf("packet %d: %v %v", i, p, err)
		}
	}
}

func TestTruncatedStreams(t *testing.T) {
	wire := writePackets(t, pattern(50))
	big := writePackets(t, pattern(MaxPayloadLen))
	tests := []struct {
		name string
		b    []byte
		want error
	}{
		{"empty", nil, io.EOF},
		{"partial header", wire[:2], io.ErrUnexpectedEOF},
		{"partial payload", wire[:20], io.ErrUnexpectedEOF},
		{"missing continuation", big[:MaxPayloadLen+4], io.ErrUnexpectedEOF},
	}
	for _, tt := range tests {
		if _, err := newReader(tt.b, 0).ReadPacket(); !errors.Is(err, tt.want) {
			t.Errorf("%s: ReadPacket err = %v, want %v", tt.name, err, tt.want)
		}
		if _, err := newReader(tt.b, 0).ReadRawPacket(); !errors.Is(err, tt.want) {
			t.Errorf("%s: ReadRawPacket err = %v, want %v", tt.name, err, tt.want)
		}
	}
}

func TestRawRelay(t *testing.T) {
	payloads := [][]byte{[]byte("one"), pattern(MaxPayloadLen + 3), {}, []byte("four")}
	wire := writePackets(t, payloads...)
	r := newReader(wire, 0)

	var out bytes.Buffer
	bw := bufio.NewWriter(&out)
	w := NewPacketWriter(bw)
	for i, p := range payloads {
		raw, err := r.ReadRawPacket()
		if err != nil {
			t.Fatal(err)
		}
		head := RawPayload(raw)
		if want := p[:min(len(p), MaxPayloadLen)]; !bytes.Equal(head, want) {
			t.Fatalf("packet %d: RawPayload has %d bytes, want %d", i, len(head), len(want))
		}
		if err := w.WriteRaw(raw); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out.Bytes(), wire) {
		t.Fatal("relayed bytes differ from the original")
	}
}

func TestWriteRawRenumbers(t *testing.T) {
	wire := writePackets(t, []byte("a"), []byte("bc"))
	var out bytes.Buffer
	bw := bufio.NewWriter(&out)
	w := NewPacketWriter(bw)
	w.SetSeq(5)
	if err := w.WriteRaw(bytes.Clone(wire)); err != nil {
		t.Fatal(err)
	}
	_ = w.Flush()
	if got := out.Bytes(); got[3] != 5 || got[8] != 6 || w.Seq() != 7 {
		t.Fatalf("sequence ids %d, %d, next %d", got[3], got[8], w.Seq())
	}
	for _, bad := range [][]byte{{1, 0}, {5, 0, 0, 0, 'x'}} {
		if err := w.WriteRaw(bad); !errors.Is(err, ErrMalformedPacket) {
			t.Errorf("WriteRaw(% x) err = %v", bad, err)
		}
	}
	if w.Seq() != 7 {
		t.Errorf("failed WriteRaw moved the sequence to %d", w.Seq())
	}
	if RawPayload([]byte{5, 0, 0, 0}) != nil || RawPayload(nil) != nil {
		t.Error("RawPayload accepted a short packet")
	}
}

func TestConnSharesSequence(t *testing.T) {
	// The server reads a command (seq 0) and answers with seq 1, 2.
	var out bytes.Buffer
	in := writePackets(t, []byte{byte(ComQuery), 'x'})
	c := NewConn(bufio.NewReader(bytes.NewReader(in)), bufio.NewWriter(&out), 0)
	if _, err := c.ReadPacket(); err != nil {
		t.Fatal(err)
	}
	if c.Seq() != 1 {
		t.Fatalf("seq after read = %d", c.Seq())
	}
	_ = c.WriteOK(&OKPacket{}, ClientProtocol41)
	_ = c.WriteErr(NewSQLError(ErUnknownError, "x"), ClientProtocol41)
	_ = c.Flush()
	b := out.Bytes()
	if b[3] != 1 || b[4+int(b[0])+3] != 2 || c.Seq() != 3 {
		t.Fatalf("reply sequence ids wrong: % x", b)
	}
	c.ResetSeq()
	if c.PacketReader.Seq() != 0 || c.PacketWriter.Seq() != 0 {
		t.Fatal("ResetSeq did not reach both directions")
	}
}

func TestReleaseLargeBuffer(t *testing.T) {
	r := newReader(writePackets(t, pattern(2<<20), []byte("x")), 0)
	if _, err := r.ReadPacket(); err != nil {
		t.Fatal(err)
	}
	if n := r.ReleaseLargeBuffer(); r.buf != nil || n < 2<<20 {
		t.Fatalf("large buffer kept (released %d bytes)", n)
	}
	if p, err := r.ReadPacket(); err != nil || string(p) != "x" {
		t.Fatalf("%q %v", p, err)
	}
	if n := r.ReleaseLargeBuffer(); r.buf == nil || n != 0 {
		t.Fatalf("small buffer dropped (released %d bytes)", n)
	}
}

func TestPacketIODoesNotAllocate(t *testing.T) {
	payload := pattern(3000)
	wire := writePackets(t, payload)
	src := bytes.NewReader(wire)
	br := bufio.NewReader(src)
	r := NewPacketReader(br, 0)
	bw := bufio.NewWriter(io.Discard)
	w := NewPacketWriter(bw)
	ok := &OKPacket{AffectedRows: 3, Status: ServerStatusAutocommit}

	run := func() {
		src.Reset(wire)
		br.Reset(src)
		r.ResetSeq()
		p, err := r.ReadPacket()
		if err != nil {
			t.Fatal(err)
		}
		w.ResetSeq()
		if err := w.WritePacket(p); err != nil {
			t.Fatal(err)
		}
		if err := w.WriteOK(ok, ClientProtocol41); err != nil {
			t.Fatal(err)
		}
		src.Reset(wire)
		br.Reset(src)
		r.ResetSeq()
		raw, err := r.ReadRawPacket()
		if err != nil {
			t.Fatal(err)
		}
		if err := w.WriteRaw(raw); err != nil {
			t.Fatal(err)
		}
		_ = w.Flush()
	}
	run() // grow buffers
	if n := testing.AllocsPerRun(100, run); n != 0 {
		t.Fatalf("%v allocations per read/write cycle", n)
	}
}

func BenchmarkReadPacket(b *testing.B) {
	wire := writePackets(b, pattern(1024))
	src := bytes.NewReader(wire)
	br := bufio.NewReader(src)
	r := NewPacketReader(br, 0)
	b.SetBytes(int64(len(wire)))
	b.ReportAllocs()
	for b.Loop() {
		src.Reset(wire)
		br.Reset(src)
		r.ResetSeq()
		if _, err := r.ReadPacket(); err != nil {
			b.Fatal(err)
		}
	}
}
