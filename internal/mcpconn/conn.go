// Package mcpconn is one live MCP client connection of a server: it dials
// (starts the process, initializes, lists tools), calls tools, notices when
// the transport dies and closes with process-group hygiene. It knows nothing
// about actors; the session actor owns one Conn at a time.
package mcpconn

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/openprogram/mcpvisor/config"
	"github.com/openprogram/mcpvisor/tools"
)

// DefaultGrace is how long stop waits after closing stdin before SIGTERM,
// and again after SIGTERM before SIGKILL.
const DefaultGrace = 2 * time.Second

// Options configure Dial.
type Options struct {
	// Server is the server's configuration. It must be valid.
	Server config.Server
	// Logger receives the server's stderr lines and connection events. It
	// should already carry the server's name.
	Logger *slog.Logger
	// Tail keeps the server's last stderr lines; it outlives one Conn.
	Tail *Tail
	// Grace is each of the two stop grace periods (default DefaultGrace).
	Grace time.Duration
	// Client names this client to the server in initialize.
	Client *mcp.Implementation
	// Transport, if set, replaces the server's own transport. Tests and
	// benchmarks use it for in-memory servers; no process is started.
	Transport mcp.Transport
}

// Conn is a connected, initialized MCP session with its tool list.
// CallTool may be used from any goroutine; Close may be called several
// times and concurrently.
type Conn struct {
	name    string
	timeout time.Duration
	grace   time.Duration
	logger  *slog.Logger

	cs     *mcp.ClientSession
	proc   *stdioTransport // nil for an injected transport
	stderr *stderrWriter
	tools  []*mcp.Tool

	// inflight holds the cancel func of every running call. Close cancels
	// them all, so that no call keeps the session (and Close) waiting for
	// a reply that may never come. A map under a mutex costs no allocation
	// per call, unlike context.AfterFunc.
	mu       sync.Mutex
	closing  bool
	nextCall uint64
	inflight map[uint64]context.CancelFunc

	done    chan struct{} // closed when the transport is gone
	lostErr error         // why, readable after done

	closeOnce sync.Once
}

// Dial starts the server, initializes the session and lists its tools, all
// within the server's timeout_seconds. If ctx ends or anything fails,
// everything Dial started is stopped before it returns the error: a failed
// Dial leaves no process behind.
func Dial(ctx context.Context, opts Options) (*Conn, error) {
	srv := opts.Server
	if srv.Type != config.TypeLocal && opts.Transport == nil {
		return nil, fmt.Errorf("connecting %q: transport %q is not supported yet", srv.Name, srv.Type)
	}
	if opts.Grace <= 0 {
		opts.Grace = DefaultGrace
	}
	if opts.Client == nil {
		opts.Client = &mcp.Implementation{Name: "mcpvisor"}
	}
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	tail := opts.Tail
	if tail == nil {
		tail = &Tail{}
	}
	stderr := newStderrWriter(logger, tail, srv.Secrets())
	var proc *stdioTransport
	var transport mcp.Transport = opts.Transport
	if transport == nil {
		proc = newStdioTransport(srv.Command, srv.Env, stderr, opts.Grace)
		transport = proc
	}

	ctx, cancel := context.WithTimeout(ctx, srv.Timeout())
	defer cancel()
	// Once the dial is abandoned, kill the process right away instead of
	// waiting for the SDK's own close, which allows the child two full
	// terminate periods per signal.
	stopOnAbandon := context.AfterFunc(ctx, func() { proc.stop(opts.Grace) })

	c := &Conn{
		name:    srv.Name,
		timeout: srv.Timeout(),
		grace:   opts.Grace,
		logger:  logger,
		proc:    proc,
		stderr:  stderr,
		done:    make(chan struct{}),
	}
	c.inflight = map[uint64]context.CancelFunc{}
	client := mcp.NewClient(opts.Client, &mcp.ClientOptions{Logger: logger})
	cs, err := client.Connect(ctx, transport, nil)
	if err == nil {
		c.cs = cs
		c.tools, err = listTools(ctx, cs)
	}
	if err == nil && !stopOnAbandon() {
		err = ctx.Err() // the dial was abandoned just as it succeeded
	}
	if err != nil {
		err = dialError(ctx, srv, err, tail)
		proc.stop(opts.Grace)
		if cs != nil {
			closeSession(cs, opts.Grace)
		}
		stderr.flush()
		return nil, err
	}
	go c.watch()
	return c, nil
}

