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

// markKey prefixes the mark's entry in an environment.
const markKey = MarkEnv + "="

func becomeSubreaper() error {
	return unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
}

// killMarked SIGKILLs every live process whose mark match accepts, until a
// scan finds none (at most maxRounds) or the deadline. With the subreaper
// on, every one it killed that is not one of our leaders is adopted (kept
// with a pidfd until reaped); the others are waited for until the
// deadline. It returns the adopted pids.
func (t *Tracker) killMarked(match func(mark string) bool, deadline time.Time) []int {
	var killed []int // pidfds
	buf := make([]byte, 0, 64<<10)
	for range maxRounds {
		found := scanMarked(match, &buf, deadline)
		if len(found) == 0 {
			break
		}
		for _, pid := range found {
			if fd, ok := signalVerified(pid, match, &buf); ok {
				killed = append(killed, pid, fd)
			}
		}
	}
	var adopted []int
	for i := 0; i < len(killed); i += 2 {
		pid, fd := killed[i], killed[i+1]
		if t.reap && t.adopt(pid, fd) {
			adopted = append(adopted, pid)
			continue
		}
		waitExited(fd, deadline)
		unix.Close(fd)
	}
	return adopted
}

// adoptGroup adopts the processes of group pgid that are children of this
// process (orphans re-parented here by the subreaper, zombies included: a
// zombie's environment reads empty, so no mark scan finds it). They are
// provably ours: pgid is in use by them, so no other process got that
// number, and the leader (pid == pgid) is left to os/exec.
func (t *Tracker) adoptGroup(pgid int, deadline time.Time) []int {
	if !t.reap || pgid <= 0 {
		return nil
	}
	me := os.Getpid()
	var adopted []int
	for _, pid := range procPids(deadline) {
		if pid == pgid {
			continue
		}
		if _, ppid, pgrp := Stat(pid); ppid != me || pgrp != pgid {
			continue
		}
		fd, err := unix.PidfdOpen(pid, 0)
		if err != nil {
			continue
		}
		// Checked again through the pidfd's process: a pid reaped and
		// reused since the scan is not ours.
		if _, ppid, pgrp := Stat(pid); ppid != me || pgrp != pgid || !t.adopt(pid, fd) {
			unix.Close(fd)
			continue
		}
		adopted = append(adopted, pid)
	}
	return adopted
}

// adopt keeps pid's pidfd for reaping, unless pid may be one of our
// leaders (os/exec reaps those: reaping one here would take its exit
// status). It reports whether it kept fd.
func (t *Tracker) adopt(pid, fd int) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, dup := t.adopted[pid]; dup || t.mayLead(pid) {
		return false
	}
	t.adopted[pid] = fd
	return true
}

// mayLead reports whether pid is, or may be, the leader of a group the
// Tracker started: a recorded group, or, while a start is in flight (the
// leader already carries the mark but its group is not recorded yet), any
// child of ours that leads its own group. Call with t.mu held.
func (t *Tracker) mayLead(pid int) bool {
	for p := range t.live {
		p.mu.Lock()
		g := p.pgid
		p.mu.Unlock()
		if g == pid {
			return true
		}
	}
	if t.starting > 0 {
		if _, ppid, pgrp := Stat(pid); ppid == os.Getpid() && pgrp == pid {
			return true
		}
	}
	return false
}

// reapAdopted reaps every adopted process that has exited, without
// blocking, and drops those that are provably not ours to reap any more.
// It returns how many of pids are still adopted.
func (t *Tracker) reapAdopted(pids []int) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	for pid, fd := range t.adopted {
		if t.mayLead(pid) {
			continue // a start in flight: retried at the next stop
		}
		var info unix.Siginfo
		err := unix.Waitid(unix.P_PIDFD, fd, &info, unix.WEXITED|unix.WNOHANG, nil)
		switch {
		case err == nil && info.Signo == int32(unix.SIGCHLD):
			// Reaped.
		case err == nil, err == unix.EINTR:
			continue // ours, not exited yet
		case !exitedFD(fd):
			continue // not our child (yet): its parent may still die
		default:
			// Exited and not our child: a zombie of another parent may
			// still be re-parented here; anything else is gone or reused.
			if state, _, _ := Stat(pid); state == 'Z' {
				continue
			}
		}
		unix.Close(fd)
		delete(t.adopted, pid)
	}
	left := 0
	for _, pid := range pids {
		if _, ok := t.adopted[pid]; ok {
			left++
		}
	}
	return left
}

