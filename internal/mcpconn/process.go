package mcpconn

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// stdioTransport is the SDK's CommandTransport plus what the SDK does not
// give us: the child runs in its own process group, and we keep the
// connection it opened so that stop can close stdin and signal the whole
// group even while calls are pending (the SDK's session Close first waits
// for every in-flight call, and a call whose reply never comes blocks it
// forever).
type stdioTransport struct {
	inner mcp.CommandTransport

	mu   sync.Mutex
	conn mcp.Connection // set once Connect started the process

	stopOnce sync.Once
	stopped  chan struct{} // closed when the process is reaped and its group killed
}

// newStdioTransport prepares (but does not start) the command of a server.
func newStdioTransport(argv []string, env map[string]string, stderr *stderrWriter, grace time.Duration) *stdioTransport {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = mergeEnv(os.Environ(), env)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Stderr = stderr
	// A grandchild that inherited stderr could keep the pipe open after
	// the group leader died; never let Wait block on it for long.
	cmd.WaitDelay = grace
	return &stdioTransport{
		inner:   mcp.CommandTransport{Command: cmd, TerminateDuration: grace},
		stopped: make(chan struct{}),
	}
}

// mergeEnv returns parent with every key of env set over it.
func mergeEnv(parent []string, env map[string]string) []string {
	out := make([]string, 0, len(parent)+len(env))
	for _, kv := range parent {
		k, _, _ := strings.Cut(kv, "=")
		if _, overridden := env[k]; !overridden {
			out = append(out, kv)
		}
	}
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	return out
}

// Connect starts the process.
func (t *stdioTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	t.mu.Lock()
	t.conn = c
	t.mu.Unlock()
	return c, nil
}

// pid returns the process id, or 0 before the process started.
func (t *stdioTransport) pid() int {
	if t == nil {
		return 0
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.conn == nil || t.inner.Command.Process == nil {
		return 0
	}
	return t.inner.Command.Process.Pid
}

// stop ends the process: close stdin; after grace SIGTERM the group; after
// another grace SIGKILL it. It returns once the process is reaped, which
// takes at most about two graces plus the WaitDelay. Safe to call
// concurrently and repeatedly; later calls wait for the first. A nil
// transport (no process) has nothing to stop.
func (t *stdioTransport) stop(grace time.Duration) {
	if t == nil {
		return
	}
	t.stopOnce.Do(func() {
		defer close(t.stopped)
		t.mu.Lock()
		conn := t.conn
		t.mu.Unlock()
		if conn == nil {
			return // never started
		}
		pgid := t.inner.Command.Process.Pid
		reaped := make(chan struct{})
		// Closing the SDK connection closes stdin and waits for the
		// process (its own SIGTERM/SIGKILL hit only the leader).
		go func() {
			defer close(reaped)
			_ = conn.Close()
		}()
		signals := []syscall.Signal{syscall.SIGTERM, syscall.SIGKILL}
		timer := time.NewTimer(grace)
		defer timer.Stop()
		for _, sig := range signals {
			select {
			case <-reaped:
				killGroup(pgid, syscall.SIGKILL)
				return
			case <-timer.C:
				killGroup(pgid, sig)
				timer.Reset(grace)
			}
		}
		<-reaped
		// The leader is gone; anything it left in its group goes too.
		killGroup(pgid, syscall.SIGKILL)
	})
	<-t.stopped
}

// killGroup signals every process of the group. Its only expected error
// is ESRCH (the group is already empty), which is the goal anyway.
func killGroup(pgid int, sig syscall.Signal) {
	if pgid > 0 {
		_ = syscall.Kill(-pgid, sig)
	}
}
