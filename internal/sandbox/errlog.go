package sandbox

import (
	"bufio"
	"os"
	"strings"
)

// logExcerpt returns the lines of a node's error log that explain a
// failure: the [ERROR] lines (and WSREP failures) from its last start,
// at most max of them, newest last. When there are none it falls back to
// the last lines of the log, so the user always sees something concrete.
func logExcerpt(path string, max int) []string {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	var all []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		line := sc.Text()
		// A new start begins a new story; forget older failures.
		if strings.Contains(line, "Starting MariaDB") {
			all = all[:0]
		}
		all = append(all, line)
	}
	var errs []string
	for _, l := range all {
		if strings.Contains(l, "[ERROR]") || strings.Contains(l, "FATAL") || strings.Contains(l, "failed") {
			errs = append(errs, l)
		}
	}
	if len(errs) == 0 {
		errs = all
	}
	if len(errs) > max {
		errs = errs[len(errs)-max:]
	}
	return errs
}

// phases map error-log markers to the progress a person understands, in
// the order a start goes through them. waitSynced only ever reports a
// later phase than the last one, because Galera logs some markers (IST
// receiver set-up, for instance) during other phases too.
var phases = []struct{ marker, phase string }{
	{"InnoDB: Starting crash recovery", "recovering InnoDB"},
	{"Start replication", "starting replication"},
	{"Shifting OPEN -> PRIMARY", "joined the group"},
	{"Prepared SST request", "joining: requesting state transfer"},
	{"as donor", "joining: state transfer from donor"},
	{"SST received", "joining: state received, applying"},
	{"Receiving IST", "joining: receiving IST"},
	{"Synchronized with group", "synced"},
}

// phase returns the rank and name of the progress phase a log line marks,
// or -1 if it marks none.
func phase(line string) (int, string) {
	for i, p := range phases {
		if strings.Contains(line, p.marker) {
			return i, p.phase
		}
	}
	return -1, ""
}

// LogTail returns the last n lines of node's error log, for test failure
// reports.
func (sb *Sandbox) LogTail(node string, n int) string {
	nd, err := sb.Node(node)
	if err != nil {
		return err.Error()
	}
	b, err := os.ReadFile(sb.errLog(nd))
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// ErrorLogSince returns the lines of node's error log from byte offset on,
// and the offset of its end, so a test can check what one operation logged.
func (sb *Sandbox) ErrorLogSince(node string, off int64) ([]string, int64) {
	nd, err := sb.Node(node)
	if err != nil {
		return nil, off
	}
	lines := readFrom(sb.errLog(nd), &off)
	return lines, off
}
