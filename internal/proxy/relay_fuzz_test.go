package proxy_test

import (
	"bufio"
	"bytes"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/galeon-db/galeon/internal/config"
	"github.com/galeon-db/galeon/internal/mysqlproto"
	"github.com/galeon-db/galeon/internal/mysqlproto/prototest"
	"github.com/galeon-db/galeon/internal/proxy/proxytest"
)

// scriptedNode is a fake MySQL node behind the proxy: it answers
// "SELECT scripted" with the packets of the current script, cut into
// the current chunks (each written on its own, so the proxy's reads end
// at arbitrary places: in a header, mid-row, between rows), and anything
// else with OK.
type scriptedNode struct {
	mu       sync.Mutex
	payloads [][]byte // the response's logical packets
	chunks   []int    // write sizes; the last one repeats
	addr     string
}

func startScriptedNode(t testing.TB) *scriptedNode {
	n := &scriptedNode{}
	n.addr, _ = prototest.FakeNode(t, "p", 64, n.answer)
	return n
}

func (n *scriptedNode) answer(pc *mysqlproto.Conn, nc net.Conn, caps mysqlproto.Capability, cmd []byte) bool {
	if string(cmd) != "\x03SELECT scripted" {
		return prototest.OK(pc, nc, caps, cmd)
	}
	n.mu.Lock()
	payloads, chunks := n.payloads, n.chunks
	n.mu.Unlock()
	var wire bytes.Buffer
	w := mysqlproto.NewPacketWriter(bufio.NewWriter(&wire))
	w.SetSeq(1)
	for _, p := range payloads {
		_ = w.WritePacket(p)
	}
	_ = w.Flush()
	b := wire.Bytes()
	// At most ~256 writes per response, however small the cuts: the
	// boundaries stay arbitrary, the time per run bounded.
	least := len(b)/256 + 1
	for i := 0; len(b) > 0; i++ {
		size := min(len(b), max(least, chunks[min(i, len(chunks)-1)]))
		if _, err := nc.Write(b[:size]); err != nil {
			return false
		}
		b = b[size:]
		if i%8 == 0 {
			time.Sleep(20 * time.Microsecond) // let the proxy read a partial buffer
		}
	}
	return true
}

// resultSet builds a one-column text result whose rows have the given
// sizes, ended by an EOF/OK terminator or, if errAfter >= 0, by an error
// after that many rows.
func resultSet(sizes []int, errAfter int, deprecateEOF bool) [][]byte {
	col := mysqlproto.AppendLenEncString(nil, "def")
	for _, s := range []string{"db", "t", "t", "c", "c"} {
		col = mysqlproto.AppendLenEncString(col, s)
	}
	col = append(col, 0x0c, 45, 0, 0xff, 0xff, 0xff, 0, 0xfc, 0, 0, 0, 0, 0)
	out := [][]byte{{1}, col}
	eof := mysqlproto.AppendEOF(nil, 0, mysqlproto.ServerStatusAutocommit)
	if !deprecateEOF {
		out = append(out, eof)
	}
	for i, size := range sizes {
		if i == errAfter {
			return append(out, mysqlproto.AppendErr(nil, mysqlproto.NewSQLError(1317, "Query execution was interrupted"), mysqlproto.ClientProtocol41))
		}
		v := bytes.Repeat([]byte{byte('a' + i%26)}, size)
		out = append(out, mysqlproto.AppendLenEncBytes(nil, v))
	}
	if deprecateEOF {
		return append(out, mysqlproto.AppendOKTerminator(nil, &mysqlproto.OKPacket{Status: mysqlproto.ServerStatusAutocommit}, mysqlproto.ClientProtocol41|mysqlproto.ClientDeprecateEOF))
	}
	return append(out, eof)
}

