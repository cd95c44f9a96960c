package mysqlproto

import (
	"bufio"
	"bytes"
	"errors"
	"net"
	"os"
	"strings"
	"testing"
	"time"
)

// The integration tests run against a real MySQL or MariaDB server when
// MYSQLPROTO_TEST_ADDR is set (host:port). The account in
// MYSQLPROTO_TEST_USER / MYSQLPROTO_TEST_PASSWORD needs the "test" schema
// and LOCAL INFILE enabled on the server, e.g.
//
//	MYSQLPROTO_TEST_ADDR=127.0.0.1:3306 MYSQLPROTO_TEST_USER=app \
//	MYSQLPROTO_TEST_PASSWORD=secret go test -run Integration ./internal/mysqlproto/
//
// They check ClientAuth and ResponseFramer on what a real server sends.

type liveConn struct {
	t    *testing.T
	nc   net.Conn
	c    *Conn
	caps Capability
	f    ResponseFramer
}

func dialLive(t *testing.T, caps Capability, user, password string) (*liveConn, error) {
	t.Helper()
	addr := os.Getenv("MYSQLPROTO_TEST_ADDR")
	if addr == "" {
		t.Skip("MYSQLPROTO_TEST_ADDR not set")
	}
	nc, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	_ = nc.SetDeadline(time.Now().Add(60 * time.Second))
	c := NewConn(bufio.NewReader(nc), bufio.NewWriter(nc), 64<<20)
	pkt, err := c.ReadPacket()
	if err != nil {
		t.Fatal(err)
	}
	hs, err := ParseHandshake(pkt)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("server %s, capabilities %#x, plugin %s", hs.ServerVersion, hs.Capabilities, hs.AuthPlugin)
	a, err := NewClientAuth(&ClientConfig{User: user, Password: password, Database: "test", Capabilities: caps,
		ConnectAttrs: map[string]string{"program_name": "mysqlproto-test"}}, hs)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Run(c); err != nil {
		return nil, err
	}
	return &liveConn{t: t, nc: nc, c: c, caps: a.Capabilities()}, nil
}

// exec sends one command and relays its response through the framer,
// returning copies of the payloads. With localFile set it answers a LOCAL
// INFILE request with that content.
func (l *liveConn) exec(cmd []byte, localFile []byte) [][]byte {
	l.t.Helper()
	kind, ok := ResponseKindFor(Command(cmd[0]))
	l.c.ResetSeq()
	if err := l.c.WritePacket(cmd); err != nil {
		l.t.Fatal(err)
	}
	if err := l.c.Flush(); err != nil {
		l.t.Fatal(err)
	}
	if !ok {
		return nil
	}
	l.f.Reset(kind, l.caps)
	var out [][]byte
	for {
		raw, err := l.c.ReadRawPacket()
		if err != nil {
			l.t.Fatalf("%s: %v", Command(cmd[0]), err)
		}
		p := RawPayload(raw)
		out = append(out, bytes.Clone(p[:min(len(p), 64)]))
		st, err := l.f.Next(p)
		if err != nil {
			l.t.Fatalf("%s: framing: %v", Command(cmd[0]), err)
		}
		switch st {
		case FrameDone:
			return out
		case FrameLocalInfile:
			if localFile != nil {
				_ = l.c.WritePacket(localFile)
			}
			_ = l.c.WritePacket(nil)
			_ = l.c.Flush()
		}
	}
}

func (l *liveConn) query(q string) [][]byte {
	return l.exec(AppendComQuery(nil, q, l.caps), nil)
}

func (l *liveConn) status() StatusFlag {
	s, _ := l.f.Status()
	return s
}

