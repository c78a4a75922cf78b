// Package mcpconn is one live MCP client connection of a server: it dials
// (starts the process, initializes, lists tools), calls tools, notices when
// the transport dies and closes with process-group hygiene. It knows nothing
// about actors; the session actor owns one Conn at a time.
package mcpconn

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/propagation"

	"github.com/openprogram/mcpvisor/adapter"
	"github.com/openprogram/mcpvisor/internal/redact"
)

// ErrUnsupported: the server's transport type is not implemented yet; a
// retry cannot fix that.
var ErrUnsupported = errors.New("not supported yet")

// Conn is a connected, initialized MCP session with its tool list.
// CallTool may be used from any goroutine; Close may be called several
// times and concurrently.
type Conn struct {
	name    string
	timeout time.Duration   // timeout_seconds: of a request, and of a call between progress reports
	maxCall time.Duration   // max_call_seconds: of a call that progress keeps alive
	clock   clockwork.Clock // runs the requests' deadlines
	grace   time.Duration
	logger  *slog.Logger
	scrub   *redact.Scrubber

	cs     *mcp.ClientSession
	proc   *stdioTransport // nil for an injected transport
	stderr *stderrWriter
	tap    *wireTap // nil for remote transports
	tools  []*mcp.Tool
	limit  *limiter // max_concurrent_calls; nil is unlimited

	httpConns *http.Transport    // a remote server's sockets, closed with the Conn
	endLife   context.CancelFunc // ends a remote transport's streams
	cut       func()             // fails a remote transport's requests, those in flight too
	closeAuth func()             // stops an OAuth login's background refresh
	goFn      func(func())       // runs work the owner waits for (Options.Go)
	progress  *progressRouter    // per-call progress callbacks
	timers    sync.Pool          // *deadlineTimer of the calls' deadlines, reused (see requestDeadline.start)
	heard     *heartbeat         // when the server last sent anything (keepalive)
	listens   *listenTracker     // sees subscription streams end
	reopen    *reopener          // reopens them, and subscribes the session at first
	updates   *updateThrottle    // coalesces resource updates
	logs      bool               // calls carry the log level in _meta (perCallLogLevel)
	// propagator writes the trace context into each call's, read's and
	// prompt get's _meta (see withTraceMeta); nil: none.
	propagator propagation.TextMapPropagator

	// cause, if set before the transport ends, is why it was ended from
	// here (a refused token refresh) and becomes Err.
	cause atomic.Pointer[error]

	// inflight holds the deadline of every running call. Close stops
	// them all, so that no call keeps the session (and Close) waiting for
	// a reply that may never come. A map under a mutex costs no allocation
	// per call, unlike context.AfterFunc.
	mu       sync.Mutex
	closing  bool
	nextCall uint64
	inflight map[uint64]*requestDeadline

	kaCtx    context.Context // ends the keepalive (Close)
	kaCancel context.CancelFunc
	kaDone   chan struct{} // closed when the keepalive ended (or never ran)
	ka       keepAliver

	done    chan struct{} // closed when the transport is gone
	lostErr error         // why, readable after done
	gone    bool          // done is closed (under mu)
	onDone  func()        // run by watch once done is closed (under mu)

	closeOnce sync.Once
}

// watch notices the end of the transport: the process exited, closed
// stdout, wrote garbage, or Close was called.
func (c *Conn) watch() {
	err := c.cs.Wait()
	c.reopen.stop() // nothing to reopen on a session that is gone
	if cause := c.cause.Load(); cause != nil {
		err = *cause
	} else if err == nil {
		err = errors.New("server closed the connection")
	}
	c.lostErr = scrubError(c.scrub, fmt.Errorf("session of %q lost: %w", c.name, err))
	c.mu.Lock()
	c.gone = true
	f := c.onDone
	c.mu.Unlock()
	if f != nil {
		// Under Options.Go, which the owner waits for (this watcher is
		// not: a session that never ends would hold its Shutdown), and
		// handed over before done is closed, while a Close waiting for
		// done still holds the owner's wait open.
		c.runAfterDone(f)
	}
	close(c.done)
	c.stopKeepAlive() // no probe of a session that is gone
}

