package admin

import (
	mp "github.com/galeon-db/galeon/internal/mysqlproto"
)

// Text-protocol result sets. mysqlproto relays result sets without
// decoding them and so has no encoder for column definitions or rows;
// this file is that encoder, for the few column types the admin
// interface uses.

// Column types (enum_field_types) and flags used in column definitions.
const (
	typeDouble    = 0x05
	typeLongLong  = 0x08
	typeVarString = 0xfd

	flagNotNull = 0x0001
	flagBinary  = 0x0080
	flagNum     = 0x8000

	// charsetBinary marks numeric columns, as MySQL does; text columns use
	// utf8mb4_general_ci, which every MySQL and MariaDB client knows.
	charsetBinary  = 63
	charsetUTF8MB4 = 45

	// notFixedDec is the "decimals" of a DOUBLE without fixed scale.
	notFixedDec = 0x1f

	// minTextLength is the column length announced for text columns; it
	// grows to fit longer values. Clients use it only to size displays.
	minTextLength = 255 * 4
)

// appendColumnDef appends a Protocol::ColumnDefinition41. COM_FIELD_LIST
// answers add a default value, which is always NULL here.
func appendColumnDef(dst []byte, c resultCol, length uint32, fieldList bool) []byte {
	schema := ""
	if c.table != "" {
		schema = "main"
	}
	dst = mp.AppendLenEncString(dst, "def")
	dst = mp.AppendLenEncString(dst, schema)
	dst = mp.AppendLenEncString(dst, c.table)
	dst = mp.AppendLenEncString(dst, c.table)
	dst = mp.AppendLenEncString(dst, c.name)
	dst = mp.AppendLenEncString(dst, c.orgName)
	dst = append(dst, 0x0c) // length of the fixed-size fields
	var (
		charset  uint16 = charsetBinary
		typ      byte
		flags    uint16 = flagBinary | flagNum
		decimals byte
	)
	switch c.kind {
	case Int:
		typ, length = typeLongLong, 20
	case Float:
		typ, length, decimals = typeDouble, 22, notFixedDec
	default:
		typ, charset, flags = typeVarString, charsetUTF8MB4, 0
	}
	dst = mp.AppendUint16(dst, charset)
	dst = mp.AppendUint32(dst, length)
	dst = append(dst, typ)
	dst = mp.AppendUint16(dst, flags)
	dst = append(dst, decimals, 0, 0)
	if fieldList {
		dst = append(dst, 0xfb)
	}
	return dst
}

// appendTextRow appends a text-protocol row: each value as a
// length-encoded string, NULL as 0xFB.
func appendTextRow(dst []byte, row []any) []byte {
	for _, v := range row {
		s, null := formatValue(v)
		if null {
			dst = append(dst, 0xfb)
			continue
		}
		dst = mp.AppendLenEncString(dst, s)
	}
	return dst
}

// textLengths returns the column length to announce for each column of r.
func textLengths(r *result) []uint32 {
	out := make([]uint32, len(r.cols))
	for i := range r.cols {
		out[i] = minTextLength
	}
	for _, row := range r.rows {
		for i, v := range row {
			if s, ok := v.(string); ok && uint32(len(s)) > out[i] {
				out[i] = uint32(min(len(s), 1<<30))
			}
		}
	}
	return out
}

// writeResultSet writes a whole text result set: column count, column
// definitions, the EOF after them unless the client set
// CLIENT_DEPRECATE_EOF, the rows, and the terminator (EOF, or an OK with
// the 0xFE header under CLIENT_DEPRECATE_EOF) carrying status.
func writeResultSet(c *mp.Conn, buf []byte, r *result, caps mp.Capability, status mp.StatusFlag) ([]byte, error) {
	buf = mp.AppendLenEncInt(buf[:0], uint64(len(r.cols)))
	if err := c.WritePacket(buf); err != nil {
		return buf, err
	}
	lengths := textLengths(r)
	for i, col := range r.cols {
		buf = appendColumnDef(buf[:0], col, lengths[i], false)
		if err := c.WritePacket(buf); err != nil {
			return buf, err
		}
	}
	if caps&mp.ClientDeprecateEOF == 0 {
		buf = mp.AppendEOF(buf[:0], 0, status)
		if err := c.WritePacket(buf); err != nil {
			return buf, err
		}
	}
	for _, row := range r.rows {
		buf = appendTextRow(buf[:0], row)
		if err := c.WritePacket(buf); err != nil {
			return buf, err
		}
	}
	return buf, c.WriteEOF(0, status, caps)
}
