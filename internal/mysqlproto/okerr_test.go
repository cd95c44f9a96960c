package mysqlproto

import (
	"bytes"
	"errors"
	"reflect"
	"testing"
)

func TestOKRoundTrip(t *testing.T) {
	state := AppendSessionStateChange(nil, SessionTrackSchema, AppendLenEncString(nil, "shop"))
	tests := []struct {
		name string
		caps Capability
		ok   OKPacket
		want OKPacket // if different from ok
	}{
		{"minimal", ClientProtocol41, OKPacket{}, OKPacket{Info: []byte{}}},
		{"counts", ClientProtocol41, OKPacket{AffectedRows: 300, LastInsertID: 1 << 40, Status: ServerStatusInTrans, Warnings: 2, Info: []byte("Rows matched: 1")}, OKPacket{}},
		{"session track, empty", ClientProtocol41 | ClientSessionTrack, OKPacket{Status: ServerStatusAutocommit}, OKPacket{}},
		{"session track, info", ClientProtocol41 | ClientSessionTrack, OKPacket{Info: []byte("hello")}, OKPacket{}},
		{"session track, state", ClientProtocol41 | ClientSessionTrack, OKPacket{SessionState: state},
			OKPacket{Status: ServerSessionStateChanged, Info: []byte{}, SessionState: state}},
		{"transactions only", ClientTransactions, OKPacket{Status: ServerStatusAutocommit, Info: []byte("x")}, OKPacket{}},
		{"pre-4.1", 0, OKPacket{AffectedRows: 1, Info: []byte("x")}, OKPacket{}},
	}
	for _, tt := range tests {
		want := tt.want
		if reflect.DeepEqual(want, OKPacket{}) {
			want = tt.ok
		}
		for _, term := range []bool{false, true} {
			var b []byte
			if term {
				b = AppendOKTerminator(nil, &tt.ok, tt.caps)
			} else {
				b = AppendOK(nil, &tt.ok, tt.caps)
			}
			got, err := ParseOK(b, tt.caps)
			if err != nil {
				t.Fatalf("%s: %v", tt.name, err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s (terminator=%v): got %+v, want %+v", tt.name, term, got, want)
			}
			if term != (b[0] == HeaderEOF) {
				t.Errorf("%s: header %#x", tt.name, b[0])
			}
		}
	}
}

func TestParseOKTruncated(t *testing.T) {
	caps := ClientProtocol41 | ClientSessionTrack
	b := AppendOK(nil, &OKPacket{AffectedRows: 70000, Info: []byte("info"), SessionState: []byte{1, 1, 'x'}}, caps)
	// Everything up to the end of the status/warnings is mandatory; the
	// info and state strings are length-prefixed, so cutting inside them
	// is detected too.
	for cut := 0; cut < len(b); cut++ {
		// Cutting right after the warnings (10) or after the info (15)
		// leaves an OK whose optional trailing fields are absent, which
		// servers do send; everything else must be rejected.
		if cut == 10 || cut == 15 {
			continue
		}
		if _, err := ParseOK(b[:cut], caps); !errors.Is(err, ErrMalformedPacket) {
			t.Errorf("cut at %d: err = %v", cut, err)
		}
	}
	if _, err := ParseOK([]byte{0xff, 0, 0, 0, 0, 0, 0}, caps); err == nil {
		t.Error("ERR header accepted as OK")
	}
}

func TestErrRoundTrip(t *testing.T) {
	e := NewSQLError(ErAccessDeniedError, "Access denied for user '%s'", "bob")
	if e.State != "28000" {
		t.Fatalf("default state %q", e.State)
	}
	b := AppendErr(nil, e, ClientProtocol41)
	if !IsErr(b) {
		t.Fatal("IsErr false")
	}
	got, err := ParseErr(b)
	if err != nil || *got != *e {
		t.Fatalf("got %+v, %v", got, err)
	}
	if code, ok := ErrCode(b); !ok || code != ErAccessDeniedError {
		t.Fatalf("ErrCode = %d, %v", code, ok)
	}
	if got.Error() != "ERROR 1045 (28000): Access denied for user 'bob'" {
		t.Errorf("Error() = %q", got.Error())
	}
	var target *SQLError
	if !errors.As(error(got), &target) {
		t.Error("errors.As failed")
	}

	// Without CLIENT_PROTOCOL_41 there is no SQLSTATE.
	b = AppendErr(nil, e, 0)
	got, err = ParseErr(b)
	if err != nil || got.State != "HY000" || got.Message != e.Message || got.Code != e.Code {
		t.Fatalf("pre-4.1: %+v %v", got, err)
	}

	// A bad state is replaced.
	b = AppendErr(nil, &SQLError{Code: 1, State: "x", Message: "m"}, ClientProtocol41)
	if got, _ := ParseErr(b); got.State != "HY000" {
		t.Errorf("state %q", got.State)
	}

	for _, bad := range [][]byte{nil, {0xff}, {0xff, 1}, {0xff, 1, 0, '#', 'H', 'Y'}, {0x00, 1, 0}} {
		if _, err := ParseErr(bad); !errors.Is(err, ErrMalformedPacket) {
			t.Errorf("ParseErr(% x) err = %v", bad, err)
		}
	}
	if _, ok := ErrCode([]byte{0xff, 1}); ok {
		t.Error("ErrCode accepted a short packet")
	}
}

func TestErrorCodeStates(t *testing.T) {
	tests := map[ErrorCode]string{
		ErAccessDeniedError:    "28000",
		ErDBAccessDeniedError:  "42000",
		ErUnknownComError:      "08S01",
		ErHandshakeError:       "08S01",
		ErNetPacketTooLarge:    "08S01",
		ErNetPacketsOutOfOrder: "08S01",
		ErBadDBError:           "42000",
		ErUnknownStmtHandler:   "HY000",
		ErNotSupportedYet:      "42000",
		ErConCountError:        "08004",
		ErQueryInterrupted:     "70100",
		ErLockDeadlock:         "40001",
		CrServerGoneError:      "HY000",
		CrServerLost:           "HY000",
		ErGaleonNoBackend:      "HY000",
		ErGaleonWriterChanged:  "40001",
		ErGaleonBackendLost:    "08S01",
	}
	for code, want := range tests {
		if got := code.SQLState(); got != want {
			t.Errorf("%d: state %q, want %q", code, got, want)
		}
	}
}

func TestEOF(t *testing.T) {
	b := AppendEOF(nil, 3, ServerMoreResultsExists|ServerStatusAutocommit)
	w, s, err := ParseEOF(b)
	if err != nil || w != 3 || s != ServerMoreResultsExists|ServerStatusAutocommit {
		t.Fatalf("%d %v %v", w, s, err)
	}
	if w, s, err := ParseEOF([]byte{0xfe}); err != nil || w != 0 || s != 0 {
		t.Fatalf("bare EOF: %d %v %v", w, s, err)
	}
	for _, bad := range [][]byte{nil, {0}, make([]byte, 9)} {
		if _, _, err := ParseEOF(bad); err == nil {
			t.Errorf("ParseEOF(% x) accepted", bad)
		}
	}

	// AppendResultSetTerminator follows CLIENT_DEPRECATE_EOF, and
	// ParseTerminator reads both forms.
	for _, caps := range []Capability{ClientProtocol41, ClientProtocol41 | ClientDeprecateEOF, ClientProtocol41 | ClientDeprecateEOF | ClientSessionTrack} {
		b := AppendResultSetTerminator(nil, 7, ServerStatusInTrans, caps)
		deprecate := caps&ClientDeprecateEOF != 0
		if !IsEOF(b, deprecate) {
			t.Fatalf("caps %#x: not a terminator: % x", caps, b)
		}
		w, s, err := ParseTerminator(b, caps)
		if err != nil || w != 7 || s != ServerStatusInTrans {
			t.Errorf("caps %#x: %d %v %v", caps, w, s, err)
		}
	}
}

func TestPacketTypeDetection(t *testing.T) {
	eof := AppendEOF(nil, 0, 0)
	okTerm := AppendOKTerminator(nil, &OKPacket{Info: bytes.Repeat([]byte("i"), 40)}, ClientProtocol41)
	// A text row whose first column is a string of 2^24+ bytes starts
	// with 0xFE followed by an 8-byte length.
	bigRowHead := make([]byte, MaxPayloadLen)
	bigRowHead[0] = 0xfe
	shortFE := []byte{0xfe, 1, 2, 3, 4, 5, 6, 7, 8, 'x'} // 0xFE + 8-byte length: a row, not EOF
	tests := []struct {
		name               string
		p                  []byte
		ok, err, eof, eofD bool
	}{
		{"OK", AppendOK(nil, &OKPacket{}, ClientProtocol41), true, false, false, false},
		{"ERR", AppendErr(nil, NewSQLError(1, "x"), ClientProtocol41), false, true, false, false},
		{"EOF", eof, false, false, true, true},
		{"OK terminator", okTerm, false, false, false, true},
		{"0xFE row", shortFE, false, false, false, true},
		{"16 MiB 0xFE row", bigRowHead, false, false, false, false},
		{"empty", nil, false, false, false, false},
		{"short 0x00", []byte{0, 0}, false, false, false, false},
	}
	for _, tt := range tests {
		if IsOK(tt.p) != tt.ok || IsErr(tt.p) != tt.err || IsEOF(tt.p, false) != tt.eof || IsEOF(tt.p, true) != tt.eofD {
			t.Errorf("%s: IsOK=%v IsErr=%v IsEOF=%v IsEOF(deprecate)=%v", tt.name,
				IsOK(tt.p), IsErr(tt.p), IsEOF(tt.p, false), IsEOF(tt.p, true))
		}
	}
}

func TestSessionState(t *testing.T) {
	var state []byte
	vars := AppendLenEncString(AppendLenEncString(nil, "autocommit"), "OFF")
	state = AppendSessionStateChange(state, SessionTrackSystemVariables, vars)
	state = AppendSessionStateChange(state, SessionTrackSchema, AppendLenEncString(nil, "shop"))
	state = AppendSessionStateChange(state, SessionTrackTransactionState, AppendLenEncString(nil, "T_______"))

	caps := ClientProtocol41 | ClientSessionTrack
	ok, err := ParseOK(AppendOK(nil, &OKPacket{SessionState: state}, caps), caps)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for b := ok.SessionState; len(b) > 0; {
		typ, data, rest, err := NextSessionStateChange(b)
		if err != nil {
			t.Fatal(err)
		}
		switch typ {
		case SessionTrackSystemVariables:
			name, value, err := ParseSessionTrackVariable(data)
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, string(name)+"="+string(value))
		default:
			s, err := ParseSessionTrackString(data)
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, string(s))
		}
		b = rest
	}
	if want := []string{"autocommit=OFF", "shop", "T_______"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("got %q", got)
	}
	if _, _, _, err := NextSessionStateChange([]byte{1, 5, 'a'}); err == nil {
		t.Error("truncated entry accepted")
	}
	if _, _, err := ParseSessionTrackVariable([]byte{1, 'a'}); err == nil {
		t.Error("truncated variable accepted")
	}
	if _, err := ParseSessionTrackString(nil); err == nil {
		t.Error("empty string data accepted")
	}
}

