//go:build unix

package procs

import "syscall"

// killGroup SIGKILLs every process of the group.
func killGroup(pgid int) { signalGroup(pgid, syscall.SIGKILL) }

func signalGroup(pgid int, sig syscall.Signal) {
	if pgid > 0 {
		_ = syscall.Kill(-pgid, sig)
	}
}

// exists reports whether target (a pid, or a negative process group) has
// a process that has not exited yet.
func exists(target int) bool {
	if syscall.Kill(target, 0) != nil {
		return false
	}
	return !exitedOnly(target)
}
