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
