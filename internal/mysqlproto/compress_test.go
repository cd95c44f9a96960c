package mysqlproto

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"time"
)

// TestCompressorRoundTrip sends packets of many sizes through the
// compressed layer, cut into compressed packets at arbitrary points (as
// servers do when their buffer fills), and reads them back.
func TestCompressorRoundTrip(t *testing.T) {
	var wire bytes.Buffer
	w := NewCompressor(nil, &wire, 0)
	bw := bufio.NewWriterSize(w, 100) // a small buffer cuts packets apart
	pw := NewPacketWriter(bw)
	payloads := [][]byte{
		[]byte("x"),
		[]byte(strings.Repeat("SELECT 1; ", 40)),
		bytes.Repeat([]byte{0xAB}, MaxPayloadLen+10), // two physical packets
		{},
	}
	for _, p := range payloads {
		if err := pw.WritePacket(p); err != nil {
			t.Fatal(err)
		}
	}
	if err := bw.Flush(); err != nil {
		t.Fatal(err)
	}
	if wire.Len() > 1<<20 {
		t.Fatalf("16 MiB of one repeated byte took %d bytes on the wire: not compressed", wire.Len())
	}
	r := NewCompressor(&wire, nil, 0)
	pr := NewPacketReader(bufio.NewReader(r), 64<<20)
	for i, want := range payloads {
		got, err := pr.ReadPacket()
		if err != nil {
			t.Fatalf("packet %d: %v", i, err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("packet %d: got %d bytes, want %d", i, len(got), len(want))
		}
	}
	if r.Seq() != w.Seq() {
		t.Errorf("compressed sequence: reader continues at %d, writer at %d", r.Seq(), w.Seq())
	}
}

// TestCompressorSmallStored: payloads under MIN_COMPRESS_LENGTH travel
// uncompressed, announced with an uncompressed length of 0.
func TestCompressorSmallStored(t *testing.T) {
	var wire bytes.Buffer
	c := NewCompressor(nil, &wire, 0)
	if _, err := c.Write([]byte{1, 0, 0, 0, 0x0e}); err != nil {
		t.Fatal(err)
	}
	want := []byte{5, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0x0e}
	if !bytes.Equal(wire.Bytes(), want) {
		t.Fatalf("wire = % x, want % x", wire.Bytes(), want)
	}
}

// TestCompressorRejects: a payload larger than the limit, a lie about the
// inflated size, and garbage instead of zlib data are errors, not hangs.
func TestCompressorRejects(t *testing.T) {
	var big bytes.Buffer
	NewCompressor(nil, &big, 0).Write(bytes.Repeat([]byte("a"), 4000))
	cases := map[string][]byte{
		"too large": {0xff, 0xff, 0x7f, 0, 0, 0, 0},
		"garbage":   append([]byte{4, 0, 0, 0, 100, 0, 0}, 1, 2, 3, 4),
		"size lie": func() []byte {
			b := bytes.Clone(big.Bytes())
			b[4], b[5] = 10, 0 // announces 10 bytes, inflates to 4000
			return b
		}(),
	}
	for name, wire := range cases {
		c := NewCompressor(bytes.NewReader(wire), nil, 1<<20)
		_, err := c.Read(make([]byte, 10))
		if err == nil {
			t.Errorf("%s: no error", name)
			continue
		}
		if name == "too large" && !errors.Is(err, ErrPacketTooLarge) {
			t.Errorf("%s: %v", name, err)
		}
		if name != "too large" && !errors.Is(err, ErrCompressedPacket) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// TestConnCompressedSequence follows MySQL's net_flush: after a flush the
// packet sequence continues from the compressed one, and inside
// compressed packets sequence ids are not checked.
func TestConnCompressedSequence(t *testing.T) {
	var wire bytes.Buffer
	srv := NewConn(bufio.NewReader(bytes.NewReader(nil)), nil, 0)
	comp := srv.StartCompression(&wire)
	srv.SetWriter(bufio.NewWriter(comp))
	srv.ResetSeq()
	srv.SetSeq(1) // as after reading a one-packet command
	for i := 0; i < 3; i++ {
		if err := srv.WritePacket([]byte("row")); err != nil {
			t.Fatal(err)
		}
	}
	if err := srv.Flush(); err != nil {
		t.Fatal(err)
	}
	if srv.Seq() != 1 {
		t.Fatalf("after one compressed packet the sequence is %d, want 1 (the compressed one)", srv.Seq())
	}
	cli := NewConn(bufio.NewReader(&wire), nil, 0)
	cli.StartCompression(nil)
	cli.SetSeq(7) // wrong on purpose: not checked in compressed mode
	for i := 0; i < 3; i++ {
		if _, err := cli.ReadPacket(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestCompressedConnReleasesLargeBuffers: after a large compressed
// packet, a Conn lets go of the reader's and the compressor's buffers,
// and reads on normally.
func TestCompressedConnReleasesLargeBuffers(t *testing.T) {
	var wire bytes.Buffer
	w := NewCompressor(nil, &wire, 0)
	bw := bufio.NewWriter(w)
	pw := NewPacketWriter(bw)
	big := bytes.Repeat([]byte("0123456789abcdef"), 256<<10) // 4 MiB
	for _, p := range [][]byte{big, []byte("after")} {
		pw.ResetSeq()
		if err := pw.WritePacket(p); err != nil {
			t.Fatal(err)
		}
		if err := bw.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	c := NewConn(bufio.NewReader(&wire), bufio.NewWriter(io.Discard), 64<<20)
	c.StartCompression(io.Discard)
	got, err := c.ReadPacket()
	if err != nil || len(got) != len(big) {
		t.Fatalf("%d bytes, %v", len(got), err)
	}
	if n := c.ReleaseLargeBuffers(); n < 2*len(big) {
		t.Errorf("released %d bytes after a %d-byte packet, want the reader's and the inflated buffer", n, len(big))
	}
	c.ResetSeq()
	if got, err := c.ReadPacket(); err != nil || string(got) != "after" {
		t.Fatalf("after release: %q %v", got, err)
	}
	if n := c.ReleaseLargeBuffers(); n != 0 {
		t.Errorf("released %d bytes after a small packet", n)
	}
}

// TestCompressedCommandOver16MiB reads a command over 16 MiB framed as
// go-sql-driver frames it with compress=true: each inner packet (a full
// 16 MiB-1 chunk with its header is 16 MiB+3 bytes) goes out in its own
// compressed packets, so the command takes three compressed packets for
// two inner ones. MariaDB numbers its answer after the compressed
// packets (my_net_read keeps one counter, the compressed one): the
// answer must start at 3, in both headers, not at 2.
func TestCompressedCommandOver16MiB(t *testing.T) {
	payload := bytes.Repeat([]byte("SELECT 'galeon' "), (MaxPayloadLen+16)/16)
	var stream bytes.Buffer
	pw := NewPacketWriter(bufio.NewWriter(&stream))
	if err := pw.WritePacket(payload); err != nil {
		t.Fatal(err)
	}
	if err := pw.Flush(); err != nil {
		t.Fatal(err)
	}
	var wire bytes.Buffer
	cli := NewCompressor(nil, &wire, 0)
	first := 4 + MaxPayloadLen
	for _, p := range [][]byte{stream.Bytes()[:first], stream.Bytes()[first:]} {
		if _, err := cli.Write(p); err != nil { // 16 MiB-1 + 4 bytes, then the rest
			t.Fatal(err)
		}
	}
	if cli.Seq() != 3 {
		t.Fatalf("the client framing took %d compressed packets, want 3", cli.Seq())
	}

	var out bytes.Buffer
	srv := NewConn(bufio.NewReader(&wire), nil, 64<<20)
	srv.SetWriter(bufio.NewWriter(srv.StartCompression(&out)))
	srv.ResetSeq()
	got, err := srv.ReadPacket()
	if err != nil || !bytes.Equal(got, payload) {
		t.Fatalf("read %d bytes (%v), want the %d-byte command", len(got), err, len(payload))
	}
	if srv.Seq() != 3 {
		t.Errorf("after the command the packet sequence is %d, want 3 (the compressed one, as MariaDB's)", srv.Seq())
	}
	if err := srv.WriteOK(&OKPacket{}, ClientProtocol41); err != nil {
		t.Fatal(err)
	}
	if err := srv.Flush(); err != nil {
		t.Fatal(err)
	}
	// A small answer is stored: 7-byte compressed header, then the packet.
	if b := out.Bytes(); len(b) < 11 || b[3] != 3 || b[4] != 0 || b[10] != 3 {
		t.Errorf("answer % x: want compressed and packet sequence ids 3", b[:min(len(b), 12)])
	}
}

// TestCompressedOversizeFailsFast: a compressed command over the reader's
// limit fails at the header of the chunk that crosses it, while the
// client is still sending, rather than waiting for the rest (so the proxy
// can answer ER_NET_PACKET_TOO_LARGE as the server does).
func TestCompressedOversizeFailsFast(t *testing.T) {
	payload := bytes.Repeat([]byte("x"), MaxPayloadLen+1000)
	for _, limit := range []int{16 << 20, 8 << 20} { // the inner chain, the compressed packet
		r, w := io.Pipe()
		go func() {
			bw := bufio.NewWriter(NewCompressor(nil, w, 0))
			pw := NewPacketWriter(bw)
			if err := pw.WritePacket(payload); err == nil {
				_ = bw.Flush()
			}
			// Stay open, like a client waiting for the answer.
		}()
		c := NewConn(bufio.NewReader(r), nil, limit)
		c.StartCompression(io.Discard)
		done := make(chan error, 1)
		go func() {
			_, err := c.ReadPacket()
			done <- err
		}()
		select {
		case err := <-done:
			if !errors.Is(err, ErrPacketTooLarge) {
				t.Errorf("limit %d: %v, want ErrPacketTooLarge", limit, err)
			}
		case <-time.After(10 * time.Second):
			t.Errorf("limit %d: the reader still waits 10s after an oversize command", limit)
		}
		r.Close() // unblocks the writer
	}
}
