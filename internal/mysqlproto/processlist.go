package mysqlproto

import "strings"

// ProcesslistName spells a command as SHOW PROCESSLIST does: COM_QUERY
// is Query, COM_STMT_EXECUTE (and MariaDB's bulk form) Execute.
func (c Command) ProcesslistName() string {
	if c == ComStmtBulkExecute {
		c = ComStmtExecute
	}
	name := strings.TrimPrefix(strings.TrimPrefix(c.String(), "COM_STMT_"), "COM_")
	return name[:1] + strings.ToLower(name[1:])
}
