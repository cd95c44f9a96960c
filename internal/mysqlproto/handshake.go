package mysqlproto

import (
	"crypto/rand"
	"fmt"
	"io"
)

// ScrambleLength is the length of the random challenge (nonce) sent in the
// initial handshake and used by mysql_native_password and
// caching_sha2_password.
const ScrambleLength = 20

// Handshake is the server's Initial Handshake Packet, protocol version 10.
type Handshake struct {
	// ServerVersion is shown to clients, e.g. "8.0.36-galeon". MariaDB
	// servers prefix theirs with "5.5.5-" for old replication clients.
	ServerVersion string
	ConnectionID  uint32
	// AuthData is the scramble: 20 random bytes for the built-in plugins.
	// It travels as 8 bytes plus the rest; the parser strips the rest's
	// trailing NUL.
	AuthData []byte
	// Capabilities are the server's flags. If ClientMySQL is clear, bits
	// 32-63 are MariaDB extended capabilities and are sent (and parsed) in
	// the reserved bytes.
	Capabilities Capability
	// Charset is the server's default collation id (e.g. 255 for
	// utf8mb4_0900_ai_ci, 45 for utf8mb4_general_ci).
	Charset    byte
	Status     StatusFlag
	AuthPlugin string
}

// NewScramble returns ScrambleLength random bytes usable as AuthData. Like
// MySQL it keeps bytes in 1..127 and avoids '$': the scramble is sent
// NUL-terminated in places, and '$' is the field separator of
// caching_sha2_password's stored format.
func NewScramble() ([]byte, error) {
	s := make([]byte, ScrambleLength)
	if _, err := io.ReadFull(rand.Reader, s); err != nil {
		return nil, fmt.Errorf("mysqlproto: scramble: %w", err)
	}
	for i, c := range s {
		c &= 0x7f
		if c == 0 || c == '$' {
			c++
		}
		s[i] = c
	}
	return s, nil
}

// AppendHandshake appends an Initial Handshake v10 packet. h.AuthData
// normally holds ScrambleLength bytes; shorter data is zero-padded to the
// protocol's minimum and data beyond the 254 bytes the length byte can
// describe is cut off.
func AppendHandshake(dst []byte, h *Handshake) []byte {
	caps := h.Capabilities
	auth := h.AuthData
	if len(auth) > 254 {
		auth = auth[:254]
	}
	var part1 [8]byte
	copy(part1[:], auth)
	var part2 []byte
	if len(auth) > 8 {
		part2 = auth[8:]
	}

	dst = append(dst, 10)
	dst = AppendNullString(dst, h.ServerVersion)
	dst = AppendUint32(dst, h.ConnectionID)
	dst = append(dst, part1[:]...)
	dst = append(dst, 0) // filler
	dst = AppendUint16(dst, uint16(caps))
	dst = append(dst, h.Charset)
	dst = AppendUint16(dst, uint16(h.Status))
	dst = AppendUint16(dst, uint16(caps>>16))
	if caps&ClientPluginAuth != 0 {
		dst = append(dst, byte(len(auth)+1))
	} else {
		dst = append(dst, 0)
	}
	dst = append(dst, 0, 0, 0, 0, 0, 0) // reserved
	if caps&ClientMySQL == 0 {
		dst = AppendUint32(dst, uint32(caps>>32))
	} else {
		dst = append(dst, 0, 0, 0, 0)
	}
	if caps&ClientSecureConnection != 0 {
		dst = append(dst, part2...)
		// The second part is at least 13 bytes including its NUL.
		for i := len(part2); i < 12; i++ {
			dst = append(dst, 0)
		}
		dst = append(dst, 0)
	}
	if caps&ClientPluginAuth != 0 {
		dst = AppendNullString(dst, h.AuthPlugin)
	}
	return dst
}

// ParseHandshake decodes a server's first packet. If the server refused
// the connection outright (too many connections, host blocked) the packet
// is an ERR, and the error returned is the server's *SQLError.
func ParseHandshake(payload []byte) (*Handshake, error) {
	if IsErr(payload) {
		e, err := ParseErr(payload)
		if err != nil {
			return nil, err
		}
		return nil, e
	}
	d := decoder{b: payload}
	if v := d.u8(); d.err == nil && v != 10 {
		return nil, fmt.Errorf("%w: handshake protocol version %d", ErrUnsupported, v)
	}
	h := &Handshake{}
	h.ServerVersion = string(d.nulString())
	h.ConnectionID = d.u32()
	auth := append([]byte(nil), d.take(8)...)
	d.u8() // filler
	caps := Capability(d.u16())
	if d.err == nil && d.remaining() == 0 {
		// Very old servers end the packet here.
		h.AuthData, h.Capabilities = auth, caps
		return h, nil
	}
	h.Charset = d.u8()
	h.Status = StatusFlag(d.u16())
	caps |= Capability(d.u16()) << 16
	authLen := int(d.u8())
	d.take(6)
	ext := d.u32()
	if caps&ClientMySQL == 0 {
		caps |= Capability(ext) << 32
	}
	if caps&ClientSecureConnection != 0 {
		part2 := d.take(max(13, authLen-8))
		if n := len(part2); n > 0 && part2[n-1] == 0 {
			part2 = part2[:n-1]
		}
		auth = append(auth, part2...)
	}
	if caps&ClientPluginAuth != 0 {
		h.AuthPlugin = string(d.nulStringOrRest())
	}
	if d.err != nil {
		return nil, malformed("initial handshake")
	}
	h.AuthData = auth
	h.Capabilities = caps
	return h, nil
}
