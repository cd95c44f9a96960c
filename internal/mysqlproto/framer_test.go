package mysqlproto

import (
	"bufio"
	"bytes"
	"errors"
	"testing"
)

const (
	classic   = ClientProtocol41 | ClientTransactions | ClientSessionTrack
	deprecate = classic | ClientDeprecateEOF
)

// columnDef returns a plausible Protocol::ColumnDefinition41 packet.
func columnDef(name string) []byte {
	b := AppendLenEncString(nil, "def")
	b = AppendLenEncString(b, "shop")
	b = AppendLenEncString(b, "t")
	b = AppendLenEncString(b, "t")
	b = AppendLenEncString(b, name)
	b = AppendLenEncString(b, name)
	b = append(b, 0x0c, 0x21, 0, 0, 1, 0, 0, 0xfd, 0, 0, 0, 0, 0)
	return b
}

// resp accumulates the packets of a server response.
type resp struct {
	caps Capability
	pkts [][]byte
}

func (r *resp) add(p ...[]byte) *resp { r.pkts = append(r.pkts, p...); return r }

func (r *resp) deprecate() bool { return r.caps&ClientDeprecateEOF != 0 }

func (r *resp) defs(n int) *resp {
	for i := 0; i < n; i++ {
		r.add(columnDef("c"))
	}
	return r
}

func (r *resp) metaEOF(status StatusFlag) *resp {
	if !r.deprecate() {
		r.add(AppendEOF(nil, 0, status))
	}
	return r
}

func (r *resp) term(status StatusFlag) *resp {
	return r.add(AppendResultSetTerminator(nil, 0, status, r.caps))
}

func (r *resp) ok(status StatusFlag) *resp {
	return r.add(AppendOK(nil, &OKPacket{AffectedRows: 1, Status: status, Info: []byte("done")}, r.caps))
}

func (r *resp) err(code ErrorCode) *resp {
	return r.add(AppendErr(nil, NewSQLError(code, "boom"), r.caps))
}

// textResult adds a text result set with cols columns and the given rows.
func (r *resp) textResult(cols int, rows [][]byte, status StatusFlag) *resp {
	r.add(AppendLenEncInt(nil, uint64(cols))).defs(cols).metaEOF(status &^ ServerMoreResultsExists)
	r.add(rows...)
	return r.term(status)
}

func textRow(vals ...string) []byte {
	var b []byte
	for _, v := range vals {
		b = AppendLenEncString(b, v)
	}
	return b
}

// feed runs packets through a fresh framer and checks that it reports
// FrameDone exactly at the last packet (and FrameLocalInfile at the
// indexes given).
func feed(t *testing.T, kind ResponseKind, r *resp, localInfileAt ...int) *ResponseFramer {
	t.Helper()
	var f ResponseFramer
	f.Reset(kind, r.caps)
	for i, p := range r.pkts {
		st, err := f.Next(p)
		if err != nil {
			t.Fatalf("packet %d: %v", i, err)
		}
		want := FrameContinue
		if i == len(r.pkts)-1 {
			want = FrameDone
		}
		for _, j := range localInfileAt {
			if i == j {
				want = FrameLocalInfile
			}
		}
		if st != want {
			t.Fatalf("packet %d (% x...): state %d, want %d", i, p[:min(len(p), 8)], st, want)
		}
	}
	if !f.Done() || f.Packets() != len(r.pkts) {
		t.Fatalf("done=%v packets=%d", f.Done(), f.Packets())
	}
	if _, err := f.Next([]byte{0}); !errors.Is(err, ErrFramerDone) {
		t.Fatalf("after done: %v", err)
	}
	return &f
}

func bothModes(t *testing.T, fn func(t *testing.T, caps Capability)) {
	t.Run("EOF", func(t *testing.T) { fn(t, classic) })
	t.Run("DEPRECATE_EOF", func(t *testing.T) { fn(t, deprecate) })
}

