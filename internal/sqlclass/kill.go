package sqlclass

import (
	"strconv"
	"strings"
)

// KillTarget parses KILL [HARD|SOFT] [CONNECTION|QUERY] id; ok is false
// for other forms (KILL USER, KILL QUERY ID).
func KillTarget(q string) (id uint32, queryOnly, ok bool) {
	f := strings.Fields(strings.TrimRight(strings.TrimSpace(q), "; \t\n"))
	if len(f) < 2 || !strings.EqualFold(f[0], "KILL") {
		return 0, false, false
	}
	f = f[1:]
	if len(f) > 1 && (strings.EqualFold(f[0], "HARD") || strings.EqualFold(f[0], "SOFT")) {
		f = f[1:]
	}
	if len(f) > 1 && (strings.EqualFold(f[0], "QUERY") || strings.EqualFold(f[0], "CONNECTION")) {
		queryOnly = strings.EqualFold(f[0], "QUERY")
		f = f[1:]
	}
	if len(f) != 1 {
		return 0, false, false
	}
	n, err := strconv.ParseUint(f[0], 10, 32)
	if err != nil {
		return 0, false, false
	}
	return uint32(n), queryOnly, true
}

// ProcesslistQuery reports SHOW [FULL] PROCESSLIST.
func ProcesslistQuery(q string) (full, ok bool) {
	f := strings.Fields(strings.TrimRight(strings.TrimSpace(q), "; \t\n"))
	switch {
	case len(f) == 2 && strings.EqualFold(f[0], "SHOW") && strings.EqualFold(f[1], "PROCESSLIST"):
		return false, true
	case len(f) == 3 && strings.EqualFold(f[0], "SHOW") && strings.EqualFold(f[1], "FULL") && strings.EqualFold(f[2], "PROCESSLIST"):
		return true, true
	}
	return false, false
}
