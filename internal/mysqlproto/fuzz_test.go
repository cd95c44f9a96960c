package mysqlproto

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"reflect"
	"testing"
)

// The fuzz targets hold every parser to "never panic, whatever the bytes"
// and check round trips where the encoding is canonical enough to allow it.

func FuzzReadPacket(f *testing.F) {
	f.Add(writePackets(f, []byte("hello"), nil, []byte{byte(ComQuery), 'x'}), uint16(100))
	f.Add([]byte{0xff, 0xff, 0xff, 0, 1, 2, 3, 0, 0, 0, 1}, uint16(0))
	f.Add([]byte{3, 0, 0, 5, 1, 2, 3}, uint16(10))
	f.Add([]byte{0, 0, 0, 0, 1, 0}, uint16(1))
	f.Fuzz(func(t *testing.T, data []byte, max uint16) {
		limit := int(max) + 1
		r := NewPacketReader(bufio.NewReader(bytes.NewReader(data)), limit)
		raw := NewPacketReader(bufio.NewReader(bytes.NewReader(data)), limit)
		for {
			p, err := r.ReadPacket()
			rp, rerr := raw.ReadRawPacket()
			if (err == nil) != (rerr == nil) {
				t.Fatalf("ReadPacket err %v but ReadRawPacket err %v", err, rerr)
			}
			if err != nil {
				if !errors.Is(err, ErrPacketTooLarge) && !errors.Is(err, ErrPacketSequence) &&
					err != io.EOF && err != io.ErrUnexpectedEOF {
					t.Fatalf("unexpected error %v", err)
				}
				return
			}
			if len(p) > limit {
				t.Fatalf("payload of %d bytes over limit %d", len(p), limit)
			}
			// The raw form carries the same payload bytes.
			var joined []byte
			for b := rp; len(b) > 0; {
				chunk := RawPayload(b)
				if chunk == nil {
					t.Fatal("raw packet does not parse")
				}
				joined = append(joined, chunk...)
				b = b[4+len(chunk):]
			}
			if !bytes.Equal(joined, p) {
				t.Fatal("raw and decoded payloads differ")
			}
		}
	})
}

