package mysqlproto

import "strconv"

// Command is the first byte of a command-phase packet sent by a client.
type Command byte

// Command bytes (my_command.h), plus MariaDB's additions.
const (
	ComSleep            Command = 0x00
	ComQuit             Command = 0x01
	ComInitDB           Command = 0x02
	ComQuery            Command = 0x03
	ComFieldList        Command = 0x04
	ComCreateDB         Command = 0x05
	ComDropDB           Command = 0x06
	ComRefresh          Command = 0x07
	ComShutdown         Command = 0x08
	ComStatistics       Command = 0x09
	ComProcessInfo      Command = 0x0a
	ComConnect          Command = 0x0b
	ComProcessKill      Command = 0x0c
	ComDebug            Command = 0x0d
	ComPing             Command = 0x0e
	ComTime             Command = 0x0f
	ComDelayedInsert    Command = 0x10
	ComChangeUser       Command = 0x11
	ComBinlogDump       Command = 0x12
	ComTableDump        Command = 0x13
	ComConnectOut       Command = 0x14
	ComRegisterSlave    Command = 0x15
	ComStmtPrepare      Command = 0x16
	ComStmtExecute      Command = 0x17
	ComStmtSendLongData Command = 0x18
	ComStmtClose        Command = 0x19
	ComStmtReset        Command = 0x1a
	ComSetOption        Command = 0x1b
	ComStmtFetch        Command = 0x1c
	ComDaemon           Command = 0x1d
	ComBinlogDumpGTID   Command = 0x1e
	ComResetConnection  Command = 0x1f
	ComClone            Command = 0x20 // MySQL 8.0.17+

	ComStmtBulkExecute Command = 0xfa // MariaDB: COM_STMT_BULK_EXECUTE
	ComMulti           Command = 0xfe // MariaDB: COM_MULTI (removed in 10.6)
)

var commandNames = [...]string{
	ComSleep: "COM_SLEEP", ComQuit: "COM_QUIT", ComInitDB: "COM_INIT_DB", ComQuery: "COM_QUERY",
	ComFieldList: "COM_FIELD_LIST", ComCreateDB: "COM_CREATE_DB", ComDropDB: "COM_DROP_DB",
	ComRefresh: "COM_REFRESH", ComShutdown: "COM_SHUTDOWN", ComStatistics: "COM_STATISTICS",
	ComProcessInfo: "COM_PROCESS_INFO", ComConnect: "COM_CONNECT", ComProcessKill: "COM_PROCESS_KILL",
	ComDebug: "COM_DEBUG", ComPing: "COM_PING", ComTime: "COM_TIME", ComDelayedInsert: "COM_DELAYED_INSERT",
	ComChangeUser: "COM_CHANGE_USER", ComBinlogDump: "COM_BINLOG_DUMP", ComTableDump: "COM_TABLE_DUMP",
	ComConnectOut: "COM_CONNECT_OUT", ComRegisterSlave: "COM_REGISTER_SLAVE",
	ComStmtPrepare: "COM_STMT_PREPARE", ComStmtExecute: "COM_STMT_EXECUTE",
	ComStmtSendLongData: "COM_STMT_SEND_LONG_DATA", ComStmtClose: "COM_STMT_CLOSE",
	ComStmtReset: "COM_STMT_RESET", ComSetOption: "COM_SET_OPTION", ComStmtFetch: "COM_STMT_FETCH",
	ComDaemon: "COM_DAEMON", ComBinlogDumpGTID: "COM_BINLOG_DUMP_GTID",
	ComResetConnection: "COM_RESET_CONNECTION", ComClone: "COM_CLONE",
}

// String returns the MySQL name of the command, e.g. "COM_QUERY".
func (c Command) String() string {
	if int(c) < len(commandNames) && commandNames[c] != "" {
		return commandNames[c]
	}
	switch c {
	case ComStmtBulkExecute:
		return "COM_STMT_BULK_EXECUTE"
	case ComMulti:
		return "COM_MULTI"
	}
	return "COM_UNKNOWN(0x" + strconv.FormatUint(uint64(c), 16) + ")"
}
