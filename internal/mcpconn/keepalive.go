package mcpconn

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/openprogram/mcpvisor/internal/procs"
	"github.com/openprogram/mcpvisor/tools"
)

// The keepalive is ours, not the SDK's: ClientOptions.KeepAlive never runs
// on a 2026-07-28 session, and when it fires it ends the session with
// Close, which waits for the calls in flight — which a hung server never
// answers. Here one goroutine per ready Conn probes every interval, each
// probe bounded by the interval, so a server that stops answering is found
// within two intervals; its process group is killed first (EOF then fails
// every request in flight) and the session ended with ErrUnresponsive,
// which the owner sees as any lost session.

// statelessVersion is the first protocol version without ping (and
// without initialize): its sessions are probed with server/discover.
const statelessVersion = "2026-07-28"

// probeCursor is the cursor of the tools/list that probeMiddleware turns
// into a server/discover. A fixed cursor keeps the SDK's list cache, which
// is keyed by cursor, from answering the probe itself.
const probeCursor = "mcpvisor/keepalive-probe"

// probeKey marks the context of a probe's tools/list.
type probeKey struct{}

// probeMiddleware sends a marked tools/list (a probe) as server/discover
// instead: the SDK has no exported way to send that request, but its
// sending method table knows it. server/discover is the cheapest request
// every 2026-07-28 server must answer (it is how a session starts): no
// state, no side effect, an answer of a few hundred bytes. It carries the
// _meta triple (protocol version, client info, capabilities) the SDK has
// just put on the tools/list.
func probeMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		cs, ok := req.GetSession().(*mcp.ClientSession)
		if method != "tools/list" || ctx.Value(probeKey{}) == nil || !ok {
			return next(ctx, method, req)
		}
		params := &mcp.DiscoverParams{Meta: mcp.Meta(req.GetParams().GetMeta())}
		if _, err := next(ctx, "server/discover", &mcp.DiscoverRequest{Session: cs, Params: params}); err != nil {
			return nil, err
		}
		return &mcp.ListToolsResult{}, nil
	}
}

// probeName names the request a session is probed with: ping where the
// protocol has it, server/discover from 2026-07-28 on.
func (c *Conn) probeName() string {
	if c.cs.InitializeResult().ProtocolVersion >= statelessVersion {
		return "server/discover"
	}
	return "ping"
}

// probe sends one liveness request. Any answer proves the server alive,
// an error answer included (a server without ping says -32601).
func (c *Conn) probe(ctx context.Context) error {
	var err error
	if c.probeName() == "ping" {
		err = c.cs.Ping(ctx, nil)
	} else {
		_, err = c.cs.ListTools(context.WithValue(ctx, probeKey{}, true), &mcp.ListToolsParams{Cursor: probeCursor})
	}
	if wire := (*jsonrpc.Error)(nil); errors.As(err, &wire) {
		return nil
	}
	return err
}

// startKeepAlive runs the keepalive of a ready Conn, unless interval ≤ 0.
// Close stops it and waits for it. It runs on the real clock, not
// Options.Clock: it measures how a server answers in real time, and a
// test's fake clock drives the lifecycle timers alone.
func (c *Conn) startKeepAlive(interval time.Duration) {
	if interval <= 0 {
		close(c.kaDone)
		return
	}
	go c.keepAlive(interval)
}

// keepAlive is the Conn's one keepalive goroutine. Probes run one at a
// time, beside the calls (a probe is not a call: it takes no slot of
// max_concurrent_calls), so a slow call is never taken for a hang while
// the server answers its probes.
func (c *Conn) keepAlive(interval time.Duration) {
	defer close(c.kaDone)
	ticker := time.NewTicker(interval)
	defer ticker.Stop()
	for {
		select {
		case <-c.kaCtx.Done():
			return
		case <-c.done:
			return
		case <-ticker.C:
		}
		// A stopped process cannot answer until it is continued: hung now,
		// not after a probe's interval.
		if c.proc.groupStopped() {
			c.hung(errors.New("its process is stopped (SIGSTOP or a terminal stop)"))
			return
		}
		pctx, cancel := context.WithTimeout(c.kaCtx, interval)
		err := c.probe(pctx)
		timedOut := pctx.Err() != nil && c.kaCtx.Err() == nil
		cancel()
		switch {
		case err == nil:
		case timedOut:
			c.hung(fmt.Errorf("no answer to the keepalive %s within %s", c.probeName(), interval))
			return
		default:
			// The transport failed: watch reports that loss by itself.
			return
		}
	}
}

// hung ends the session of a server that stopped answering. The process
// group is killed before the session is closed: the SDK's Close waits for
// the requests in flight, and only the EOF of a dead process ends them. A
// remote server's requests are cut likewise: its Close would send a
// DELETE the hung server does not answer either (the SDK waits 5s).
func (c *Conn) hung(why error) {
	err := fmt.Errorf("%w: %w", tools.ErrUnresponsive, why)
	// The reason is set before anything ends, so that the session's loss
	// and the calls in flight say it.
	c.endWithFirst(err, func() {
		c.proc.kill()
		if c.cut != nil {
			c.cut()
		}
	})
}

// errCut fails the requests of a remote server declared unresponsive.
var errCut = errors.New("the server was declared unresponsive")

// cutTransport fails every request once cut: those not sent yet at once,
// and those in flight (a stream's body included) by cancelling them.
type cutTransport struct {
	base http.RoundTripper
	ctx  context.Context // done once cut
}

// newCutTransport wraps base; the func cuts it.
func newCutTransport(base http.RoundTripper) (http.RoundTripper, func()) {
	ctx, cut := context.WithCancel(context.Background())
	return cutTransport{base: base, ctx: ctx}, cut
}

func (t cutTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if t.ctx.Err() != nil {
		return nil, errCut
	}
	ctx, cancel := context.WithCancel(req.Context())
	unlink := context.AfterFunc(t.ctx, cancel)
	release := func() { unlink(); cancel() }
	resp, err := t.base.RoundTrip(req.WithContext(ctx))
	if err != nil {
		release()
		return nil, err
	}
	resp.Body = &cutBody{ReadCloser: resp.Body, release: release}
	return resp, nil
}

// cutBody releases its request's link to the cut when it is closed.
type cutBody struct {
	io.ReadCloser
	release func()
}

func (b *cutBody) Close() error {
	err := b.ReadCloser.Close()
	b.release()
	return err
}

// groupStopped reports whether a process of the server's group is in the
// stopped state (Linux; false elsewhere and for remote servers).
func (t *stdioTransport) groupStopped() bool {
	if t == nil {
		return false
	}
	return procs.GroupStopped(t.pid())
}

// kill SIGKILLs the server's process group at once; the stop sequence
// that follows reaps it and kills the marked processes outside the group.
// SIGKILL ends a stopped process too.
func (t *stdioTransport) kill() {
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.conn != nil && !t.stopped {
		procs.SignalGroup(t.inner.Command.Process.Pid, syscall.SIGKILL)
	}
}
