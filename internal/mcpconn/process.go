package mcpconn

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/openprogram/mcpvisor/config"
	"github.com/openprogram/mcpvisor/internal/procs"
)

// errStopped is returned by Connect once the transport was stopped: a dial
// abandoned before the process started must never start it afterwards.
var errStopped = errors.New("stopped before the process started")

// stdioTransport is the SDK's CommandTransport plus what the SDK does not
// give us:
//   - the child runs in its own process group (on Windows: its own Job
//     Object, process_windows.go), and stopping kills the whole group, so
//     wrappers (npx, uvx, sh -c) leave no grandchild behind;
//   - every close, ours or the SDK's own (a failed initialize, a lost
//     session), goes through one stop sequence: close stdin; after grace
//     SIGTERM the group; after another grace SIGKILL it (on Windows: after
//     grace terminate the job);
//   - a stop that comes before the process started prevents the start;
//   - its processes carry the instance's mark (internal/procs), and the
//     stop ends with killing every marked process, those that left the
//     group (setsid) included, before the instance is accounted gone.
//
// The SDK's own escalation (it signals only the leader) is pushed past ours
// with a long TerminateDuration, so the SDK is left with only the reaping.
type stdioTransport struct {
	inner mcp.CommandTransport
	grace time.Duration
	spawn func(func()) // runs tracked background work
	proc  *procs.Proc  // the instance's account; nil: untracked
	tree  processTree  // the platform's hold on the process tree

	mu      sync.Mutex
	conn    mcp.Connection // the SDK's connection, once the process started
	stopped bool

	stopOnce sync.Once
	done     chan struct{} // closed when the process and its group are gone
	reaped   chan struct{} // closed once the process was waited for (or never ran)
}

// newStdioTransport prepares (but does not start) the command of a server,
// to run in dir ("": ours).
func newStdioTransport(argv []string, dir string, env map[string]string, stderr *stderrWriter, grace time.Duration, spawn func(func()), proc *procs.Proc) *stdioTransport {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	parent := os.Environ()
	if dir != "" {
		// What os/exec does for a Cmd without Env: a shell or a program
		// that trusts $PWD must not believe it runs in our directory.
		parent = append(parent, "PWD="+dir)
	}
	cmd.Env = mergeEnv(parent, env)
	if mark := proc.Env(); mark != "" {
		// Last, so that it wins over an inherited or configured one.
		cmd.Env = append(slices.DeleteFunc(cmd.Env, func(kv string) bool {
			return strings.HasPrefix(kv, procs.MarkEnv+"=")
		}), mark)
	}
	ownTree(cmd)
	cmd.Stderr = stderr
	// A grandchild that inherited stderr could keep the pipe open after
	// the group leader died; never let Wait block on it for long.
	cmd.WaitDelay = grace
	return &stdioTransport{
		inner:  mcp.CommandTransport{Command: cmd, TerminateDuration: 3*grace + time.Second},
		grace:  grace,
		spawn:  spawn,
		proc:   proc,
		done:   make(chan struct{}),
		reaped: make(chan struct{}),
	}
}

// checkCwd fails a server whose working directory is not a directory we
// can enter, as an invalid config (no retry can create it): os/exec would
// report a missing one as the program not found.
func checkCwd(srv config.Server) error {
	if srv.Cwd == "" {
		return nil
	}
	fi, err := os.Stat(srv.Cwd)
	var msg string
	switch {
	case errors.Is(err, fs.ErrNotExist):
		msg = "the directory " + strconv.Quote(srv.Cwd) + " does not exist"
	case errors.Is(err, fs.ErrPermission):
		msg = "the directory " + strconv.Quote(srv.Cwd) + " cannot be reached: permission denied"
	case err != nil:
		msg = "the directory " + strconv.Quote(srv.Cwd) + " cannot be used"
	case !fi.IsDir():
		msg = strconv.Quote(srv.Cwd) + " is not a directory"
	default:
		return nil
	}
	return &config.FieldError{Server: srv.Name, Field: "cwd", Message: msg}
}

// mergeEnv returns parent with every key of env set over it. A key parent
// holds twice is kept once, the last, as the process would read it.
func mergeEnv(parent []string, env map[string]string) []string {
	out := make([]string, 0, len(parent)+len(env))
	last := make(map[string]int, len(parent))
	for i, kv := range parent {
		k, _, _ := strings.Cut(kv, "=")
		last[k] = i
	}
	for i, kv := range parent {
		k, _, _ := strings.Cut(kv, "=")
		if _, overridden := env[k]; !overridden && last[k] == i {
			out = append(out, kv)
		}
	}
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	return out
}

