package procs

import (
	"bytes"
	"io"
	"os"
	"strconv"
	"time"

	"golang.org/x/sys/unix"
)

// Bounds of one scan of /proc: the number of processes looked at, and how
// much of each environment is read (the kernel's own limit for argv plus
// environ is a few MiB; a mark beyond this is missed).
const (
	maxScanned = 1 << 16
	maxEnviron = 1 << 20
	// Rounds of scan and kill: a marked process may fork between a scan
	// and the kill; a round that finds nothing ends it.
	maxRounds = 4
)

func becomeSubreaper() error {
	return unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
}

// killMarked SIGKILLs every live process whose mark match accepts, until a
// scan finds none (at most maxRounds), then waits up to limit for them to
// be gone; adopted ones are reaped when the subreaper is on.
func (t *Tracker) killMarked(match func(mark string) bool, limit time.Duration) {
	deadline := time.Now().Add(limit)
	var killed []int
	buf := make([]byte, 0, 64<<10)
	for range maxRounds {
		found := scanMarked(match, &buf)
		if len(found) == 0 {
			break
		}
		for _, pid := range found {
			if signalVerified(pid, match, &buf) {
				killed = append(killed, pid)
			}
		}
	}
	me := os.Getpid()
	for _, pid := range killed {
		if _, ppid, _ := statOf(pid); t.reap && ppid == me && !t.isLeader(pid) {
			// Adopted here (subreaper): nobody else will reap it. Only
			// this pid is waited for; os/exec's children are never touched.
			var ws unix.WaitStatus
			_, _ = unix.Wait4(pid, &ws, 0, nil)
			continue
		}
		waitGone(pid, time.Until(deadline))
	}
}

// isLeader reports whether pid leads a group the Tracker started: os/exec
// reaps those.
func (t *Tracker) isLeader(pid int) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	for p := range t.live {
		p.mu.Lock()
		g := p.pgid
		p.mu.Unlock()
		if g == pid {
			return true
		}
	}
	return false
}

// scanMarked returns the pids (not this process's) whose environment holds
// a mark that match accepts.
func scanMarked(match func(string) bool, buf *[]byte) []int {
	dir, err := os.Open("/proc")
	if err != nil {
		return nil
	}
	names, _ := dir.Readdirnames(maxScanned)
	dir.Close()
	me := os.Getpid()
	var out []int
	for _, name := range names {
		pid, err := strconv.Atoi(name)
		if err != nil || pid == me {
			continue
		}
		if m, ok := readMark(pid, buf); ok && match(m) {
			out = append(out, pid)
		}
	}
	return out
}

// signalVerified SIGKILLs pid through a pidfd after checking, through that
// pidfd's process, that it still carries a matching mark: a pid reused
// since the scan is never signalled.
func signalVerified(pid int, match func(string) bool, buf *[]byte) bool {
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		return false // gone already (or no pidfd: kernel < 5.3; skip rather than risk a reused pid)
	}
	defer unix.Close(fd)
	if m, ok := readMark(pid, buf); !ok || !match(m) {
		return false
	}
	return unix.PidfdSendSignal(fd, unix.SIGKILL, nil, 0) == nil
}

var markKey = []byte(MarkEnv + "=")

// readMark returns the value of MarkEnv in pid's environment. A process of
// another user, a zombie (its environ reads empty) or one that cleared
// its environment has none.
func readMark(pid int, buf *[]byte) (string, bool) {
	f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/environ")
	if err != nil {
		return "", false
	}
	defer f.Close()
	bb := bytes.NewBuffer((*buf)[:0])
	_, _ = bb.ReadFrom(io.LimitReader(f, maxEnviron))
	b := bb.Bytes()
	*buf = b
	for entry := range bytes.SplitSeq(b, []byte{0}) {
		if v, ok := bytes.CutPrefix(entry, markKey); ok {
			return string(v), true
		}
	}
	return "", false
}

// exitedOnly reports whether every process of target (a pid, or a negative
// process group) is a zombie: exited, waiting for its parent to reap it.
// An orphan's parent is init, and some inits (in containers) never reap.
func exitedOnly(target int) bool {
	if target > 0 {
		state, _, _ := statOf(target)
		return state == 'Z'
	}
	dir, err := os.Open("/proc")
	if err != nil {
		return false
	}
	names, _ := dir.Readdirnames(maxScanned)
	dir.Close()
	for _, name := range names {
		pid, err := strconv.Atoi(name)
		if err != nil {
			continue
		}
		if state, _, pgrp := statOf(pid); pgrp == -target && state != 'Z' && state != 0 {
			return false
		}
	}
	return true
}

// statOf returns pid's state letter, parent and process group from
// /proc/pid/stat, or zeros.
func statOf(pid int) (state byte, ppid, pgrp int) {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, 0, 0
	}
	// pid (comm) state ppid pgrp ...; comm may hold spaces and parentheses.
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, 0, 0
	}
	f := bytes.Fields(stat[i+1:])
	if len(f) < 3 || len(f[0]) != 1 {
		return 0, 0, 0
	}
	ppid, _ = strconv.Atoi(string(f[1]))
	pgrp, _ = strconv.Atoi(string(f[2]))
	return f[0][0], ppid, pgrp
}