func TestFramerQuery(t *testing.T) {
	bothModes(t, func(t *testing.T, caps Capability) {
		t.Run("OK", func(t *testing.T) {
			f := feed(t, ResponseQuery, (&resp{caps: caps}).ok(ServerStatusInTrans))
			if s, ok := f.Status(); !ok || s != ServerStatusInTrans || f.Result() != ResultOK {
				t.Fatalf("status %#x %v result %d", s, ok, f.Result())
			}
		})
		t.Run("ERR", func(t *testing.T) {
			f := feed(t, ResponseQuery, (&resp{caps: caps}).err(ErLockDeadlock))
			if code, ok := f.ErrorCode(); !ok || code != ErLockDeadlock {
				t.Fatalf("code %d %v", code, ok)
			}
		})
		t.Run("result set", func(t *testing.T) {
			rows := [][]byte{textRow("1", "a"), textRow("2", "b"), {0xfb, 0xfb}} // last row: two NULLs
			f := feed(t, ResponseQuery, (&resp{caps: caps}).textResult(2, rows, ServerStatusInTrans|ServerStatusAutocommit))
			s, _ := f.Status()
			if f.Result() != ResultSet || f.ColumnCount() != 2 || s != ServerStatusInTrans|ServerStatusAutocommit || f.ResultSets() != 1 {
				t.Fatalf("result %d columns %d status %#x", f.Result(), f.ColumnCount(), s)
			}
			if _, isErr := f.ErrorCode(); isErr {
				t.Fatal("ErrorCode reports an error")
			}
		})
		t.Run("empty result set", func(t *testing.T) {
			feed(t, ResponseQuery, (&resp{caps: caps}).textResult(1, nil, 0))
		})
		t.Run("multiple results", func(t *testing.T) {
			r := (&resp{caps: caps}).
				textResult(1, [][]byte{textRow("x")}, ServerMoreResultsExists).
				ok(ServerMoreResultsExists).
				textResult(3, [][]byte{textRow("a", "b", "c")}, ServerMoreResultsExists|ServerStatusInTrans).
				ok(ServerStatusInTrans)
			f := feed(t, ResponseQuery, r)
			if s, _ := f.Status(); s != ServerStatusInTrans || f.ResultSets() != 2 || f.Result() != ResultOK {
				t.Fatalf("status %#x sets %d", s, f.ResultSets())
			}
		})
		t.Run("error in second statement", func(t *testing.T) {
			r := (&resp{caps: caps}).ok(ServerMoreResultsExists).err(ErParseError)
			f := feed(t, ResponseQuery, r)
			if code, _ := f.ErrorCode(); code != ErParseError {
				t.Fatal(code)
			}
		})
		t.Run("error while streaming rows", func(t *testing.T) {
			r := (&resp{caps: caps}).add(AppendLenEncInt(nil, 1)).defs(1).metaEOF(0).add(textRow("1")).err(ErQueryInterrupted)
			f := feed(t, ResponseQuery, r)
			if code, _ := f.ErrorCode(); code != ErQueryInterrupted {
				t.Fatal(code)
			}
		})
		t.Run("LOCAL INFILE", func(t *testing.T) {
			r := (&resp{caps: caps}).add(append([]byte{0xfb}, "/tmp/data.csv"...)).ok(0)
			f := feed(t, ResponseQuery, r, 0)
			if f.Result() != ResultOK {
				t.Fatal(f.Result())
			}
		})
		// Under DEPRECATE_EOF a 0xFE row must be >= 16 MiB: TestRelayLargeRows.
		if caps&ClientDeprecateEOF == 0 {
			t.Run("rows starting with 0xFE", func(t *testing.T) {
				// A row whose first value has an 8-byte length prefix. It is
				// a short fake (real ones are >= 16 MiB), which is enough:
				// without DEPRECATE_EOF anything over 8 bytes is a row.
				row := append([]byte{0xfe, 10, 0, 0, 0, 0, 0, 0, 0}, bytes.Repeat([]byte("v"), 10)...)
				feed(t, ResponseQuery, (&resp{caps: caps}).textResult(1, [][]byte{row, row}, 0))
			})
		}
		t.Run("metadata omitted", func(t *testing.T) {
			c := caps | ClientOptionalResultsetMetadata
			r := &resp{caps: c}
			r.add([]byte{2, 0}).metaEOF(0).add(textRow("a", "b")).term(0)
			f := feed(t, ResponseQuery, r)
			if f.ColumnCount() != 2 {
				t.Fatal(f.ColumnCount())
			}
			r = &resp{caps: c}
			r.add([]byte{1, 1}).defs(1).metaEOF(0).term(0)
			feed(t, ResponseQuery, r)
		})
	})
}

