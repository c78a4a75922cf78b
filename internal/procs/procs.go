// Package procs keeps account of the processes one Runtime started, so
// that none outlives the server it belongs to, nor the Runtime.
//
// Every stdio server runs in a process group of its own, and its stop
// sequence kills that group (internal/mcpconn). Two things escape a group
// kill, and this package catches them:
//   - a descendant that left the group (setsid, a daemonising double
//     fork). Each server instance gets a mark in its environment,
//     MarkEnv=<tracker id>-<n>, which its descendants inherit; at stop,
//     every process that carries the mark is SIGKILLed, whatever its group
//     or session. Finding them needs /proc: Linux only.
//   - a stop that cannot finish in time (Shutdown's context ends first).
//     KillAll SIGKILLs every group and every marked process the Tracker
//     knows, at once.
//
// A Tracker also counts each owner's (server's) processes until their
// group is gone, so that a removal can be answered only then.
//
// Per platform: on Linux all of the above. On macOS (and the other Unixes)
// process groups work the same; what needs /proc degrades: no mark scan
// (a descendant that left the group with setsid is not found), no
// subreaper, no stopped-state look (GroupStopped: the keepalive probe
// finds a stopped server instead), and a zombie in a group counts as live
// until reaped. On Windows there are no process groups: each server's tree
// lives in a Job Object (Job), which holds every descendant (none can
// leave it), so the mark scan has nothing to add there; KillAll
// terminates every job.
package procs

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// MarkEnv is the environment variable that carries a server instance's
// mark. It is not a secret: it only names the instance.
const MarkEnv = "MCPVISOR_PROCESS_MARK"

// Tracker is one Runtime's account of its processes. Its methods are safe
// for concurrent use; a nil *Tracker tracks nothing (and a nil *Proc does
// nothing), for callers that run servers outside a Runtime.
type Tracker struct {
	id   string // random: marks never collide across Trackers
	reap bool   // subreaper: reap marked orphans adopted by this process

	mu      sync.Mutex
	next    uint64
	live    map[*Proc]struct{} // begun and not ended
	owned   map[string]int     // live Procs per owner
	changed chan struct{}      // closed and replaced when a Proc ends
	killed  bool               // KillAll ran: a process starting now is killed at once
	// starting counts starts in flight (Starting called, Started not
	// yet): their leaders carry the mark before their group is recorded.
	starting int
	// adopted holds a pidfd for each killed marked orphan adopted here
	// (subreaper) until it is reaped, at this or a later stop.
	adopted map[int]int
}

// Options configure a Tracker.
type Options struct {
	// Subreaper makes this process a child subreaper (Linux
	// prctl(PR_SET_CHILD_SUBREAPER)), so that orphans of the servers are
	// re-parented here instead of to init, and reaps, at each stop, the
	// orphans it can prove are a server's: those that carry a mark and
	// those left in a server's process group (each through a pidfd, never
	// a wildcard wait, which would take the exit status of a child the
	// host started with os/exec; a server's own leader is left to os/exec).
	// No SIGCHLD handler is installed. The
	// setting is process-wide and stays on for the process's life; other
	// orphans (unmarked) are adopted too and left unreaped, which is why it
	// is opt-in. Elsewhere than Linux it does nothing.
	Subreaper bool
}

// New returns a Tracker with a fresh random id. With opts.Subreaper it
// makes the process a child subreaper; the error says why that failed (the
// Tracker works without it).
func New(opts Options) (*Tracker, error) {
	var b [8]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand panics instead)
	t := &Tracker{
		id:      hex.EncodeToString(b[:]),
		live:    map[*Proc]struct{}{},
		owned:   map[string]int{},
		changed: make(chan struct{}),
		adopted: map[int]int{},
	}
	var err error
	if opts.Subreaper {
		if err = becomeSubreaper(); err == nil {
			t.reap = true
		}
	}
	return t, err
}

// Proc is one server instance's processes: its process group and
// everything that carries its mark.
type Proc struct {
	t     *Tracker
	owner string
	mark  string

	mu   sync.Mutex
	pgid int  // 0 until Started
	job  *Job // Windows: the Job Object holding the tree; nil elsewhere
	done bool
}

