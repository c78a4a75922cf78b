package manager

import (
	"io/fs"
	"syscall"
	"time"
)

// changeTime returns the file's ctime, the time its inode last changed.
func changeTime(info fs.FileInfo) time.Time {
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		return time.Unix(st.Ctim.Unix())
	}
	return time.Time{}
}