func TestFramerExecute(t *testing.T) {
	bothModes(t, func(t *testing.T, caps Capability) {
		binRow := []byte{0x00, 0x00, 1, 0, 0, 0} // binary rows start with 0x00
		t.Run("binary rows", func(t *testing.T) {
			r := (&resp{caps: caps}).add([]byte{1}).defs(1).metaEOF(0).add(binRow, binRow, binRow).term(ServerStatusAutocommit)
			feed(t, ResponseExecute, r)
		})
		t.Run("OK", func(t *testing.T) {
			feed(t, ResponseExecute, (&resp{caps: caps}).ok(0))
		})
		t.Run("procedure results", func(t *testing.T) {
			r := (&resp{caps: caps}).add([]byte{1}).defs(1).metaEOF(0).add(binRow).
				term(ServerMoreResultsExists | ServerPSOutParams).ok(0)
			feed(t, ResponseExecute, r)
		})
		t.Run("cursor", func(t *testing.T) {
			// MySQL sends the metadata and then a single EOF (or OK
			// terminator) flagged CURSOR_EXISTS; rows come via FETCH.
			r := (&resp{caps: caps}).add([]byte{2}).defs(2).term(ServerStatusCursorExists | ServerStatusInTrans)
			f := feed(t, ResponseExecute, r)
			if s, _ := f.Status(); !s.Has(ServerStatusCursorExists) {
				t.Fatalf("status %#x", s)
			}
		})
		t.Run("fetch", func(t *testing.T) {
			r := (&resp{caps: caps}).add(binRow, binRow).term(ServerStatusCursorExists)
			feed(t, ResponseFetch, r)
			r = (&resp{caps: caps}).term(ServerStatusLastRowSent)
			f := feed(t, ResponseFetch, r)
			if s, _ := f.Status(); !s.Has(ServerStatusLastRowSent) {
				t.Fatalf("status %#x", s)
			}
			feed(t, ResponseFetch, (&resp{caps: caps}).err(ErUnknownStmtHandler))
		})
		t.Run("local infile is not valid", func(t *testing.T) {
			var f ResponseFramer
			f.Reset(ResponseExecute, caps)
			if _, err := f.Next([]byte{0xfb, 'x'}); err == nil {
				t.Fatal("accepted")
			}
		})
	})
}

func TestFramerPrepare(t *testing.T) {
	bothModes(t, func(t *testing.T, caps Capability) {
		for _, tc := range []struct{ params, cols uint16 }{{2, 3}, {0, 2}, {2, 0}, {0, 0}, {1, 1}} {
			r := &resp{caps: caps}
			r.add(AppendStmtPrepareOK(nil, StmtPrepareOK{StatementID: 9, NumParams: tc.params, NumColumns: tc.cols}))
			if tc.params > 0 {
				r.defs(int(tc.params)).metaEOF(0)
			}
			if tc.cols > 0 {
				r.defs(int(tc.cols)).metaEOF(0)
			}
			f := feed(t, ResponsePrepare, r)
			if p := f.PrepareOK(); p.StatementID != 9 || p.NumParams != tc.params || f.ColumnCount() != uint64(tc.cols) {
				t.Fatalf("%+v: %+v", tc, p)
			}
		}
		feed(t, ResponsePrepare, (&resp{caps: caps}).err(ErParseError))
		// Metadata left out (CLIENT_OPTIONAL_RESULTSET_METADATA).
		ok := append(AppendStmtPrepareOK(nil, StmtPrepareOK{StatementID: 1, NumParams: 3, NumColumns: 3}), 0)
		feed(t, ResponsePrepare, (&resp{caps: caps}).add(ok))
	})
}

func TestFramerFieldListAndSingle(t *testing.T) {
	bothModes(t, func(t *testing.T, caps Capability) {
		feed(t, ResponseFieldList, (&resp{caps: caps}).defs(3).add(AppendEOF(nil, 0, 0)))
		feed(t, ResponseFieldList, (&resp{caps: caps}).defs(1).term(0))
		feed(t, ResponseFieldList, (&resp{caps: caps}).err(ErBadDBError))

		f := feed(t, ResponseSingle, (&resp{caps: caps}).ok(ServerStatusAutocommit))
		if f.Result() != ResultOK {
			t.Fatal(f.Result())
		}
		f = feed(t, ResponseSingle, (&resp{caps: caps}).term(ServerStatusAutocommit)) // COM_SET_OPTION
		if s, _ := f.Status(); f.Result() != ResultEOF || s != ServerStatusAutocommit {
			t.Fatal(f.Result(), s)
		}
		f = feed(t, ResponseSingle, (&resp{caps: caps}).add([]byte("Uptime: 5  Threads: 1")))
		if f.Result() != ResultOther {
			t.Fatal(f.Result())
		}
		f = feed(t, ResponseSingle, (&resp{caps: caps}).err(ErUnknownComError))
		if _, ok := f.Status(); ok {
			t.Fatal("status known after ERR only")
		}
	})
}