// runAfterDone runs f once done is closed, on a goroutine of Options.Go.
func (c *Conn) runAfterDone(f func()) {
	c.goFn(func() {
		<-c.done
		f()
	})
}

// AfterDone arranges for f to run once the transport is gone (Done is
// closed), on a goroutine of Options.Go that the connection's watcher
// starts then, so that an owner needs no goroutine of its own per
// connection to wait on Done (P2), and waits for f as for its other work.
// f runs at most once; a later AfterDone replaces an earlier one not run
// yet. On a transport gone already f runs at once, never on the caller's
// goroutine, which may be an actor's Receive.
func (c *Conn) AfterDone(f func()) {
	c.mu.Lock()
	if !c.gone {
		c.onDone = f
		c.mu.Unlock()
		return
	}
	c.mu.Unlock()
	c.runAfterDone(f)
}

// endWith ends the transport from this side with err as the reason, for a
// failure the transport cannot see (a refused token refresh, an answer
// over its bound). The calls in flight are cancelled first: the SDK's
// Close waits for them, and a slow one would keep the ended session (and
// its tools) around until it finished.
func (c *Conn) endWith(err error) {
	c.endWithFirst(err, func() {})
}

// endWithFirst is endWith running first, once the calls are cancelled and
// before the session closes: what ends a transport that cannot end by
// itself (a hung server's process, its requests).
func (c *Conn) endWithFirst(err error, first func()) {
	if c.cause.CompareAndSwap(nil, &err) {
		c.endCalls(true)
		first()
		c.goFn(func() { c.cs.Close() })
	}
}

// Tools returns the tool list read at dial time.
func (c *Conn) Tools() []*mcp.Tool { return c.tools }

// InputSchema returns a tool's input schema exactly as the server sent it
// (the SDK's decoded form reorders keys and rounds big numbers).
func (c *Conn) InputSchema(t *mcp.Tool) (json.RawMessage, error) {
	if raw, ok := c.tap.tool(t.Name); ok && len(raw.InputSchema) > 0 {
		return raw.InputSchema, nil
	}
	return adapter.SchemaJSON(t.InputSchema)
}

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

// endCalls refuses new calls and, if cancel, cancels the running ones.
func (c *Conn) endCalls(cancel bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closing = true
	if cancel {
		for _, dl := range c.inflight {
			dl.stop()
		}
	}
}

// Close ends the session: in-flight calls are cancelled (the server gets
// notifications/cancelled), stdin is closed, then the process group gets
// SIGTERM and SIGKILL after each grace period. It returns when the process
// group is gone and the session's goroutines are done.
func (c *Conn) Close() {
	c.closeOnce.Do(func() {
		c.kaCancel() // no probe from now on; its request is cancelled
		c.stopKeepAlive()
		c.progress.close() // no report reaches a host, no grace timer runs
		// No stream is reopened on a session that is closing.
		c.listens.close()
		c.reopen.stop()
		c.updates.close()
		// A live session's calls are cancelled so that none waits for a
		// reply that may never come. A session whose transport is already
		// gone needs no cancelling (the SDK fails its calls by itself), and
		// cancelling could throw away a reply that arrived just before the
		// end but has not reached its caller yet.
		select {
		case <-c.done:
			c.endCalls(false)
		default:
			c.endCalls(true)
		}
		if c.closeAuth != nil {
			c.closeAuth() // no refresh runs or is stored from now on
		}
		closed := make(chan struct{})
		go func() {
			defer close(closed)
			closeSession(c.cs, c.grace)
		}()
		c.proc.stop()
		<-closed // bounded by closeSession
		select {
		case <-c.done:
		case <-time.After(c.grace):
			c.logger.Warn("session did not end after close; continuing")
		}
		c.reopen.wait()
		<-c.kaDone // its probe was cancelled, and the session is gone
		c.stderr.flush()
		if c.endLife != nil {
			c.endLife()
		}
		if c.cut != nil {
			c.cut() // releases what a request left linked to it
		}
		closeIdle(c.httpConns)
	})
}

func closeIdle(t *http.Transport) {
	if t != nil {
		t.CloseIdleConnections()
	}
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
