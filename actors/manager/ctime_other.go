//go:build !linux

package manager

import (
	"io/fs"
	"time"
)

// changeTime returns the zero time: the ctime field differs across
// systems, and only Linux is covered; elsewhere the identity is inode,
// size and mtime, plus the racy-file rule.
func changeTime(fs.FileInfo) time.Time { return time.Time{} }
