//go:build unix

package catalog

import "syscall"

// mkfifo makes a FIFO at path, for the test that a reader does not block
// on one.
func mkfifo(path string) error { return syscall.Mkfifo(path, 0o600) }
