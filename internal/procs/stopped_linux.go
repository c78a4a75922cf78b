package procs

import "time"

// stoppedScanBound bounds one scan of /proc for a group's processes.
const stoppedScanBound = 100 * time.Millisecond

// GroupStopped reports whether a process of group pgid is in the stopped
// state ('T' in /proc/PID/stat: SIGSTOP, SIGTSTP, SIGTTIN, SIGTTOU): a
// server whose leader, or whose real worker behind a wrapper (npx → node),
// is stopped answers nothing until someone continues it. A process under
// a debugger ('t', tracing stop) is not counted: someone is looking at it.
// The leader is looked at first; the rest of the group costs a scan of
// /proc, bounded in time.
func GroupStopped(pgid int) bool {
	if pgid <= 0 {
		return false
	}
	if state, _, _ := Stat(pgid); state == 'T' {
		return true
	}
	for _, pid := range procPids(time.Now().Add(stoppedScanBound)) {
		if state, _, pgrp := Stat(pid); pgrp == pgid && state == 'T' {
			return true
		}
	}
	return false
}
