package proxy_test

import (
	"testing"

	"github.com/galeon-db/galeon/internal/mysqlproto"
)

// rawQuery runs q on a raw protocol connection and returns the first row's
// values (text protocol), failing the test on an error packet.
func rawQuery(t *testing.T, pc *mysqlproto.Conn, caps mysqlproto.Capability, q string) []string {
	t.Helper()
	pc.ResetSeq()
	if err := pc.WritePacket(mysqlproto.AppendComQuery(nil, q, caps)); err != nil {
		t.Fatal(err)
	}
	if err := pc.Flush(); err != nil {
		t.Fatal(err)
	}
	var f mysqlproto.ResponseFramer
	f.Reset(mysqlproto.ResponseQuery, caps)
	var row []string
	cols := -1
	n := 0
	for {
		pkt, err := pc.ReadPacket()
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		if n == 0 && mysqlproto.IsErr(pkt) {
			e, _ := mysqlproto.ParseErr(pkt)
			t.Fatalf("%s: %v", q, e)
		}
		st, err := f.Next(pkt)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		if cols < 0 && f.Result() == mysqlproto.ResultSet {
			cols = int(f.ColumnCount())
		}
		// The first row comes after the count, the definitions and (without
		// DEPRECATE_EOF) an EOF packet.
		first := 1 + cols
		if !caps.Has(mysqlproto.ClientDeprecateEOF) {
			first++
		}
		if row == nil && cols > 0 && n == first && !mysqlproto.IsEOF(pkt, caps.Has(mysqlproto.ClientDeprecateEOF)) {
			b := pkt
			for i := 0; i < cols; i++ {
				v, null, used, err := mysqlproto.ReadLenEncString(b)
				if err != nil {
					t.Fatalf("%s: row: %v", q, err)
				}
				if null {
					row = append(row, "NULL")
				} else {
					row = append(row, string(v))
				}
				b = b[used:]
			}
		}
		n++
		if st == mysqlproto.FrameDone {
			return row
		}
	}
}

// testChangeUserAndResetConnection drives COM_CHANGE_USER (with the auth
// switch galeon asks for) and COM_RESET_CONNECTION at the protocol level:
// both must leave a fresh session, and the session must keep working
// through the proxy.
func testChangeUserAndResetConnection(t *testing.T, pt *proxyUnderTest) {
	nc, br, bw := rawLogin(t, pt)
	defer nc.Close()
	pc := mysqlproto.NewConn(br, bw, 1<<24)
	caps := mysqlproto.DefaultClientCapabilities
	c := pt.sb.Credentials

	rawQuery(t, pc, caps, "SET SESSION sql_mode = 'ANSI_QUOTES'")
	if got := rawQuery(t, pc, caps, "SELECT @@sql_mode"); len(got) != 1 || got[0] != "ANSI_QUOTES" {
		t.Fatalf("sql_mode = %v", got)
	}
	// COM_RESET_CONNECTION: session variables back to defaults.
	pc.ResetSeq()
	pc.WritePacket([]byte{byte(mysqlproto.ComResetConnection)})
	pc.Flush()
	if pkt, err := pc.ReadPacket(); err != nil || !mysqlproto.IsOK(pkt) {
		t.Fatalf("COM_RESET_CONNECTION: %x %v", pkt, err)
	}
	if got := rawQuery(t, pc, caps, "SELECT @@sql_mode"); len(got) != 1 || got[0] == "ANSI_QUOTES" {
		t.Errorf("sql_mode after COM_RESET_CONNECTION = %v, want the default", got)
	}

	// COM_CHANGE_USER to the same account with a schema: galeon answers
	// with an auth switch carrying a fresh scramble.
	rawQuery(t, pc, caps, "SET SESSION sql_mode = 'ANSI_QUOTES'")
	cu := []byte{byte(mysqlproto.ComChangeUser)}
	cu = append(append(cu, c.AppUser...), 0)
	cu = append(cu, 0) // empty auth response: galeon switches anyway
	cu = append(append(cu, "sbtest"...), 0)
	cu = append(cu, 45, 0) // utf8mb4_general_ci
	cu = append(append(cu, mysqlproto.NativePasswordPlugin...), 0)
	pc.ResetSeq()
	pc.WritePacket(cu)
	pc.Flush()
	pkt, err := pc.ReadPacket()
	if err != nil || len(pkt) == 0 || pkt[0] != 0xfe {
		t.Fatalf("COM_CHANGE_USER: want an auth switch request, got %x %v", pkt, err)
	}
	hs := &mysqlproto.Handshake{AuthData: make([]byte, 20), AuthPlugin: mysqlproto.NativePasswordPlugin,
		Capabilities: mysqlproto.DefaultServerCapabilities}
	auth, err := mysqlproto.NewClientAuth(&mysqlproto.ClientConfig{User: c.AppUser, Password: c.AppPassword}, hs)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := auth.HandshakeResponse(nil); err != nil {
		t.Fatal(err)
	}
	reply, _, err := auth.Next(pkt)
	if err != nil {
		t.Fatal(err)
	}
	pc.WritePacket(reply)
	pc.Flush()
	if pkt, err := pc.ReadPacket(); err != nil || !mysqlproto.IsOK(pkt) {
		t.Fatalf("after the auth switch: %x %v", pkt, err)
	}
	got := rawQuery(t, pc, caps, "SELECT DATABASE(), @@sql_mode, SUBSTRING_INDEX(CURRENT_USER(), '@', 1)")
	if len(got) != 3 || got[0] != "sbtest" || got[1] == "ANSI_QUOTES" || got[2] != c.AppUser {
		t.Errorf("after COM_CHANGE_USER: database, sql_mode, user = %v; want sbtest, the default mode, %s", got, c.AppUser)
	}

	// A wrong password on COM_CHANGE_USER: access denied, connection closed.
	nc2, br2, bw2 := rawLogin(t, pt)
	defer nc2.Close()
	pc2 := mysqlproto.NewConn(br2, bw2, 1<<24)
	pc2.ResetSeq()
	pc2.WritePacket(cu)
	pc2.Flush()
	pkt, _ = pc2.ReadPacket()
	bad, _ := mysqlproto.NewClientAuth(&mysqlproto.ClientConfig{User: c.AppUser, Password: "wrong"}, hs)
	bad.HandshakeResponse(nil)
	reply, _, _ = bad.Next(pkt)
	pc2.WritePacket(reply)
	pc2.Flush()
	pkt, err = pc2.ReadPacket()
	if err != nil || !mysqlproto.IsErr(pkt) {
		t.Fatalf("wrong password on COM_CHANGE_USER: %x %v", pkt, err)
	}
	if e, _ := mysqlproto.ParseErr(pkt); e.Code != mysqlproto.ErAccessDeniedError {
		t.Errorf("code %d, want 1045", e.Code)
	}
}
