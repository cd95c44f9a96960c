package mysqlproto

import (
	"errors"
	"fmt"
)

// Sentinel errors. Parsers and the packet reader wrap them with context, so
// test with errors.Is.
var (
	// ErrMalformedPacket reports a payload that is truncated or whose
	// fields are inconsistent with each other.
	ErrMalformedPacket = errors.New("mysqlproto: malformed packet")

	// ErrPacketTooLarge reports a packet whose (reassembled) payload exceeds
	// the reader's limit. The rest of the packet is left unread, so the
	// connection is out of step and must be closed, after sending
	// ER_NET_PACKET_TOO_LARGE if it is a client connection.
	ErrPacketTooLarge = errors.New("mysqlproto: packet too large")

	// ErrPacketSequence reports a packet whose sequence id is not the
	// expected one (ER_NET_PACKETS_OUT_OF_ORDER). The connection cannot be
	// trusted any more.
	ErrPacketSequence = errors.New("mysqlproto: packet out of order")

	// ErrUnsupported reports a valid protocol feature this package does not
	// implement (pre-4.1 protocol, mysql_old_password, unknown plugins).
	ErrUnsupported = errors.New("mysqlproto: unsupported protocol feature")
)

// malformed wraps ErrMalformedPacket with the name of what was parsed.
func malformed(what string) error {
	return fmt.Errorf("%w: %s", ErrMalformedPacket, what)
}

// SQLError is a MySQL error as carried by an ERR packet. It is both what
// parsing a server's ERR packet yields and what the proxy sends to clients.
type SQLError struct {
	Code    ErrorCode
	State   string // five-character SQLSTATE, e.g. "28000"
	Message string
}

// Error formats the error the way the mysql command-line client does.
func (e *SQLError) Error() string {
	return fmt.Sprintf("ERROR %d (%s): %s", uint16(e.Code), e.State, e.Message)
}

// NewSQLError returns an error with code's default SQLSTATE (see
// [ErrorCode.SQLState]) and a printf-formatted message.
func NewSQLError(code ErrorCode, format string, args ...any) *SQLError {
	msg := format
	if len(args) > 0 {
		msg = fmt.Sprintf(format, args...)
	}
	return &SQLError{Code: code, State: code.SQLState(), Message: msg}
}