// Begin accounts for a process of owner that is about to start. Call End
// once its group is gone, or it never started.
func (t *Tracker) Begin(owner string) *Proc {
	if t == nil {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.next++
	p := &Proc{t: t, owner: owner, mark: t.id + "-" + strconv.FormatUint(t.next, 10)}
	t.live[p] = struct{}{}
	t.owned[owner]++
	return p
}

// Env returns the environment entry that marks the instance's processes,
// or "" for a nil Proc.
func (p *Proc) Env() string {
	if p == nil {
		return ""
	}
	return MarkEnv + "=" + p.mark
}

// Starting records that the leader is about to start (exec.Cmd.Start):
// until Started, a marked child of ours that leads its own group may be
// that leader, and is never reaped here. Call Started after it, whether
// the start succeeded or not.
func (p *Proc) Starting() {
	if p == nil {
		return
	}
	p.t.mu.Lock()
	p.t.starting++
	p.t.mu.Unlock()
}

// SetJob records the Job Object that holds the instance's tree (Windows),
// so that KillAll terminates it too. The caller keeps closing it.
func (p *Proc) SetJob(j *Job) {
	if p == nil {
		return
	}
	p.mu.Lock()
	p.job = j
	p.mu.Unlock()
}

// Started records the process group (the leader's pid), or with 0 that
// the start failed. If KillAll ran already, the group is killed at once.
func (p *Proc) Started(pgid int) {
	if p == nil {
		return
	}
	p.mu.Lock()
	p.pgid = pgid
	job := p.job
	p.mu.Unlock()
	p.t.mu.Lock()
	p.t.starting--
	killed := p.t.killed
	p.t.mu.Unlock()
	if killed {
		killGroup(pgid)
		job.Terminate()
	}
}

// Finish ends what is left of the instance once its leader (pgid) was
// reaped: it SIGKILLs every process that carries the mark, those that
// left the group included (while they are alive: a zombie cannot be told
// by its mark), then the group, and waits up to limit for all of them to
// be gone; with the subreaper on, it reaps those adopted here. A nil Proc
// kills and waits for the group only. It reports whether everything was
// gone in time. The mark scan needs Linux.
func (p *Proc) Finish(pgid int, limit time.Duration) bool {
	deadline := time.Now().Add(limit)
	var adopted []int
	if p != nil {
		adopted = p.t.killMarked(func(mark string) bool { return mark == p.mark }, deadline)
	}
	killGroup(pgid)
	gone := WaitGroupGone(pgid, time.Until(deadline))
	if p == nil {
		return gone
	}
	if gone {
		// Its number may be reused once the group is reaped: KillAll
		// must not signal another group under it.
		p.mu.Lock()
		p.pgid = 0
		p.mu.Unlock()
	}
	adopted = append(adopted, p.t.adoptGroup(pgid, deadline)...)
	return p.t.reapUntil(adopted, deadline) && gone
}

// SignalGroup sends sig to every process of group pgid. Its only expected
// error is ESRCH (the group is already empty), which is the goal anyway.
func SignalGroup(pgid int, sig syscall.Signal) { signalGroup(pgid, sig) }

// End records that the group is gone (or never started).
func (p *Proc) End() {
	if p == nil {
		return
	}
	p.mu.Lock()
	if p.done {
		p.mu.Unlock()
		return
	}
	p.done = true
	p.mu.Unlock()
	t := p.t
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.live, p)
	if t.owned[p.owner]--; t.owned[p.owner] <= 0 {
		delete(t.owned, p.owner)
	}
	close(t.changed)
	t.changed = make(chan struct{})
}

// WaitOwner waits until no process of owner is accounted for, or ctx ends;
// it reports whether they are all gone.
func (t *Tracker) WaitOwner(ctx context.Context, owner string) bool {
	if t == nil {
		return true
	}
	for {
		t.mu.Lock()
		n, changed := t.owned[owner], t.changed
		t.mu.Unlock()
		if n == 0 {
			return true
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return false
		}
	}
}

// KillAll SIGKILLs every process group the Tracker accounts for and every
// process that carries one of its marks (on Windows: terminates every
// job), and waits up to limit for them to be gone (a killed process
// lingers until its parent reaps it). A process that starts afterwards is
// killed as soon as it is Started.
func (t *Tracker) KillAll(limit time.Duration) {
	if t == nil {
		return
	}
	t.mu.Lock()
	t.killed = true
	var groups []int
	var jobs []*Job
	for p := range t.live {
		p.mu.Lock()
		if p.pgid > 0 {
			groups = append(groups, p.pgid)
		}
		if p.job != nil {
			jobs = append(jobs, p.job)
		}
		p.mu.Unlock()
	}
	t.mu.Unlock()
	for _, g := range groups {
		killGroup(g)
	}
	for _, j := range jobs {
		j.Terminate()
	}
	deadline := time.Now().Add(limit)
	prefix := t.id + "-"
	adopted := t.killMarked(func(mark string) bool { return strings.HasPrefix(mark, prefix) }, deadline)
	for _, g := range groups {
		waitGone(-g, time.Until(deadline))
		adopted = append(adopted, t.adoptGroup(g, deadline)...)
	}
	t.reapUntil(adopted, deadline)
	for _, j := range jobs {
		j.WaitEmpty(time.Until(deadline))
	}
}

// WaitGroupGone waits until no process of group pgid is left running (a
// just-killed process lingers until its parent reaps it; an exited one
// whose parent is an init that never reaps counts as gone), or until
// limit. It reports whether the group is gone.
func WaitGroupGone(pgid int, limit time.Duration) bool {
	return pgid <= 0 || waitGone(-pgid, limit)
}

// waitGone waits until target (a pid, or a negative process group) has no
// live process left, or until limit. A zombie counts as gone: it has
// exited, and only its parent (init, for an orphan) can remove it.
func waitGone(target int, limit time.Duration) bool {
	deadline := time.Now().Add(limit)
	// A killed process is usually reaped within a millisecond; an exited
	// group member under an init that never reaps needs a /proc scan to
	// tell, so the polls space out.
	pause := time.Millisecond
	for exists(target) {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(pause)
		pause = min(2*pause, 20*time.Millisecond)
	}
	return true
}
