package procs

import (
	"io"
	"os"
	"strconv"
	"strings"
)

// Bounds of one look at a server's process tree: the keepalive runs it at
// every tick of every server, so it reads a bounded number of small files,
// whatever the machine runs and however many processes the server forks.
const (
	// maxTreeProcs is how many processes of the tree are looked at: a
	// wrapper (npx, sh, uv) and its workers are a handful.
	maxTreeProcs = 32
	// maxTasks is how many threads of one process have their children
	// read (a child is listed under the thread that forked it; node runs
	// about ten).
	maxTasks = 64
	// maxChildrenBytes bounds one thread's children file.
	maxChildrenBytes = 4096
)

// GroupStopped reports whether a process of group pgid is in the stopped
// state ('T' in /proc/PID/stat: SIGSTOP, SIGTSTP, SIGTTIN, SIGTTOU): a
// server whose leader, or whose real worker behind a wrapper (npx → node),
// is stopped answers nothing until someone continues it. A process under
// a debugger ('t', tracing stop) is not counted: someone is looking at it.
//
// It looks only at the leader (pid pgid) and its descendants that are in
// its group, found through /proc/PID/task/TID/children, breadth first, at
// most maxTreeProcs of them: never a scan of /proc. A process that left
// the tree (re-parented when its parent exited) or the group is not seen,
// nor is the tree past that bound; the keepalive's probe still finds such
// a server hung, within two intervals.
func GroupStopped(pgid int) bool { return stoppedInTree(pgid, maxTreeProcs) }

// Stopped reports whether process pid is in the stopped state ('T', as
// GroupStopped counts it); false if there is no such process.
func Stopped(pid int) bool {
	if pid <= 0 {
		return false
	}
	state, _, _ := Stat(pid)
	return state == 'T'
}

// stoppedInTree is GroupStopped looking at no more than limit processes.
func stoppedInTree(pgid, limit int) bool {
	if pgid <= 0 {
		return false
	}
	queue := []int{pgid}
	for looked := 0; len(queue) > 0 && looked < limit; looked++ {
		pid := queue[0]
		queue = queue[1:]
		state, _, pgrp := Stat(pid)
		if pgrp != pgid {
			continue // gone, or not of the group (nor, then, are its children)
		}
		if state == 'T' {
			return true
		}
		queue = append(queue, children(pid, limit-looked-1-len(queue))...)
	}
	return false
}

// children lists up to n children of pid, from the children files of its
// threads (empty where the kernel has none: CONFIG_PROC_CHILDREN).
func children(pid, n int) []int {
	if n <= 0 {
		return nil
	}
	dir := "/proc/" + strconv.Itoa(pid) + "/task"
	d, err := os.Open(dir)
	if err != nil {
		return nil
	}
	tids, _ := d.Readdirnames(maxTasks)
	d.Close()
	var out []int
	buf := make([]byte, maxChildrenBytes)
	for _, tid := range tids {
		f, err := os.Open(dir + "/" + tid + "/children")
		if err != nil {
			continue
		}
		k, _ := io.ReadFull(f, buf)
		f.Close()
		list := string(buf[:k])
		if k == len(buf) { // cut: drop the pid the cut may have split
			list = list[:strings.LastIndexByte(list, ' ')+1]
		}
		for field := range strings.FieldsSeq(list) {
			if child, err := strconv.Atoi(field); err == nil {
				out = append(out, child)
				if len(out) == n {
					return out
				}
			}
		}
	}
	return out
}
