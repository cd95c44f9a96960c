package mysqlproto

import "fmt"

// ParseAuthSwitchRequest decodes an AuthSwitchRequest (0xFE, plugin name,
// plugin data), by which the server asks the client to authenticate with
// another plugin. data aliases payload and, for the built-in plugins, is
// the 20-byte scramble followed by a NUL (see TrimScramble). A bare 0xFE is
// the pre-4.1 request to use mysql_old_password and yields ErrUnsupported.
func ParseAuthSwitchRequest(payload []byte) (plugin string, data []byte, err error) {
	if len(payload) == 1 && payload[0] == HeaderEOF {
		return "", nil, fmt.Errorf("%w: mysql_old_password", ErrUnsupported)
	}
	d := decoder{b: payload}
	if d.u8() != HeaderEOF {
		return "", nil, malformed("auth switch request header")
	}
	name := d.nulStringOrRest()
	data = d.rest()
	if d.err != nil {
		return "", nil, malformed("auth switch request")
	}
	return string(name), data, nil
}

// AppendAuthSwitchRequest appends an AuthSwitchRequest. For
// mysql_native_password and caching_sha2_password, pass the scramble with a
// trailing NUL, as MySQL does.
func AppendAuthSwitchRequest(dst []byte, plugin string, data []byte) []byte {
	dst = append(dst, HeaderEOF)
	dst = AppendNullString(dst, plugin)
	return append(dst, data...)
}

// ParseAuthMoreData decodes an AuthMoreData packet (0x01 + plugin data)
// and returns the data, which aliases payload.
func ParseAuthMoreData(payload []byte) ([]byte, error) {
	if len(payload) == 0 || payload[0] != HeaderAuthMore {
		return nil, malformed("auth more data")
	}
	return payload[1:], nil
}

// AppendAuthMoreData appends an AuthMoreData packet.
func AppendAuthMoreData(dst, data []byte) []byte {
	dst = append(dst, HeaderAuthMore)
	return append(dst, data...)
}

// TrimScramble returns the first ScrambleLength bytes of plugin data that
// carries a scramble, dropping the trailing NUL servers add. Shorter input
// is returned unchanged.
func TrimScramble(data []byte) []byte {
	if len(data) > ScrambleLength {
		return data[:ScrambleLength]
	}
	return data
}
