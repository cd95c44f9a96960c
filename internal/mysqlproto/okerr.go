package mysqlproto

import "encoding/binary"

// Packet header bytes of the generic response packets.
const (
	HeaderOK          = 0x00
	HeaderLocalInfile = 0xfb
	HeaderEOF         = 0xfe // also AuthSwitchRequest, and OK-as-terminator under CLIENT_DEPRECATE_EOF
	HeaderErr         = 0xff
	HeaderAuthMore    = 0x01
)

// OKPacket is a decoded OK packet. Info and SessionState alias the parsed
// payload: copy them if they must outlive it.
type OKPacket struct {
	AffectedRows uint64
	LastInsertID uint64
	Status       StatusFlag
	Warnings     uint16
	// Info is the human-readable message ("Rows matched: 1 Changed: 1 ...").
	Info []byte
	// SessionState is the raw session-state-change block, present when
	// CLIENT_SESSION_TRACK is on and Status has ServerSessionStateChanged;
	// walk it with NextSessionStateChange.
	SessionState []byte
}

// IsOK reports whether payload is an OK packet (header 0x00). Use it only
// where a binary row cannot appear: first packet of a response, after
// authentication. Inside a result set use IsEOF.
func IsOK(payload []byte) bool {
	return len(payload) >= 7 && payload[0] == HeaderOK
}

// IsErr reports whether payload is an ERR packet. 0xFF can never start a
// row (it is not a valid length-encoded integer prefix), so this holds in
// every context.
func IsErr(payload []byte) bool {
	return len(payload) > 0 && payload[0] == HeaderErr
}

// IsEOF reports whether payload ends a result set (or its metadata).
//
// Without CLIENT_DEPRECATE_EOF that is a classic EOF packet: header 0xFE
// and at most 8 bytes long. A text row starting with 0xFE (the prefix of an
// 8-byte length) is at least 9 bytes, so the length disambiguates.
//
// With CLIENT_DEPRECATE_EOF the terminator is an OK packet that keeps the
// 0xFE header and can be longer than 8 bytes (info, session state). It is
// told apart from a row by being shorter than MaxPayloadLen: a row starting
// with 0xFE holds a string of at least 16 MiB. For a split packet pass the
// first chunk (RawPayload) or the whole payload; both are >= MaxPayloadLen.
func IsEOF(payload []byte, deprecateEOF bool) bool {
	if len(payload) == 0 || payload[0] != HeaderEOF {
		return false
	}
	if deprecateEOF {
		return len(payload) < MaxPayloadLen
	}
	return len(payload) <= 8
}

// ParseOK decodes an OK packet. It accepts header 0x00 and the 0xFE header
// of a result-set terminator under CLIENT_DEPRECATE_EOF. It does not
// allocate.
func ParseOK(payload []byte, caps Capability) (OKPacket, error) {
	var ok OKPacket
	d := decoder{b: payload}
	if h := d.u8(); h != HeaderOK && h != HeaderEOF {
		return ok, malformed("OK packet header")
	}
	ok.AffectedRows, _ = d.lenEncInt()
	ok.LastInsertID, _ = d.lenEncInt()
	switch {
	case caps&ClientProtocol41 != 0:
		ok.Status = StatusFlag(d.u16())
		ok.Warnings = d.u16()
	case caps&ClientTransactions != 0:
		ok.Status = StatusFlag(d.u16())
	}
	if caps&ClientSessionTrack != 0 {
		// Servers omit the info string when it is empty and nothing
		// changed, so everything after the status is optional.
		if d.remaining() > 0 {
			ok.Info = d.lenEncBytes()
		}
		if ok.Status&ServerSessionStateChanged != 0 && d.remaining() > 0 {
			ok.SessionState = d.lenEncBytes()
		}
	} else {
		ok.Info = d.rest()
	}
	if d.err != nil {
		return OKPacket{}, malformed("OK packet")
	}
	return ok, nil
}

// AppendOK appends an OK packet (header 0x00). With CLIENT_SESSION_TRACK a
// non-empty ok.SessionState sets ServerSessionStateChanged.
func AppendOK(dst []byte, ok *OKPacket, caps Capability) []byte {
	return appendOK(dst, HeaderOK, ok, caps)
}

// AppendOKTerminator appends the OK packet with the 0xFE header that ends a
// result set when CLIENT_DEPRECATE_EOF is on.
func AppendOKTerminator(dst []byte, ok *OKPacket, caps Capability) []byte {
	return appendOK(dst, HeaderEOF, ok, caps)
}