func listTools(ctx context.Context, cs *mcp.ClientSession) ([]*mcp.Tool, error) {
	var out []*mcp.Tool
	for t, err := range cs.Tools(ctx, nil) {
		if err != nil {
			return nil, fmt.Errorf("listing tools: %w", err)
		}
		out = append(out, t)
	}
	return out, nil
}

// dialError makes a failed dial readable: a timeout says which limit it hit,
// and a process that died says what it printed last.
func dialError(ctx context.Context, srv config.Server, err error, tail *Tail) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		err = fmt.Errorf("no answer within timeout_seconds=%d: %w", int(srv.Timeout()/time.Second), err)
	}
	if lines := tail.Lines(); len(lines) > 0 {
		err = fmt.Errorf("%w (last stderr line: %q)", err, lines[len(lines)-1])
	}
	return fmt.Errorf("connecting %q: %w", srv.Name, err)
}

// watch notices the end of the transport: the process exited, closed
// stdout, wrote garbage, or Close was called.
func (c *Conn) watch() {
	err := c.cs.Wait()
	if err == nil {
		err = errors.New("server closed the connection")
	}
	c.lostErr = fmt.Errorf("session of %q lost: %w", c.name, err)
	close(c.done)
}

// Tools returns the tool list read at dial time.
func (c *Conn) Tools() []*mcp.Tool { return c.tools }

// PID returns the server's process id.
func (c *Conn) PID() int { return c.proc.pid() }

// Done is closed when the transport is gone, whatever the reason.
func (c *Conn) Done() <-chan struct{} { return c.done }

// Err says why the transport is gone; valid after Done is closed.
func (c *Conn) Err() error {
	select {
	case <-c.done:
		return c.lostErr
	default:
		return nil
	}
}

// CallTool calls a tool by its original name on this session, bounded by
// the server's timeout and by Close.
func (c *Conn) CallTool(ctx context.Context, name string, args any) (*mcp.CallToolResult, error) {
	callCtx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	id, ok := c.track(cancel)
	if !ok {
		return nil, fmt.Errorf("calling %q on %q: %w", name, c.name, tools.ErrSessionClosed)
	}
	// A fresh params value per call: the SDK writes into it.
	res, err := c.cs.CallTool(callCtx, &mcp.CallToolParams{Name: name, Arguments: args})
	closing := c.untrack(id)
	switch {
	case err == nil:
		return res, nil
	case ctx.Err() != nil: // the caller gave up; say so in its own terms
		return nil, fmt.Errorf("calling %q on %q: %w", name, c.name, ctx.Err())
	case closing, errors.Is(err, mcp.ErrConnectionClosed):
		return nil, fmt.Errorf("calling %q on %q: %w", name, c.name, tools.ErrSessionClosed)
	case callCtx.Err() != nil:
		return nil, fmt.Errorf("calling %q on %q: %w after %s (timeout_seconds)", name, c.name, tools.ErrTimeout, c.timeout)
	}
	return nil, fmt.Errorf("calling %q on %q: %w", name, c.name, err)
}

// track registers a running call; false once Close began.
func (c *Conn) track(cancel context.CancelFunc) (uint64, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closing {
		return 0, false
	}
	c.nextCall++
	c.inflight[c.nextCall] = cancel
	return c.nextCall, true
}

// untrack removes a finished call and reports whether Close began.
func (c *Conn) untrack(id uint64) (closing bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.inflight, id)
	return c.closing
}

// cancelCalls cancels every running call and refuses new ones.
func (c *Conn) cancelCalls() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closing = true
	for _, cancel := range c.inflight {
		cancel()
	}
}

// Close ends the session: in-flight calls are cancelled (the server gets
// notifications/cancelled), stdin is closed, then the process group gets
// SIGTERM and SIGKILL after each grace period. It returns when the process
// is reaped and the session's goroutines are done.
func (c *Conn) Close() {
	c.closeOnce.Do(func() {
		c.cancelCalls()
		closed := make(chan struct{})
		go func() {
			defer close(closed)
			closeSession(c.cs, c.grace)
		}()
		c.proc.stop(c.grace)
		<-closed
		<-c.done
		c.stderr.flush()
	})
}

// closeSession closes the SDK session. With calls cancelled and the process
// gone it returns at once; the bound only guards against SDK surprises.
func closeSession(cs *mcp.ClientSession, grace time.Duration) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = cs.Close()
	}()
	select {
	case <-done:
	case <-time.After(3*grace + time.Second):
	}
}
