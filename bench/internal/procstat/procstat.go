// Package procstat reads a process's memory and CPU from /proc for the
// benchmark programs, which watch the proxy they drive. Every reading is
// -1 when unknown (no PID, or the process is gone).
package procstat

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// RSSKiB is the process's VmRSS in KiB.
func RSSKiB(pid int) int64 {
	if pid <= 0 {
		return -1
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "VmRSS:") {
			f := strings.Fields(line)
			if len(f) >= 2 {
				v, err := strconv.ParseInt(f[1], 10, 64)
				if err == nil {
					return v
				}
			}
		}
	}
	return -1
}

// CPUSeconds is utime+stime of the whole process (all threads).
func CPUSeconds(pid int) float64 {
	if pid <= 0 {
		return -1
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return -1
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return -1
	}
	f := strings.Fields(s[i+1:]) // f[0] is field 3 (state); utime is field 14
	if len(f) < 13 {
		return -1
	}
	ut, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return -1
	}
	return float64(ut+st) / 100 // USER_HZ is 100 on Linux
}