func TestFramerMalformed(t *testing.T) {
	tests := []struct {
		name string
		kind ResponseKind
		caps Capability
		pkts [][]byte
	}{
		{"empty packet", ResponseQuery, classic, [][]byte{{}}},
		{"EOF first", ResponseQuery, classic, [][]byte{AppendEOF(nil, 0, 0)}},
		{"zero columns", ResponseQuery, classic, [][]byte{{0xfc, 0, 0}}},
		{"column count with junk", ResponseQuery, classic, [][]byte{{1, 2, 3}}},
		{"truncated column count", ResponseQuery, classic, [][]byte{{0xfd, 1}}},
		{"no EOF after metadata", ResponseQuery, classic, [][]byte{{1}, columnDef("a"), textRow("x")}},
		{"bad OK", ResponseQuery, classic, [][]byte{{0, 0xfc}}},
		{"bad prepare OK", ResponsePrepare, classic, [][]byte{{0, 1, 2}}},
		{"bad terminator", ResponseFetch, deprecate, [][]byte{{0xfe, 0xfd, 1, 2, 3, 4}}},
		{"bad single OK", ResponseSingle, classic, [][]byte{{0, 0xfd}}},
	}
	for _, tt := range tests {
		var f ResponseFramer
		f.Reset(tt.kind, tt.caps)
		var err error
		for _, p := range tt.pkts {
			if _, err = f.Next(p); err != nil {
				break
			}
		}
		if !errors.Is(err, ErrMalformedPacket) {
			t.Errorf("%s: err = %v", tt.name, err)
		}
		if !f.Done() {
			t.Errorf("%s: framer not stopped after an error", tt.name)
		}
	}
}

func TestResponseKindFor(t *testing.T) {
	tests := map[Command]struct {
		kind ResponseKind
		ok   bool
	}{
		ComQuery: {ResponseQuery, true}, ComStmtExecute: {ResponseExecute, true}, ComStmtFetch: {ResponseFetch, true},
		ComStmtPrepare: {ResponsePrepare, true}, ComFieldList: {ResponseFieldList, true}, ComPing: {ResponseSingle, true},
		ComInitDB: {ResponseSingle, true}, ComResetConnection: {ResponseSingle, true}, ComSetOption: {ResponseSingle, true},
		ComQuit: {0, false}, ComStmtClose: {0, false}, ComStmtSendLongData: {0, false}, ComChangeUser: {0, false},
	}
	for cmd, want := range tests {
		if kind, ok := ResponseKindFor(cmd); kind != want.kind || ok != want.ok {
			t.Errorf("%v: %d %v", cmd, kind, ok)
		}
	}
}

// TestRelayLargeRows relays a result set through ReadRawPacket/WriteRaw
// with the framer deciding where it ends, including a row over 16 MiB
// whose first byte is 0xFE (an 8-byte length prefix) under
// CLIENT_DEPRECATE_EOF, where only the packet length tells it from the
// terminator.
func TestRelayLargeRows(t *testing.T) {
	big := MaxPayloadLen + 100
	bigRow := append([]byte{0xfe}, AppendUint64(nil, uint64(big))...)
	bigRow = append(bigRow, bytes.Repeat([]byte{'b'}, big)...)
	r := (&resp{caps: deprecate}).textResult(1, [][]byte{textRow("small"), bigRow, textRow("after")}, ServerStatusInTrans)
	wire := writePackets(t, r.pkts...)
	trailing := writePackets(t, []byte("next response")) // must not be consumed

	pr := NewPacketReader(bufio.NewReader(bytes.NewReader(append(bytes.Clone(wire), trailing...))), 64<<20)
	var out bytes.Buffer
	bw := bufio.NewWriter(&out)
	pw := NewPacketWriter(bw)
	var f ResponseFramer
	f.Reset(ResponseQuery, deprecate)
	for {
		raw, err := pr.ReadRawPacket()
		if err != nil {
			t.Fatal(err)
		}
		if err := pw.WriteRaw(raw); err != nil {
			t.Fatal(err)
		}
		st, err := f.Next(RawPayload(raw))
		if err != nil {
			t.Fatal(err)
		}
		if st == FrameDone {
			break
		}
	}
	_ = pw.Flush()
	if !bytes.Equal(out.Bytes(), wire) {
		t.Fatal("relayed response differs")
	}
	if f.Packets() != len(r.pkts) {
		t.Fatalf("framer saw %d packets, want %d", f.Packets(), len(r.pkts))
	}
	if s, _ := f.Status(); s != ServerStatusInTrans {
		t.Fatalf("status %#x", s)
	}
	// The same with decoded payloads.
	f.Reset(ResponseQuery, deprecate)
	pr = newReader(wire, 64<<20)
	for i := range r.pkts {
		p, err := pr.ReadPacket()
		if err != nil {
			t.Fatal(err)
		}
		st, err := f.Next(p)
		if err != nil || (st == FrameDone) != (i == len(r.pkts)-1) {
			t.Fatalf("packet %d: %d %v", i, st, err)
		}
	}
}

func TestFramerDoesNotAllocate(t *testing.T) {
	r := (&resp{caps: deprecate}).textResult(2, [][]byte{textRow("1", "a"), textRow("2", "b")}, ServerMoreResultsExists).ok(0)
	var f ResponseFramer
	n := testing.AllocsPerRun(100, func() {
		f.Reset(ResponseQuery, deprecate)
		for _, p := range r.pkts {
			if _, err := f.Next(p); err != nil {
				t.Fatal(err)
			}
		}
	})
	if n != 0 {
		t.Fatalf("%v allocations per response", n)
	}
}