func TestIntegrationClient(t *testing.T) {
	user, pw := os.Getenv("MYSQLPROTO_TEST_USER"), os.Getenv("MYSQLPROTO_TEST_PASSWORD")
	base := DefaultClientCapabilities | ClientLocalFiles
	for _, mode := range []struct {
		name string
		caps Capability
	}{
		{"DEPRECATE_EOF", base},
		{"EOF", base &^ ClientDeprecateEOF},
		{"MariaDB cache metadata", base | MariaDBClientCacheMetadata},
	} {
		t.Run(mode.name, func(t *testing.T) {
			l, err := dialLive(t, mode.caps, user, pw)
			if err != nil {
				t.Fatal(err)
			}
			if want := mode.caps & (ClientDeprecateEOF | MariaDBClientCacheMetadata); l.caps&want != want {
				t.Skip("server lacks a capability this mode needs")
			}

			l.query("SELECT 1, 'two'")
			if l.f.Result() != ResultSet || l.f.ColumnCount() != 2 || l.f.Packets() != map[bool]int{true: 5, false: 6}[mode.caps&ClientDeprecateEOF != 0] {
				t.Errorf("SELECT: result %d columns %d packets %d", l.f.Result(), l.f.ColumnCount(), l.f.Packets())
			}

			l.query("BEGIN")
			if !l.status().Has(ServerStatusInTrans) {
				t.Errorf("BEGIN: status %#x", l.status())
			}
			l.query("SELECT id, name FROM t")
			if !l.status().Has(ServerStatusInTrans) {
				t.Errorf("SELECT in transaction: status %#x", l.status())
			}
			l.query("ROLLBACK")
			if l.status().Has(ServerStatusInTrans) {
				t.Errorf("ROLLBACK: status %#x", l.status())
			}

			l.query("SELECT 1; SELECT 2, 3; DO 1")
			if l.f.ResultSets() != 2 || l.f.Result() != ResultOK || l.status().Has(ServerMoreResultsExists) {
				t.Errorf("multi-statement: %d sets, result %d, status %#x", l.f.ResultSets(), l.f.Result(), l.status())
			}

			l.query("SELECT * FROM no_such_table")
			if code, ok := l.f.ErrorCode(); !ok || code != 1146 {
				t.Errorf("error: %d %v", code, ok)
			}
			l.query("SELECT 1; SELECT * FROM no_such_table; SELECT 3")
			if code, _ := l.f.ErrorCode(); code != 1146 || l.f.ResultSets() != 1 {
				t.Errorf("error in multi-statement: %d, %d sets", code, l.f.ResultSets())
			}

			// A row over 16 MiB: split packets, relayed raw.
			l.query("SELECT REPEAT('a', 17000000), 'tail'")
			if l.f.Result() != ResultSet {
				t.Errorf("big row: result %d", l.f.Result())
			}

			l.query("CREATE TEMPORARY TABLE li (id INT, name VARCHAR(20))")
			l.exec(AppendComQuery(nil, "LOAD DATA LOCAL INFILE 'x.tsv' INTO TABLE li", l.caps), []byte("7\tseven\n8\teight\n"))
			if l.f.Result() != ResultOK {
				t.Fatalf("LOAD DATA: result %d", l.f.Result())
			}
			l.query("SELECT COUNT(*) FROM li")

			l.query("USE mysql")
			out := l.query("USE test")
			if l.caps&ClientSessionTrack != 0 && l.status().Has(ServerSessionStateChanged) {
				ok, err := ParseOK(out[0], l.caps)
				if err != nil {
					t.Fatal(err)
				}
				schema := ""
				for b := ok.SessionState; len(b) > 0; {
					typ, data, rest, err := NextSessionStateChange(b)
					if err != nil {
						t.Fatal(err)
					}
					if typ == SessionTrackSchema {
						s, _ := ParseSessionTrackString(data)
						schema = string(s)
					}
					b = rest
				}
				if schema != "test" {
					t.Errorf("tracked schema %q", schema)
				}
			}

			l.exec(append([]byte{byte(ComFieldList)}, "t\x00"...), nil)
			if l.f.Result() == ResultErr {
				t.Errorf("COM_FIELD_LIST failed")
			}
			for _, cmd := range [][]byte{{byte(ComPing)}, append([]byte{byte(ComInitDB)}, "test"...),
				{byte(ComStatistics)}, {byte(ComSetOption), 0, 0}, {byte(ComResetConnection)}} {
				l.exec(cmd, nil)
				if l.f.Result() == ResultErr {
					code, _ := l.f.ErrorCode()
					t.Errorf("%s: error %d", Command(cmd[0]), code)
				}
			}

			// Prepared statements: prepare, execute (plain and with a
			// cursor), fetch, close.
			l.exec(append([]byte{byte(ComStmtPrepare)}, "SELECT id, name FROM t WHERE id > ?"...), nil)
			p := l.f.PrepareOK()
			if p.NumParams != 1 || p.NumColumns != 2 {
				t.Fatalf("prepare: %+v", p)
			}
			exec := func(flags CursorType) {
				b := []byte{byte(ComStmtExecute)}
				b = AppendUint32(b, p.StatementID)
				b = append(b, byte(flags))
				b = AppendUint32(b, 1)
				b = append(b, 0, 1, typeLongLong, 0) // NULL bitmap, new params bound, type
				b = AppendUint64(b, 0)
				l.exec(b, nil)
			}
			exec(CursorTypeNoCursor)
			if l.f.Result() != ResultSet {
				t.Fatalf("execute: result %d", l.f.Result())
			}
			// Column count, definitions (left out when MariaDB knows the
			// client cached them from the prepare), metadata EOF, three
			// rows, terminator.
			want := 1 + 2 + 1 + 3 + 1
			if l.caps&MariaDBClientCacheMetadata != 0 {
				want -= 2
			}
			if l.caps&ClientDeprecateEOF != 0 {
				want--
			}
			if l.f.Packets() != want {
				t.Errorf("execute: %d packets, want %d", l.f.Packets(), want)
			}
			exec(CursorTypeReadOnly)
			if !l.status().Has(ServerStatusCursorExists) {
				t.Errorf("execute with cursor: status %#x", l.status())
			} else {
				fetch := func(n uint32) {
					b := AppendUint32([]byte{byte(ComStmtFetch)}, p.StatementID)
					l.exec(AppendUint32(b, n), nil)
				}
				fetch(2)
				if got := l.f.Packets(); got != 3 {
					t.Errorf("fetch 2: %d packets", got)
				}
				fetch(10)
				if !l.status().Has(ServerStatusLastRowSent) {
					t.Errorf("last fetch: status %#x", l.status())
				}
			}
			l.exec(AppendUint32([]byte{byte(ComStmtClose)}, p.StatementID), nil)
			l.exec([]byte{byte(ComPing)}, nil)
			if l.f.Result() != ResultOK {
				t.Error("ping after close")
			}
			l.exec([]byte{byte(ComQuit)}, nil)
		})
	}
}

func TestIntegrationAccessDenied(t *testing.T) {
	_, err := dialLive(t, 0, os.Getenv("MYSQLPROTO_TEST_USER"), "definitely wrong")
	var se *SQLError
	if !errors.As(err, &se) || se.Code != ErAccessDeniedError || !strings.Contains(se.Message, "Access denied") {
		t.Fatalf("err = %v", err)
	}
}