// relayOnce runs one scripted response through the proxy and checks that
// the client gets exactly its packets, then that the session is still in
// step (a ping answers).
func relayOnce(t testing.TB, node *scriptedNode, addr string, sizes []int, errAfter int, chunks []int) {
	c := prototest.Login(t, addr, "u", "p")
	defer c.NC.Close()
	pc := c.PC
	want := resultSet(sizes, errAfter, c.Caps.Has(mysqlproto.ClientDeprecateEOF))
	node.mu.Lock()
	node.payloads, node.chunks = want, chunks
	node.mu.Unlock()
	pc.ResetSeq()
	if err := pc.WritePacket(append([]byte{byte(mysqlproto.ComQuery)}, "SELECT scripted"...)); err != nil {
		t.Fatal(err)
	}
	if err := pc.Flush(); err != nil {
		t.Fatal(err)
	}
	for i, w := range want {
		got, err := pc.ReadPacket()
		if err != nil {
			t.Fatalf("packet %d of %d (rows %v, error after %d, chunks %v): %v", i, len(want), sizes, errAfter, chunks, err)
		}
		if !bytes.Equal(got, w) {
			t.Fatalf("packet %d of %d differs: got %d bytes (%.400q), want %d (rows %v, chunks %v)", i, len(want), len(got), got, len(w), sizes, chunks)
		}
	}
	pc.ResetSeq()
	if err := pc.WritePacket([]byte{byte(mysqlproto.ComPing)}); err != nil {
		t.Fatal(err)
	}
	_ = pc.Flush()
	if got, err := pc.ReadPacket(); err != nil || len(got) == 0 || got[0] != mysqlproto.HeaderOK {
		t.Fatalf("ping after the result: %x %v", got, err)
	}
}

func relayProxy(t testing.TB, node *scriptedNode) string {
	cfg := config.Defaults()
	cfg.Users = []config.User{{Name: "u", Password: "p"}}
	cfg.Servers = []config.Server{{Name: "fake", Address: node.addr, WriterWeight: 1, ReaderWeight: 1}}
	_, addr := proxytest.Start(t, &cfg, nil)
	return addr
}

// FuzzRelay sends result sets of random row sizes, cut at random places
// on the way in, and sometimes ended by an error mid-result, through the
// proxy: the client must get every packet as the node sent it.
func FuzzRelay(f *testing.F) {
	node := startScriptedNode(f)
	addr := relayProxy(f, node)
	f.Add([]byte{3, 10, 200, 0}, []byte{1, 3, 7}, byte(255))
	f.Add([]byte{50, 0, 1, 2, 255, 255}, []byte{255, 255, 255, 4}, byte(2))
	f.Add([]byte{8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8}, []byte{4}, byte(255))
	f.Add([]byte{250, 251, 252, 253, 254, 255}, []byte{5, 64, 13}, byte(255))
	f.Fuzz(func(t *testing.T, rows, cuts []byte, errAt byte) {
		if len(rows) > 64 || len(cuts) > 64 {
			return
		}
		var sizes []int
		for _, r := range rows {
			// Sizes around the lenenc boundaries and up to ~64 KiB, so
			// rows span the proxy's 16 KiB read buffer.
			sizes = append(sizes, int(r)*int(r))
		}
		chunks := []int{1 << 20}
		if len(cuts) > 0 {
			chunks = nil
			for _, c := range cuts {
				chunks = append(chunks, int(c)*int(c)+1)
			}
		}
		errAfter := -1
		if int(errAt) < len(sizes) {
			errAfter = int(errAt)
		}
		relayOnce(t, node, addr, sizes, errAfter, chunks)
	})
}

// TestRelayLongPacketChains relays rows of 16 MiB and more (chains of
// physical packets) between small ones, written in odd chunks.
func TestRelayLongPacketChains(t *testing.T) {
	node := startScriptedNode(t)
	addr := relayProxy(t, node)
	relayOnce(t, node, addr, []int{10, mysqlproto.MaxPayloadLen - 4, 3, mysqlproto.MaxPayloadLen + 100, 7}, -1, []int{5, 70000, 1 << 20})
}
