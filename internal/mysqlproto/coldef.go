package mysqlproto

import "bytes"

// Column types a proxy reads back as numbers rather than strings
// (enum_field_types).
const (
	TypeDecimal    byte = 0
	TypeTiny       byte = 1
	TypeShort      byte = 2
	TypeLong       byte = 3
	TypeFloat      byte = 4
	TypeDouble     byte = 5
	TypeLongLong   byte = 8
	TypeInt24      byte = 9
	TypeYear       byte = 13
	TypeNewDecimal byte = 246
)

// NumericType reports whether values of column type t are numbers.
func NumericType(t byte) bool {
	switch t {
	case TypeDecimal, TypeTiny, TypeShort, TypeLong, TypeFloat, TypeDouble,
		TypeLongLong, TypeInt24, TypeYear, TypeNewDecimal:
		return true
	}
	return false
}

// columnNameSpan finds the name field of a protocol-4.1 column
// definition: it follows catalog, schema, table and org_table. start and
// end bound the whole length-encoded field; name is its text.
func columnNameSpan(payload []byte) (start, end int, name []byte, err error) {
	off := 0
	for i := 0; i < 5; i++ {
		s, _, n, e := ReadLenEncString(payload[off:])
		if e != nil {
			return 0, 0, nil, malformed("column definition")
		}
		if i == 4 {
			return off, off + n, s, nil
		}
		off += n
	}
	return 0, 0, nil, malformed("column definition")
}

// RenameColumn returns a copy of a column definition payload whose
// column name has every from replaced by to, or nil when its name does
// not contain from. The original name (org_name) and everything else
// stay as they are.
func RenameColumn(payload []byte, from, to string) []byte {
	start, end, name, err := columnNameSpan(payload)
	if err != nil || from == "" || !bytes.Contains(name, []byte(from)) {
		return nil
	}
	renamed := bytes.ReplaceAll(name, []byte(from), []byte(to))
	out := make([]byte, 0, len(payload)+len(renamed)-len(name))
	out = append(out, payload[:start]...)
	out = AppendLenEncBytes(out, renamed)
	return append(out, payload[end:]...)
}

// RenameColumnExact returns a copy of a column definition payload named
// to instead of from, or nil when its name is not exactly from.
func RenameColumnExact(payload []byte, from, to string) []byte {
	start, end, name, err := columnNameSpan(payload)
	if err != nil || string(name) != from {
		return nil
	}
	out := make([]byte, 0, len(payload)+len(to)-len(name))
	out = append(out, payload[:start]...)
	out = AppendLenEncBytes(out, []byte(to))
	return append(out, payload[end:]...)
}

// ColumnType returns the type of a protocol-4.1 column definition
// received on a connection with capabilities caps.
func ColumnType(payload []byte, caps Capability) (byte, error) {
	_, end, _, err := columnNameSpan(payload)
	if err != nil {
		return 0, err
	}
	off := end
	skip := 1 // org_name
	if caps.Has(MariaDBClientExtendedMetadata) {
		skip++ // MariaDB's extended type information
	}
	for ; skip > 0; skip-- {
		_, _, n, e := ReadLenEncString(payload[off:])
		if e != nil {
			return 0, malformed("column definition")
		}
		off += n
	}
	// Length of the fixed fields (0x0c), character set (2), column
	// length (4), then the type.
	_, _, n, e := ReadLenEncInt(payload[off:])
	if e != nil || len(payload) < off+n+7 {
		return 0, malformed("column definition")
	}
	return payload[off+n+6], nil
}
