package mysqlproto

import (
	"testing"
)

// queryWithAttrs builds a COM_QUERY with query attributes. Each attribute
// is (type, name, encoded value); a nil value is NULL.
func queryWithAttrs(query string, attrs ...struct {
	typ   byte
	name  string
	value []byte
}) []byte {
	b := []byte{byte(ComQuery)}
	b = AppendLenEncInt(b, uint64(len(attrs)))
	b = AppendLenEncInt(b, 1)
	if len(attrs) > 0 {
		nulls := make([]byte, (len(attrs)+7)/8)
		for i, a := range attrs {
			if a.value == nil {
				nulls[i/8] |= 1 << (i % 8)
			}
		}
		b = append(b, nulls...)
		b = append(b, 1)
		for _, a := range attrs {
			b = append(b, a.typ, 0)
			b = AppendLenEncString(b, a.name)
		}
		for _, a := range attrs {
			b = append(b, a.value...)
		}
	}
	return append(b, query...)
}

type attr = struct {
	typ   byte
	name  string
	value []byte
}

func TestQueryText(t *testing.T) {
	plain := AppendComQuery(nil, "SELECT 1", 0)
	if q, err := QueryText(plain, 0); err != nil || string(q) != "SELECT 1" {
		t.Fatalf("%q %v", q, err)
	}
	withEmpty := AppendComQuery(nil, "SELECT 2", ClientQueryAttributes)
	if q, err := QueryText(withEmpty, ClientQueryAttributes); err != nil || string(q) != "SELECT 2" {
		t.Fatalf("%q %v", q, err)
	}
	full := queryWithAttrs("SELECT 3",
		attr{typeLongLong, "id", []byte{1, 2, 3, 4, 5, 6, 7, 8}},
		attr{typeVarchar, "trace", AppendLenEncString(nil, "abc-123")},
		attr{typeNull, "n", nil},
		attr{typeTiny, "t", []byte{1}},
		attr{typeDateTime, "ts", []byte{4, 0xe8, 0x07, 1, 2}},
		attr{0xfc, "blob", AppendLenEncString(nil, "xyz")},
		attr{typeDouble, "d", make([]byte, 8)},
		attr{typeShort, "s", []byte{1, 2}},
		attr{typeLong, "l", []byte{1, 2, 3, 4}},
		attr{typeVarchar, "nullstr", nil},
	)
	if q, err := QueryText(full, ClientQueryAttributes); err != nil || string(q) != "SELECT 3" {
		t.Fatalf("%q %v", q, err)
	}
	bad := [][]byte{
		nil,
		{byte(ComPing)},
		queryWithAttrs("", attr{0x30, "x", []byte{1}}), // unknown type
		{byte(ComQuery), 2, 1, 0, 0},                   // bind flag 0
		{byte(ComQuery), 0xfc, 0xff, 0xff, 1},          // too many parameters
	}
	for _, b := range bad {
		if _, err := QueryText(b, ClientQueryAttributes); err == nil {
			t.Errorf("QueryText(% x) accepted", b)
		}
	}
	// Truncating the attribute block is detected.
	for cut := 1; cut < len(full)-len("SELECT 3"); cut++ {
		if q, err := QueryText(full[:cut], ClientQueryAttributes); err == nil && len(q) > 0 {
			t.Errorf("cut at %d: got %q", cut, q)
		}
	}
}