// Connect starts the process, unless the transport was already stopped.
func (t *stdioTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.stopped {
		return nil, errStopped
	}
	t.proc.Starting()
	c, err := t.inner.Connect(ctx)
	if err != nil {
		t.proc.Started(0)
		return nil, err
	}
	pid := t.inner.Command.Process.Pid
	if err := t.tree.adopt(pid, t.proc); err != nil {
		// Windows: the process is suspended outside its job; it must not
		// run so. Closing the connection reaps it.
		_ = t.inner.Command.Process.Kill()
		_ = c.Close()
		t.proc.Started(0)
		return nil, err
	}
	t.proc.Started(pid)
	t.conn = c
	return &groupConn{Connection: c, t: t}, nil
}

// groupConn is the connection the SDK sees. Its Close starts the group stop
// in the background and returns: the SDK calls Close from inside its own
// bookkeeping, and a stubborn server must not hold that up for two graces.
type groupConn struct {
	mcp.Connection
	t *stdioTransport
}

func (c *groupConn) Close() error {
	c.t.stopAsync()
	return nil
}

// pid returns the process id, or 0 before the process started.
func (t *stdioTransport) pid() int {
	if t == nil {
		return 0
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.conn == nil {
		return 0
	}
	return t.inner.Command.Process.Pid
}

// stopAsync starts the stop sequence in a tracked goroutine, once. A nil
// transport (no process) has nothing to stop.
func (t *stdioTransport) stopAsync() {
	if t == nil {
		return
	}
	t.stopOnce.Do(func() { t.spawn(t.terminate) })
}

// stop starts the stop sequence if needed and waits until the process is
// reaped and its group is gone: at most about two graces plus WaitDelay for
// a server that ignores stdin close and SIGTERM.
func (t *stdioTransport) stop() {
	if t == nil {
		return
	}
	t.stopAsync()
	<-t.done
}

// waitStopped waits up to limit for a stop begun earlier to finish.
func (t *stdioTransport) waitStopped(limit time.Duration) {
	if t == nil {
		return
	}
	timer := time.NewTimer(limit)
	defer timer.Stop()
	select {
	case <-t.done:
	case <-timer.C:
	}
}

func (t *stdioTransport) terminate() {
	defer close(t.done)
	defer t.proc.End()
	t.mu.Lock()
	t.stopped = true
	conn := t.conn
	t.mu.Unlock()
	if conn == nil {
		close(t.reaped)
		return // never started, and now never will
	}
	pgid := t.inner.Command.Process.Pid
	reaped := t.reaped
	// Closing the SDK connection closes stdin and then waits for (reaps)
	// the process; the signals below make sure it ends.
	go func() {
		defer close(reaped)
		_ = conn.Close()
	}()
	timer := time.NewTimer(t.grace)
	defer timer.Stop()
escalate:
	for _, step := range t.tree.escalation(pgid) {
		select {
		case <-reaped:
			break escalate
		case <-timer.C:
			step()
			timer.Reset(t.grace)
		}
	}
	<-reaped
	// The leader is gone; what it left goes too.
	t.tree.finish(pgid, t.proc, t.grace)
}

// StopBound is the longest the stop sequence of a stdio server takes with
// grace: stdin's close and SIGTERM get a grace each, os/exec's WaitDelay
// one more for the pipes, the final kill of the group and the marked
// processes one more, plus a margin for scheduling. Whatever waits for a
// stop (a removal's answer) is bounded by it.
func StopBound(grace time.Duration) time.Duration { return 4*grace + 2*time.Second }

// ExitStatus returns how the stdio server's process ended, as Go's
// os.ProcessState says it ("exit status 1", "signal: killed"), waiting up
// to limit for it to be reaped (the SDK reaps it as soon as its
// connection closes, which a dead server's EOF brings about); "" for a
// remote server or one not reaped within limit.
func (c *Conn) ExitStatus(limit time.Duration) string {
	t := c.proc
	if t == nil {
		return ""
	}
	timer := time.NewTimer(limit)
	defer timer.Stop()
	select {
	case <-t.reaped:
	case <-timer.C:
		return ""
	}
	// Written by the SDK's Wait before reaped was closed.
	if ps := t.inner.Command.ProcessState; ps != nil {
		return ps.String()
	}
	return ""
}
