package mysqlproto

// ErrorCode is a MySQL server (ER_*) or client (CR_*) error number.
type ErrorCode uint16

// Server error codes a proxy produces or reacts to. Names follow MySQL's
// mysqld_error.h.
const (
	ErConCountError             ErrorCode = 1040 // ER_CON_COUNT_ERROR: too many connections
	ErHandshakeError            ErrorCode = 1043 // ER_HANDSHAKE_ERROR: bad handshake
	ErDBAccessDeniedError       ErrorCode = 1044 // ER_DBACCESS_DENIED_ERROR
	ErAccessDeniedError         ErrorCode = 1045 // ER_ACCESS_DENIED_ERROR
	ErNoDBError                 ErrorCode = 1046 // ER_NO_DB_ERROR: no database selected
	ErUnknownComError           ErrorCode = 1047 // ER_UNKNOWN_COM_ERROR; Galera also uses it for "WSREP has not yet prepared node for application use"
	ErBadDBError                ErrorCode = 1049 // ER_BAD_DB_ERROR: unknown database
	ErServerShutdown            ErrorCode = 1053 // ER_SERVER_SHUTDOWN
	ErParseError                ErrorCode = 1064 // ER_PARSE_ERROR
	ErDupEntry                  ErrorCode = 1062 // ER_DUP_ENTRY: duplicate key
	ErUnknownError              ErrorCode = 1105 // ER_UNKNOWN_ERROR
	ErHostNotPrivileged         ErrorCode = 1130 // ER_HOST_NOT_PRIVILEGED
	ErNetPacketTooLarge         ErrorCode = 1153 // ER_NET_PACKET_TOO_LARGE
	ErNetPacketsOutOfOrder      ErrorCode = 1156 // ER_NET_PACKETS_OUT_OF_ORDER
	ErNetReadError              ErrorCode = 1158 // ER_NET_READ_ERROR
	ErNetReadInterrupted        ErrorCode = 1159 // ER_NET_READ_INTERRUPTED
	ErNetErrorOnWrite           ErrorCode = 1160 // ER_NET_ERROR_ON_WRITE
	ErNetWriteInterrupted       ErrorCode = 1161 // ER_NET_WRITE_INTERRUPTED
	ErErrorDuringCommit         ErrorCode = 1180 // ER_ERROR_DURING_COMMIT
	ErTooManyUserConnections    ErrorCode = 1203 // ER_TOO_MANY_USER_CONNECTIONS
	ErLockWaitTimeout           ErrorCode = 1205 // ER_LOCK_WAIT_TIMEOUT
	ErLockDeadlock              ErrorCode = 1213 // ER_LOCK_DEADLOCK; Galera reports certification failures with it
	ErNotAllowedCommand         ErrorCode = 1148 // ER_NOT_ALLOWED_COMMAND (LOAD DATA LOCAL refused)
	ErConnectionKilled          ErrorCode = 1927 // ER_CONNECTION_KILLED (MariaDB)
	ErAbortingConnection        ErrorCode = 1152 // ER_ABORTING_CONNECTION
	ErNetUncompressError        ErrorCode = 1157 // ER_NET_UNCOMPRESS_ERROR
	ErNotSupportedYet           ErrorCode = 1235 // ER_NOT_SUPPORTED_YET
	ErUnknownStmtHandler        ErrorCode = 1243 // ER_UNKNOWN_STMT_HANDLER
	ErOptionPreventsStatement   ErrorCode = 1290 // ER_OPTION_PREVENTS_STATEMENT (e.g. read_only)
	ErQueryInterrupted          ErrorCode = 1317 // ER_QUERY_INTERRUPTED
	ErAccessDeniedNoPassword    ErrorCode = 1698 // ER_ACCESS_DENIED_NO_PASSWORD_ERROR
	ErMalformedPacket           ErrorCode = 1835 // ER_MALFORMED_PACKET
	ErQueryTimeout              ErrorCode = 3024 // ER_QUERY_TIMEOUT (max_execution_time exceeded)
	CrServerGoneError           ErrorCode = 2006 // CR_SERVER_GONE_ERROR (client-library code)
	CrServerLost                ErrorCode = 2013 // CR_SERVER_LOST (client-library code)
	CrAuthPluginCannotLoadError ErrorCode = 2059 // CR_AUTH_PLUGIN_CANNOT_LOAD
)

// Galeon's own codes. They sit above every code MySQL or MariaDB assign to
// the server (which stop below 9000 in current releases), so clients and
// logs can tell proxy-made errors apart.
const (
	// ErGaleonNoBackend: no backend in the target hostgroup is available.
	ErGaleonNoBackend ErrorCode = 9001
	// ErGaleonWriterChanged: the writer node changed while a transaction
	// was open; the transaction is gone and the client should retry it.
	// Its SQLSTATE 40001 is the one drivers and ORMs already treat as
	// "serialization failure, retry the transaction".
	ErGaleonWriterChanged ErrorCode = 9002
	// ErGaleonBackendLost: the backend connection broke mid-command.
	ErGaleonBackendLost ErrorCode = 9003
	// ErGaleonBackendAuth: the proxy could not log into the backend.
	ErGaleonBackendAuth ErrorCode = 9004
	// ErGaleonShuttingDown: the proxy is shutting down.
	ErGaleonShuttingDown ErrorCode = 9005
)

// sqlStates maps codes to the SQLSTATE MySQL sends with them.
var sqlStates = map[ErrorCode]string{
	ErConCountError:          "08004",
	ErHandshakeError:         "08S01",
	ErDBAccessDeniedError:    "42000",
	ErAccessDeniedError:      "28000",
	ErNoDBError:              "3D000",
	ErUnknownComError:        "08S01",
	ErBadDBError:             "42000",
	ErServerShutdown:         "08S01",
	ErParseError:             "42000",
	ErNetPacketTooLarge:      "08S01",
	ErNetPacketsOutOfOrder:   "08S01",
	ErNetReadError:           "08S01",
	ErNetReadInterrupted:     "08S01",
	ErNetErrorOnWrite:        "08S01",
	ErNetWriteInterrupted:    "08S01",
	ErTooManyUserConnections: "42000",
	ErLockDeadlock:           "40001",
	ErNotSupportedYet:        "42000",
	ErNotAllowedCommand:      "42000",
	ErConnectionKilled:       "70100",
	ErAbortingConnection:     "08S01",
	ErNetUncompressError:     "08S01",
	ErQueryInterrupted:       "70100",
	ErAccessDeniedNoPassword: "28000",
	ErGaleonWriterChanged:    "40001",
	ErGaleonBackendLost:      "08S01",
	ErGaleonShuttingDown:     "08S01",
}

// SQLState returns the SQLSTATE MySQL pairs with the code, or "HY000"
// (general error) for codes without a specific one. Client-library codes
// (CR_*) get HY000 too, as libmysqlclient reports them.
func (c ErrorCode) SQLState() string {
	if s, ok := sqlStates[c]; ok {
		return s
	}
	return "HY000"
}
