package mysqlproto

// Column/parameter type codes (enum_field_types) needed to skip binary
// protocol values.
const (
	typeDecimal    = 0x00
	typeTiny       = 0x01
	typeShort      = 0x02
	typeLong       = 0x03
	typeFloat      = 0x04
	typeDouble     = 0x05
	typeNull       = 0x06
	typeTimestamp  = 0x07
	typeLongLong   = 0x08
	typeInt24      = 0x09
	typeDate       = 0x0a
	typeTime       = 0x0b
	typeDateTime   = 0x0c
	typeYear       = 0x0d
	typeNewDate    = 0x0e
	typeVarchar    = 0x0f
	typeBit        = 0x10
	typeFirstLong  = 0xf2 // VECTOR and up: JSON, NEWDECIMAL, ENUM, SET, blobs, strings, GEOMETRY
	maxQueryParams = 1 << 16
)

// skipBinaryValue advances d past one binary-protocol value of type typ.
func skipBinaryValue(d *decoder, typ byte) {
	switch {
	case typ == typeNull:
	case typ == typeTiny:
		d.take(1)
	case typ == typeShort || typ == typeYear:
		d.take(2)
	case typ == typeLong || typ == typeInt24 || typ == typeFloat:
		d.take(4)
	case typ == typeLongLong || typ == typeDouble:
		d.take(8)
	case typ == typeDate || typ == typeTime || typ == typeDateTime || typ == typeTimestamp || typ == typeNewDate:
		d.take(int(d.u8()))
	case typ == typeDecimal || typ == typeVarchar || typ == typeBit || typ >= typeFirstLong:
		d.lenEncBytes()
	default:
		d.fail()
	}
}

// QueryText returns the SQL text of a COM_QUERY packet. With
// CLIENT_QUERY_ATTRIBUTES the text follows a block of query attributes
// (typed, named parameters), which is skipped without decoding the values.
// The result aliases payload.
func QueryText(payload []byte, caps Capability) ([]byte, error) {
	d := decoder{b: payload}
	if Command(d.u8()) != ComQuery {
		return nil, malformed("COM_QUERY header")
	}
	if caps&ClientQueryAttributes != 0 {
		skipQueryAttributes(&d)
	}
	q := d.rest()
	if d.err != nil {
		return nil, malformed("COM_QUERY")
	}
	return q, nil
}

func skipQueryAttributes(d *decoder) {
	n, _ := d.lenEncInt()
	d.lenEncInt() // parameter set count, always 1
	if n == 0 || d.err != nil {
		return
	}
	if n > maxQueryParams || n > uint64(d.remaining()) {
		d.fail()
		return
	}
	nulls := d.take(int(n+7) / 8)
	if d.u8() != 1 {
		// Without types the values cannot be skipped; a COM_QUERY
		// always binds types, so this is a broken packet.
		d.fail()
		return
	}
	// Each parameter: int<2> type and flags, string<lenenc> name.
	types := make([]byte, 0, min(n, 64))
	for i := uint64(0); i < n && d.err == nil; i++ {
		types = append(types, d.u8())
		d.u8() // flags (unsigned)
		d.lenEncBytes()
	}
	for i, typ := range types {
		if d.err != nil {
			return
		}
		if nulls[i/8]&(1<<(i%8)) == 0 {
			skipBinaryValue(d, typ)
		}
	}
}

// AppendComQuery appends a COM_QUERY packet for query. With
// CLIENT_QUERY_ATTRIBUTES it adds the empty attribute block the protocol
// then requires.
func AppendComQuery(dst []byte, query string, caps Capability) []byte {
	dst = append(dst, byte(ComQuery))
	if caps&ClientQueryAttributes != 0 {
		dst = append(dst, 0, 1) // no parameters, one parameter set
	}
	return append(dst, query...)
}