func FuzzParseHandshakeResponse(f *testing.F) {
	for _, r := range []HandshakeResponse{
		{Capabilities: DefaultServerCapabilities, Username: "app", AuthResponse: testScramble, Database: "shop",
			AuthPlugin: NativePasswordPlugin, ConnectAttrs: map[string]string{"a": "b"}},
		{Capabilities: ClientProtocol41 | ClientSecureConnection | ClientPluginAuth, Username: "u", AuthResponse: testScramble, AuthPlugin: "x"},
		{Capabilities: ClientProtocol41 | ClientConnectWithDB, Username: "u", AuthResponse: []byte("pw"), Database: "d"},
		{Capabilities: (DefaultServerCapabilities &^ ClientMySQL) | MariaDBClientProgress, Username: "m"},
	} {
		b, err := AppendHandshakeResponse(nil, &r)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add(AppendSSLRequest(nil, SSLRequest{Capabilities: DefaultClientCapabilities}))
	f.Fuzz(func(t *testing.T, data []byte) {
		if IsSSLRequest(data) {
			if _, err := ParseSSLRequest(data); err != nil {
				t.Fatalf("IsSSLRequest but ParseSSLRequest: %v", err)
			}
		}
		r, err := ParseHandshakeResponse(data)
		if err != nil {
			return
		}
		b, err := AppendHandshakeResponse(nil, r)
		if err != nil {
			t.Fatalf("re-encoding a parsed response: %v", err)
		}
		r2, err := ParseHandshakeResponse(b)
		if err != nil {
			t.Fatalf("re-parsing: %v", err)
		}
		if !sameResponse(r, r2) {
			t.Fatalf("round trip:\n%+v\n%+v", r, r2)
		}
	})
}

func sameResponse(a, b *HandshakeResponse) bool {
	return a.Capabilities == b.Capabilities && a.MaxPacketSize == b.MaxPacketSize && a.Charset == b.Charset &&
		a.Username == b.Username && bytes.Equal(a.AuthResponse, b.AuthResponse) && a.Database == b.Database &&
		a.AuthPlugin == b.AuthPlugin && len(a.ConnectAttrs) == len(b.ConnectAttrs) &&
		(len(a.ConnectAttrs) == 0 || reflect.DeepEqual(a.ConnectAttrs, b.ConnectAttrs))
}

func FuzzParseHandshake(f *testing.F) {
	for _, h := range []Handshake{
		{ServerVersion: "8.0.36", ConnectionID: 1, AuthData: testScramble, Capabilities: DefaultServerCapabilities,
			Charset: 255, AuthPlugin: CachingSHA2PasswordPlugin},
		{ServerVersion: "5.5.5-10.11.6-MariaDB", AuthData: testScramble,
			Capabilities: (DefaultServerCapabilities &^ ClientMySQL) | MariaDBClientCacheMetadata, AuthPlugin: NativePasswordPlugin},
		{ServerVersion: "4.1", AuthData: testScramble[:8], Capabilities: ClientProtocol41},
	} {
		f.Add(AppendHandshake(nil, &h))
	}
	f.Add(AppendErr(nil, NewSQLError(ErConCountError, "Too many connections"), ClientProtocol41))
	f.Fuzz(func(t *testing.T, data []byte) {
		h, err := ParseHandshake(data)
		if err != nil {
			return
		}
		h2, err := ParseHandshake(AppendHandshake(nil, h))
		if err != nil {
			t.Fatalf("re-parsing: %v", err)
		}
		if h.ServerVersion != h2.ServerVersion || h.ConnectionID != h2.ConnectionID ||
			h.Capabilities != h2.Capabilities || h.Charset != h2.Charset || h.Status != h2.Status ||
			h.AuthPlugin != h2.AuthPlugin {
			t.Fatalf("round trip:\n%+v\n%+v", h, h2)
		}
	})
}

func FuzzParseOKErr(f *testing.F) {
	caps := uint32(ClientProtocol41 | ClientSessionTrack)
	f.Add(AppendOK(nil, &OKPacket{AffectedRows: 1 << 20, LastInsertID: 7, Status: ServerStatusInTrans, Info: []byte("i"),
		SessionState: AppendSessionStateChange(nil, SessionTrackSchema, AppendLenEncString(nil, "db"))}, Capability(caps)), caps)
	f.Add(AppendOK(nil, &OKPacket{Info: []byte("rows")}, ClientProtocol41), uint32(ClientProtocol41))
	f.Add(AppendErr(nil, NewSQLError(ErLockDeadlock, "Deadlock"), ClientProtocol41), caps)
	f.Add([]byte{0xff, 0x10, 0x04, 'n', 'o'}, uint32(0))
	f.Add(AppendEOF(nil, 1, 2), caps)
	f.Add(AppendOKTerminator(nil, &OKPacket{}, ClientProtocol41|ClientDeprecateEOF), uint32(ClientProtocol41|ClientDeprecateEOF))
	f.Fuzz(func(t *testing.T, data []byte, c uint32) {
		caps := Capability(c)
		IsOK(data)
		IsEOF(data, true)
		IsEOF(data, false)
		ErrCode(data)
		ParseEOF(data)
		ParseTerminator(data, caps)
		if ok, err := ParseOK(data, caps); err == nil {
			for b := ok.SessionState; len(b) > 0; {
				typ, d, rest, err := NextSessionStateChange(b)
				if err != nil {
					break
				}
				if typ == SessionTrackSystemVariables {
					ParseSessionTrackVariable(d)
				} else {
					ParseSessionTrackString(d)
				}
				b = rest
			}
			ok2, err := ParseOK(AppendOK(nil, &ok, caps), caps)
			if err != nil {
				t.Fatalf("re-parsing OK: %v", err)
			}
			if ok.AffectedRows != ok2.AffectedRows || ok.LastInsertID != ok2.LastInsertID ||
				ok.Warnings != ok2.Warnings || !bytes.Equal(ok.Info, ok2.Info) || !bytes.Equal(ok.SessionState, ok2.SessionState) {
				t.Fatalf("OK round trip:\n%+v\n%+v", ok, ok2)
			}
		}
		if e, err := ParseErr(data); err == nil {
			e2, err := ParseErr(AppendErr(nil, e, ClientProtocol41))
			if err != nil || *e != *e2 {
				t.Fatalf("ERR round trip: %+v %+v %v", e, e2, err)
			}
		}
	})
}

func FuzzPacketParsers(f *testing.F) {
	f.Add(AppendStmtPrepareOK(nil, StmtPrepareOK{StatementID: 1, NumParams: 2, NumColumns: 3}))
	f.Add([]byte{byte(ComStmtExecute), 1, 0, 0, 0, 0, 1, 0, 0, 0})
	f.Add(AppendAuthSwitchRequest(nil, NativePasswordPlugin, append(bytes.Clone(testScramble), 0)))
	f.Add(queryWithAttrs("SELECT 1", attr{typeVarchar, "a", AppendLenEncString(nil, "v")}, attr{typeLong, "b", []byte{1, 2, 3, 4}}))
	f.Add(AppendLenEncInt(nil, 1<<40))
	f.Fuzz(func(t *testing.T, data []byte) {
		ParseStmtPrepareOK(data)
		ParseStmtExecute(data)
		ParseStmtFetch(data)
		if _, err := StatementID(data); err == nil {
			if err := SetStatementID(bytes.Clone(data), 1); err != nil {
				t.Fatal(err)
			}
		}
		ParseAuthSwitchRequest(data)
		ParseAuthMoreData(data)
		QueryText(data, ClientQueryAttributes)
		QueryText(data, 0)
		ClassifyResponse(data, ClientOptionalResultsetMetadata)
		ReadLenEncInt(data)
		ReadLenEncString(data)
		ReadNullString(data)
		ParsePublicKeyPEM(data)
		ParseNativePasswordHash(string(data))
	})
}

// FuzzResponseFramer splits the input into packets and frames them as the
// response to each kind of command, with and without DEPRECATE_EOF.
func FuzzResponseFramer(f *testing.F) {
	for _, caps := range []Capability{classic, deprecate} {
		r := (&resp{caps: caps}).textResult(2, [][]byte{textRow("1", "a")}, ServerMoreResultsExists).ok(0)
		f.Add(byte(ResponseQuery), uint32(caps), writePackets(f, r.pkts...))
		r = (&resp{caps: caps}).add(AppendStmtPrepareOK(nil, StmtPrepareOK{NumParams: 1, NumColumns: 1})).defs(1).metaEOF(0).defs(1).metaEOF(0)
		f.Add(byte(ResponsePrepare), uint32(caps), writePackets(f, r.pkts...))
		r = (&resp{caps: caps}).add([]byte{1}).defs(1).term(ServerStatusCursorExists)
		f.Add(byte(ResponseExecute), uint32(caps), writePackets(f, r.pkts...))
		r = (&resp{caps: caps}).add([]byte{0xfb, 'f'}).ok(0)
		f.Add(byte(ResponseQuery), uint32(caps), writePackets(f, r.pkts...))
	}
	f.Fuzz(func(t *testing.T, kind byte, c uint32, data []byte) {
		k := ResponseKind(kind % 6)
		r := NewPacketReader(bufio.NewReader(bytes.NewReader(data)), 1<<20)
		var fr ResponseFramer
		fr.Reset(k, Capability(c))
		for {
			raw, err := r.ReadRawPacket()
			if err != nil {
				return
			}
			st, err := fr.Next(RawPayload(raw))
			if err != nil || st == FrameDone {
				if !fr.Done() {
					t.Fatal("framer stopped but not done")
				}
				if _, err := fr.Next(RawPayload(raw)); !errors.Is(err, ErrFramerDone) {
					t.Fatalf("after done: %v", err)
				}
				return
			}
			if st == FrameLocalInfile && k != ResponseQuery {
				t.Fatal("LOCAL INFILE outside a query response")
			}
		}
	})
}

// FuzzAuthStateMachines feeds arbitrary server packets to ClientAuth and
// client packets to ServerAuth.
func FuzzAuthStateMachines(f *testing.F) {
	f.Add([]byte{0x01, 0x04}, []byte{0x02}, byte(0))
	f.Add(AppendAuthSwitchRequest(nil, CachingSHA2PasswordPlugin, testScramble), ScrambleNativePassword("secret", testScramble), byte(1))
	f.Add(AppendOK(nil, &OKPacket{}, ClientProtocol41), []byte("secret\x00"), byte(2))
	key := rsaKey(f)
	f.Fuzz(func(t *testing.T, serverPkt, clientPkt []byte, mode byte) {
		hs := &Handshake{AuthData: testScramble, Capabilities: DefaultServerCapabilities, AuthPlugin: CachingSHA2PasswordPlugin}
		a, err := NewClientAuth(&ClientConfig{User: "u", Password: "secret", AllowPublicKeyRetrieval: mode&1 != 0}, hs)
		if err != nil {
			t.Fatal(err)
		}
		a.Next(serverPkt)
		a.Next(serverPkt)

		plugins := []string{NativePasswordPlugin, CachingSHA2PasswordPlugin, ClearPasswordPlugin}
		s := NewServerAuth(testScramble, ServerAuthConfig{
			Plugin: plugins[int(mode>>1)%3], Credential: NewCredential("secret"),
			Secure: mode&8 != 0, PrivateKey: key, ForceFullAuth: mode&16 != 0,
		})
		s.Start(&HandshakeResponse{Capabilities: ClientProtocol41 | ClientPluginAuth, Username: "u",
			AuthPlugin: NativePasswordPlugin, AuthResponse: clientPkt})
		s.Next(clientPkt)
		s.Next(clientPkt)
	})
}
