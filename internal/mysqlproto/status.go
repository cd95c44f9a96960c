package mysqlproto

// StatusFlag is the SERVER_STATUS_* bit set carried by OK and EOF packets.
// A proxy reads it to know whether a connection is inside a transaction
// (and so pinned to its backend) and whether more results follow.
type StatusFlag uint16

// Server status flags (mysql_com.h).
const (
	ServerStatusInTrans            StatusFlag = 0x0001 // SERVER_STATUS_IN_TRANS
	ServerStatusAutocommit         StatusFlag = 0x0002 // SERVER_STATUS_AUTOCOMMIT
	ServerMoreResultsExists        StatusFlag = 0x0008 // SERVER_MORE_RESULTS_EXISTS
	ServerQueryNoGoodIndexUsed     StatusFlag = 0x0010 // SERVER_QUERY_NO_GOOD_INDEX_USED
	ServerQueryNoIndexUsed         StatusFlag = 0x0020 // SERVER_QUERY_NO_INDEX_USED
	ServerStatusCursorExists       StatusFlag = 0x0040 // SERVER_STATUS_CURSOR_EXISTS
	ServerStatusLastRowSent        StatusFlag = 0x0080 // SERVER_STATUS_LAST_ROW_SENT
	ServerStatusDBDropped          StatusFlag = 0x0100 // SERVER_STATUS_DB_DROPPED
	ServerStatusNoBackslashEscapes StatusFlag = 0x0200 // SERVER_STATUS_NO_BACKSLASH_ESCAPES
	ServerStatusMetadataChanged    StatusFlag = 0x0400 // SERVER_STATUS_METADATA_CHANGED
	ServerQueryWasSlow             StatusFlag = 0x0800 // SERVER_QUERY_WAS_SLOW
	ServerPSOutParams              StatusFlag = 0x1000 // SERVER_PS_OUT_PARAMS
	ServerStatusInTransReadonly    StatusFlag = 0x2000 // SERVER_STATUS_IN_TRANS_READONLY
	ServerSessionStateChanged      StatusFlag = 0x4000 // SERVER_SESSION_STATE_CHANGED
	ServerStatusAnsiQuotes         StatusFlag = 0x8000 // MariaDB: SERVER_STATUS_ANSI_QUOTES
)

// Has reports whether every flag in f is set in s.
func (s StatusFlag) Has(f StatusFlag) bool { return s&f == f }

// ClearStatus clears the flags of mask in the status of an OK packet, an
// EOF packet or a result set's terminator, in place, and reports whether
// the payload had a status to clear. A proxy that ran a client's
// autocommit statement inside a transaction of its own uses it to give
// the client the statement's answer with the status it would have had
// alone (no SERVER_STATUS_IN_TRANS).
func ClearStatus(payload []byte, caps Capability, mask StatusFlag) bool {
	if len(payload) == 0 || caps&ClientProtocol41 == 0 {
		return false
	}
	at := 0
	switch {
	case payload[0] == HeaderEOF && caps&ClientDeprecateEOF == 0:
		if len(payload) < 5 {
			return false
		}
		at = 3 // header, warnings, status
	case payload[0] == HeaderOK || payload[0] == HeaderEOF:
		rest := payload[1:]
		for range 2 { // affected rows, last insert id
			_, _, n, err := ReadLenEncInt(rest)
			if err != nil {
				return false
			}
			rest = rest[n:]
		}
		at = len(payload) - len(rest)
		if len(rest) < 2 {
			return false
		}
	default:
		return false
	}
	s := StatusFlag(payload[at]) | StatusFlag(payload[at+1])<<8
	s &^= mask
	payload[at], payload[at+1] = byte(s), byte(s>>8)
	return true
}