// reapUntil reaps the adopted pids, polling until they are all reaped or
// the deadline; it reports whether they were.
func (t *Tracker) reapUntil(pids []int, deadline time.Time) bool {
	pause := time.Millisecond
	for t.reapAdopted(pids) > 0 {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(pause)
		pause = min(2*pause, 20*time.Millisecond)
	}
	return true
}

// exitedFD reports whether the pidfd's process has exited.
func exitedFD(fd int) bool {
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	n, err := unix.Poll(fds, 0)
	return err == nil && n > 0
}

// waitExited waits until the pidfd's process has exited, or the deadline.
func waitExited(fd int, deadline time.Time) {
	for {
		ms := time.Until(deadline).Milliseconds()
		if ms <= 0 {
			return
		}
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		if n, err := unix.Poll(fds, int(min(ms, 1000))); err != unix.EINTR && (err != nil || n > 0) {
			return
		}
	}
}

// procPids lists the pids in /proc, except this process's, stopping at the
// deadline.
func procPids(deadline time.Time) []int {
	dir, err := os.Open("/proc")
	if err != nil {
		return nil
	}
	names, _ := dir.Readdirnames(maxScanned)
	dir.Close()
	me := os.Getpid()
	out := make([]int, 0, len(names))
	for i, name := range names {
		if i%256 == 0 && time.Now().After(deadline) {
			break
		}
		if pid, err := strconv.Atoi(name); err == nil && pid != me {
			out = append(out, pid)
		}
	}
	return out
}

// scanMarked returns the pids (not this process's) whose environment holds
// a mark that match accepts. Processes of other users are skipped before
// their environment is opened (it could not be read anyway); the scan
// stops at the deadline.
func scanMarked(match func(string) bool, buf *[]byte, deadline time.Time) []int {
	uid := uint32(os.Geteuid())
	var out []int
	for i, pid := range procPids(deadline) {
		if i%64 == 0 && time.Now().After(deadline) {
			break
		}
		var st unix.Stat_t
		if unix.Stat("/proc/"+strconv.Itoa(pid), &st) != nil || (st.Uid != uid && uid != 0) {
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
// since the scan is never signalled. It returns the pidfd (the caller
// closes it) once the signal went.
func signalVerified(pid int, match func(string) bool, buf *[]byte) (int, bool) {
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		return 0, false // gone already (or no pidfd: kernel < 5.3; skip rather than risk a reused pid)
	}
	if m, ok := readMark(pid, buf); !ok || !match(m) || unix.PidfdSendSignal(fd, unix.SIGKILL, nil, 0) != nil {
		unix.Close(fd)
		return 0, false
	}
	return fd, true
}

// readMark returns the value of MarkEnv in pid's environment. A process of
// another user, a zombie (its environ reads empty) or one that cleared
// its environment has none.
func readMark(pid int, buf *[]byte) (string, bool) { return envValue(pid, markKey, buf) }

// EnvOf returns the value of key in pid's environment, or "".
func EnvOf(pid int, key string) string {
	var buf []byte
	v, _ := envValue(pid, key+"=", &buf)
	return v
}

// envValue returns the value of the entry that starts with prefix (the
// key and "=") in pid's environment, reading it into buf.
func envValue(pid int, prefix string, buf *[]byte) (string, bool) {
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
		if v, ok := bytes.CutPrefix(entry, []byte(prefix)); ok {
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
		state, _, _ := Stat(target)
		return state == 'Z'
	}
	for _, pid := range procPids(time.Now().Add(time.Second)) {
		if state, _, pgrp := Stat(pid); pgrp == -target && state != 'Z' && state != 0 {
			return false
		}
	}
	return true
}

// Stat returns pid's state letter, parent and process group from
// /proc/pid/stat, or zeros once it is gone.
func Stat(pid int) (state byte, ppid, pgrp int) {
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
