package transfer

import (
	"io/fs"
	"syscall"
	"time"
)

// changed is a file's inode change time (ctime), which no program can set
// back, unlike its modification time (rsync copies the donor's).
func changed(info fs.FileInfo) time.Time {
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		return time.Unix(int64(st.Ctim.Sec), int64(st.Ctim.Nsec))
	}
	return info.ModTime()
}
