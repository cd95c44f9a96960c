package mysqlproto

import (
	"bytes"
	"testing"
)

func colDef(name string, typ byte, extended bool) []byte {
	var b []byte
	for _, s := range []string{"def", "", "", "", name, ""} {
		b = AppendLenEncString(b, s)
	}
	if extended {
		b = AppendLenEncString(b, "")
	}
	b = append(b, 0x0c, 33, 0, 21, 0, 0, 0, typ, 0x81, 0, 0, 0, 0)
	return b
}

func TestRenameColumnAndType(t *testing.T) {
	for _, ext := range []bool{false, true} {
		caps := Capability(0)
		if ext {
			caps = MariaDBClientExtendedMetadata
		}
		def := colDef("1073741825", TypeLongLong, ext)
		got := RenameColumn(def, "1073741825", "CONNECTION_ID()")
		if want := colDef("CONNECTION_ID()", TypeLongLong, ext); !bytes.Equal(got, want) {
			t.Fatalf("extended=%v: renamed %q, want %q", ext, got, want)
		}
		if got := RenameColumn(colDef("1073741825+0", TypeLongLong, ext), "1073741825", "CONNECTION_ID()"); !bytes.Equal(got, colDef("CONNECTION_ID()+0", TypeLongLong, ext)) {
			t.Errorf("expression not renamed: %q", got)
		}
		if RenameColumn(def, "other", "x") != nil {
			t.Error("renamed a column of another name")
		}
		typ, err := ColumnType(got, caps)
		if err != nil || typ != TypeLongLong {
			t.Errorf("extended=%v: ColumnType = %d, %v", ext, typ, err)
		}
	}
	if _, err := ColumnType([]byte{3, 'd', 'e'}, 0); err == nil {
		t.Error("truncated definition accepted")
	}
}