func appendOK(dst []byte, header byte, ok *OKPacket, caps Capability) []byte {
	status := ok.Status
	track := caps&ClientSessionTrack != 0
	if track && len(ok.SessionState) > 0 {
		status |= ServerSessionStateChanged
	}
	dst = append(dst, header)
	dst = AppendLenEncInt(dst, ok.AffectedRows)
	dst = AppendLenEncInt(dst, ok.LastInsertID)
	switch {
	case caps&ClientProtocol41 != 0:
		dst = AppendUint16(dst, uint16(status))
		dst = AppendUint16(dst, ok.Warnings)
	case caps&ClientTransactions != 0:
		dst = AppendUint16(dst, uint16(status))
	}
	if track {
		changed := status&ServerSessionStateChanged != 0
		if changed || len(ok.Info) > 0 {
			dst = AppendLenEncBytes(dst, ok.Info)
		}
		if changed {
			dst = AppendLenEncBytes(dst, ok.SessionState)
		}
		return dst
	}
	return append(dst, ok.Info...)
}

// ParseErr decodes an ERR packet. The SQLSTATE marker '#' is optional: a
// server sends ERR before it knows the client's capabilities (e.g. "Too
// many connections" in place of the handshake) and old servers omit it;
// State is then "HY000".
//
// MariaDB sends progress reports as ERR packets with code 0xFFFF, but only
// to clients that set MariaDBClientProgress; do not negotiate it.
func ParseErr(payload []byte) (*SQLError, error) {
	d := decoder{b: payload}
	if d.u8() != HeaderErr {
		return nil, malformed("ERR packet header")
	}
	e := &SQLError{Code: ErrorCode(d.u16()), State: "HY000"}
	if c, ok := d.peek(); ok && c == '#' {
		d.u8()
		e.State = string(d.take(5))
	}
	e.Message = string(d.rest())
	if d.err != nil {
		return nil, malformed("ERR packet")
	}
	return e, nil
}

// ErrCode returns the error code of an ERR packet without allocating.
func ErrCode(payload []byte) (ErrorCode, bool) {
	if len(payload) < 3 || payload[0] != HeaderErr {
		return 0, false
	}
	return ErrorCode(binary.LittleEndian.Uint16(payload[1:])), true
}

// AppendErr appends an ERR packet. The SQLSTATE is sent when
// CLIENT_PROTOCOL_41 is in caps; an empty or malformed State becomes
// "HY000". Before capabilities are negotiated pass ClientProtocol41, as
// MySQL does for its pre-handshake errors.
func AppendErr(dst []byte, e *SQLError, caps Capability) []byte {
	dst = append(dst, HeaderErr)
	dst = AppendUint16(dst, uint16(e.Code))
	if caps&ClientProtocol41 != 0 {
		state := e.State
		if len(state) != 5 {
			state = "HY000"
		}
		dst = append(dst, '#')
		dst = append(dst, state...)
	}
	return append(dst, e.Message...)
}

// ParseEOF decodes a classic EOF packet (0xFE, warnings, status). A bare
// pre-4.1 EOF (just 0xFE) yields zeros.
func ParseEOF(payload []byte) (warnings uint16, status StatusFlag, err error) {
	if len(payload) == 0 || payload[0] != HeaderEOF || len(payload) > 8 {
		return 0, 0, malformed("EOF packet")
	}
	if len(payload) < 5 {
		return 0, 0, nil
	}
	return binary.LittleEndian.Uint16(payload[1:]), StatusFlag(binary.LittleEndian.Uint16(payload[3:])), nil
}

// AppendEOF appends a classic EOF packet.
func AppendEOF(dst []byte, warnings uint16, status StatusFlag) []byte {
	dst = append(dst, HeaderEOF)
	dst = AppendUint16(dst, warnings)
	return AppendUint16(dst, uint16(status))
}

// AppendResultSetTerminator appends what ends a result set for a client
// with capabilities caps: an EOF packet, or with CLIENT_DEPRECATE_EOF an OK
// packet with the 0xFE header.
func AppendResultSetTerminator(dst []byte, warnings uint16, status StatusFlag, caps Capability) []byte {
	if caps&ClientDeprecateEOF != 0 {
		return AppendOKTerminator(dst, &OKPacket{Status: status, Warnings: warnings}, caps)
	}
	return AppendEOF(dst, warnings, status)
}

// ParseTerminator returns the warnings and status of a packet for which
// IsEOF is true: a classic EOF, or under CLIENT_DEPRECATE_EOF an OK packet
// with the 0xFE header (a 5-byte classic EOF is still recognised there).
func ParseTerminator(payload []byte, caps Capability) (warnings uint16, status StatusFlag, err error) {
	if caps&ClientDeprecateEOF == 0 || len(payload) <= 5 {
		return ParseEOF(payload)
	}
	ok, err := ParseOK(payload, caps)
	if err != nil {
		return 0, 0, err
	}
	return ok.Warnings, ok.Status, nil
}
