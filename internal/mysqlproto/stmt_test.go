package mysqlproto

import (
	"bytes"
	"testing"
)

func TestStmtPrepareOKRoundTrip(t *testing.T) {
	p := StmtPrepareOK{StatementID: 0x01020304, NumColumns: 3, NumParams: 2, Warnings: 1, MetadataFollows: true}
	b := AppendStmtPrepareOK(nil, p)
	if len(b) != 12 {
		t.Fatalf("length %d", len(b))
	}
	got, err := ParseStmtPrepareOK(b)
	if err != nil || got != p {
		t.Fatalf("got %+v, %v", got, err)
	}
	// Optional-metadata flag (MySQL 8 with CLIENT_OPTIONAL_RESULTSET_METADATA).
	got, err = ParseStmtPrepareOK(append(bytes.Clone(b), 0))
	if err != nil || got.MetadataFollows {
		t.Fatalf("metadata flag: %+v %v", got, err)
	}
	// Short 9-byte form without warnings.
	if got, err := ParseStmtPrepareOK(b[:9]); err != nil || got.StatementID != p.StatementID || got.Warnings != 0 {
		t.Fatalf("9-byte form: %+v %v", got, err)
	}
	for _, cut := range []int{0, 1, 4, 8, 10, 11} {
		if _, err := ParseStmtPrepareOK(b[:cut]); err == nil {
			t.Errorf("cut at %d accepted", cut)
		}
	}
	if _, err := ParseStmtPrepareOK(append([]byte{0xff}, b[1:]...)); err == nil {
		t.Error("ERR header accepted")
	}
}

func TestStatementIDRewrite(t *testing.T) {
	for _, cmd := range []Command{ComStmtExecute, ComStmtSendLongData, ComStmtClose, ComStmtReset, ComStmtFetch, ComStmtBulkExecute} {
		p := []byte{byte(cmd), 7, 0, 0, 0, 0xaa, 0xbb}
		id, err := StatementID(p)
		if err != nil || id != 7 {
			t.Fatalf("%v: id %d %v", cmd, id, err)
		}
		if err := SetStatementID(p, 0xdeadbeef); err != nil {
			t.Fatal(err)
		}
		if id, _ := StatementID(p); id != 0xdeadbeef || p[5] != 0xaa || p[6] != 0xbb {
			t.Fatalf("%v: after rewrite % x", cmd, p)
		}
	}
	for _, bad := range [][]byte{nil, {byte(ComStmtClose), 1, 0, 0}, {byte(ComQuery), 1, 0, 0, 0}} {
		if _, err := StatementID(bad); err == nil {
			t.Errorf("StatementID(% x) accepted", bad)
		}
		if err := SetStatementID(bad, 1); err == nil {
			t.Errorf("SetStatementID(% x) accepted", bad)
		}
	}
}

func TestParseStmtExecute(t *testing.T) {
	p := []byte{byte(ComStmtExecute), 5, 0, 0, 0, byte(CursorTypeReadOnly), 1, 0, 0, 0, 0x00, 0x01, 0x08, 0x00, 42, 0, 0, 0, 0, 0, 0, 0}
	e, err := ParseStmtExecute(p)
	if err != nil || e.StatementID != 5 || !e.OpensCursor() || e.IterationCount != 1 || !bytes.Equal(e.Params, p[10:]) {
		t.Fatalf("%+v %v", e, err)
	}
	p[5] = byte(CursorTypeParameterCountAvailable)
	if e, _ := ParseStmtExecute(p); e.OpensCursor() {
		t.Error("PARAMETER_COUNT_AVAILABLE taken for a cursor")
	}
	for cut := 0; cut < 10; cut++ {
		if _, err := ParseStmtExecute(p[:cut]); err == nil {
			t.Errorf("cut at %d accepted", cut)
		}
	}
	f := []byte{byte(ComStmtFetch), 5, 0, 0, 0, 100, 0, 0, 0}
	if id, n, err := ParseStmtFetch(f); err != nil || id != 5 || n != 100 {
		t.Fatalf("fetch %d %d %v", id, n, err)
	}
	if _, _, err := ParseStmtFetch(f[:8]); err == nil {
		t.Error("short fetch accepted")
	}
}

func TestCommandString(t *testing.T) {
	for c, want := range map[Command]string{ComQuery: "COM_QUERY", ComStmtExecute: "COM_STMT_EXECUTE",
		ComResetConnection: "COM_RESET_CONNECTION", ComStmtBulkExecute: "COM_STMT_BULK_EXECUTE", 0x77: "COM_UNKNOWN(0x77)"} {
		if c.String() != want {
			t.Errorf("%d: %q", c, c.String())
		}
	}
}
