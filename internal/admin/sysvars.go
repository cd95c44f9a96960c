package admin

import (
	"os"
	"runtime"
	"slices"
	"time"
)

// versionComment is what clients print after connecting ("Server version:
// 8.0.36-galeon-admin galeon admin interface").
const versionComment = "galeon admin interface"

// sysVars returns the system variables clients and drivers look up on
// connect (@@version_comment, @@max_allowed_packet, @@autocommit,
// transaction isolation, character sets). The values describe this
// endpoint, not the backends behind the proxy.
func (en *env) sysVars() map[string]any {
	tlsOn := "DISABLED"
	if en.eng.tls {
		tlsOn = "YES"
	}
	return map[string]any{
		"version":                  en.eng.version,
		"version_comment":          versionComment,
		"version_compile_os":       runtime.GOOS,
		"version_compile_machine":  runtime.GOARCH,
		"max_allowed_packet":       int64(en.eng.maxPacket),
		"autocommit":               int64(1),
		"auto_increment_increment": int64(1),
		"character_set_client":     "utf8mb4",
		"character_set_connection": "utf8mb4",
		"character_set_results":    "utf8mb4",
		"character_set_server":     "utf8mb4",
		"character_set_database":   "utf8mb4",
		"collation_connection":     "utf8mb4_general_ci",
		"collation_server":         "utf8mb4_general_ci",
		"collation_database":       "utf8mb4_general_ci",
		"transaction_isolation":    "REPEATABLE-READ",
		"tx_isolation":             "REPEATABLE-READ",
		"transaction_read_only":    int64(0),
		"tx_read_only":             int64(0),
		"lower_case_table_names":   int64(1), // names match case-insensitively
		"sql_mode":                 "",
		"time_zone":                "SYSTEM",
		"system_time_zone":         time.Now().Format("MST"),
		"wait_timeout":             int64(28800),
		"interactive_timeout":      int64(28800),
		"net_read_timeout":         int64(30),
		"net_write_timeout":        int64(60),
		"have_ssl":                 tlsOn,
		"warning_count":            int64(0),
		"error_count":              int64(0),
		"hostname":                 hostname(),
	}
}

// sortedVars returns the variables as rows for SHOW VARIABLES.
func (en *env) sortedVars() [][]any {
	vars := en.sysVars()
	names := make([]string, 0, len(vars))
	for k := range vars {
		names = append(names, k)
	}
	slices.Sort(names)
	rows := make([][]any, len(names))
	for i, k := range names {
		v, _ := formatValue(vars[k])
		rows[i] = []any{k, v}
	}
	return rows
}

// status returns the rows of SHOW STATUS.
func (en *env) status() [][]any {
	up := int64(time.Since(en.eng.started) / time.Second)
	return [][]any{
		{"Uptime", formatInt(up)},
		{"Questions", formatInt(int64(en.eng.questions.Load()))},
		{"Threads_connected", formatInt(en.eng.connected.Load())},
		{"Tables", formatInt(int64(len(en.eng.cat.tables)))},
	}
}

func formatInt(i int64) string { s, _ := formatValue(i); return s }

// hostname is reported as @@hostname, so an operator connected through a
// tunnel can tell which proxy instance answered.
func hostname() string {
	h, err := os.Hostname()
	if err != nil {
		return ""
	}
	return h
}