func TestClearStatus(t *testing.T) {
	const inTx = ServerStatusInTrans | ServerStatusAutocommit | ServerQueryNoIndexUsed
	for _, caps := range []Capability{ClientProtocol41, ClientProtocol41 | ClientDeprecateEOF, ClientProtocol41 | ClientSessionTrack} {
		ok := AppendOK(nil, &OKPacket{AffectedRows: 300, LastInsertID: 1 << 20, Status: inTx, Warnings: 2, Info: []byte("Records: 2")}, caps)
		if !ClearStatus(ok, caps, ServerStatusInTrans) {
			t.Fatalf("caps %#x: OK not cleared", caps)
		}
		got, err := ParseOK(ok, caps)
		if err != nil || got.Status != ServerStatusAutocommit|ServerQueryNoIndexUsed || got.AffectedRows != 300 || got.LastInsertID != 1<<20 || got.Warnings != 2 || string(got.Info) != "Records: 2" {
			t.Errorf("caps %#x: OK after clear: %+v %v", caps, got, err)
		}
		term := AppendResultSetTerminator(nil, 3, inTx, caps)
		if !ClearStatus(term, caps, ServerStatusInTrans) {
			t.Fatalf("caps %#x: terminator not cleared", caps)
		}
		if w, s, err := ParseTerminator(term, caps); err != nil || w != 3 || s != ServerStatusAutocommit|ServerQueryNoIndexUsed {
			t.Errorf("caps %#x: terminator after clear: %d %v %v", caps, w, s, err)
		}
	}
	if ClearStatus([]byte{HeaderErr, 0x10, 0x04}, ClientProtocol41, ServerStatusInTrans) {
		t.Error("an ERR packet has no status")
	}
	if ClearStatus([]byte{HeaderOK, 0xfc}, ClientProtocol41, ServerStatusInTrans) {
		t.Error("a truncated OK was cleared")
	}
}
