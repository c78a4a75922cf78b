// Package session is the session actor: it holds one live MCP connection
// (internal/mcpconn) of its server.
//
// Contract:
//   - Started launches the dial in a goroutine; the mailbox never waits.
//   - It reports to its parent (the server actor) exactly one of
//     SessionReady or SessionFailed, then at most one SessionLost, all
//     tagged with the Gen it was spawned with.
//   - It never restarts itself: the parent decides whether and when a new
//     session runs.
//   - Stopping cancels a pending dial and closes the connection in a
//     tracked goroutine (in-flight calls cancelled, stdin closed, SIGTERM
//     then SIGKILL to the process group, then SIGKILL to every process
//     that carries the instance's mark). Until that is done the server's
//     processes stay accounted for in Deps.Procs under its name, which is
//     what a removal waits for. Whichever of the dial goroutine
//     and Stopping comes second closes the connection, so a dial that
//     completes after the stop never leaves a process behind.
package session

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/openprogram/mcpvisor/actors"
	"github.com/openprogram/mcpvisor/config"
	"github.com/openprogram/mcpvisor/events"
	"github.com/openprogram/mcpvisor/internal/mcpconn"
	"github.com/openprogram/mcpvisor/internal/oauthflow"
	"github.com/openprogram/mcpvisor/messages"
)

// Name is the session actor's name under its server actor.
const Name = "session"

// Props returns the props of a session for server cfg, generation gen.
//
// user: the user asked for this session (add, edit, restart), so an OAuth
// login that waits for the user may open the browser. emit receives the
// events of the connection (its server actor's gated emit).
func Props(deps *actors.Deps, cfg config.Server, gen uint64, tail *mcpconn.Tail, logger *slog.Logger, user bool, emit func(events.Event)) *actor.Props {
	return actors.PropsEmitting(deps, emit, func() actor.Actor {
		return &Actor{deps: deps, cfg: cfg, gen: gen, tail: tail, logger: logger, user: user, emit: emit}
	})
}

// Actor is one session incarnation.
type Actor struct {
	deps   *actors.Deps
	cfg    config.Server
	gen    uint64
	tail   *mcpconn.Tail
	logger *slog.Logger
	user   bool // the user asked for this session
	emit   func(events.Event)

	ctx    context.Context // cancelled when the actor stops
	cancel context.CancelFunc
	hand   *handoff
	output *startingGate

	// For Describe only: the connection is owned by hand.
	conn  *mcpconn.Conn
	state string
	since time.Time
}

// Goroutine reports to the actor itself. They carry the generation because
// a report can reach a same-named successor.
type (
	dialed struct {
		gen  uint64
		conn *mcpconn.Conn
	}
	dialFailed struct {
		gen uint64
		err error
	}
	transportLost struct {
		gen  uint64
		err  error
		exit string // the process's exit status, if known
	}
)

// exitStatusWait bounds how long the watcher waits for a lost stdio
// process to exit, to report its status with the loss.
const exitStatusWait = 100 * time.Millisecond

// Receive handles lifecycle first, then the goroutine reports.
func (a *Actor) Receive(c actor.Context) {
	switch msg := c.Message().(type) {
	case *actor.Started:
		a.start(c)
	case *actor.Stopping:
		a.stop()
	case dialed:
		if msg.gen != a.gen {
			return
		}
		a.conn, a.state, a.since = msg.conn, "ready", time.Now()
		a.watch(c, msg.conn)
		c.Send(c.Parent(), messages.SessionReady{Gen: a.gen, Conn: msg.conn})
	case dialFailed:
		if msg.gen == a.gen {
			a.state = "failed"
			c.Send(c.Parent(), messages.SessionFailed{Gen: a.gen, Err: msg.err})
		}
	case transportLost:
		if msg.gen == a.gen {
			a.state = "lost"
			c.Send(c.Parent(), messages.SessionLost{Gen: a.gen, Err: msg.err, ExitStatus: msg.exit})
		}
	case messages.Describe:
		d := messages.Description{Kind: "session", State: a.state, Since: a.since}
		if a.conn != nil {
			d.PID = a.conn.PID()
		}
		msg.Reply <- d
	case messages.Panic:
		panic("injected failure (debug)")
	}
}

func (a *Actor) start(c actor.Context) {
	a.state, a.since = "connecting", time.Now()
	root, self, gen := c.ActorSystem().Root, c.Self(), a.gen
	ctx, cancel := context.WithCancel(context.Background())
	a.ctx, a.cancel = ctx, cancel
	a.hand = &handoff{}
	opts := mcpconn.Options{Server: a.cfg, Logger: a.logger, Tail: a.tail, Grace: a.deps.Grace, Client: a.deps.Client, Go: a.deps.Work.Go, Clock: a.deps.Clock, Propagator: a.deps.Propagator}
	if a.deps.Transport != nil {
		opts.Transport = a.deps.Transport(a.cfg)
	}
	opts.Features = a.features(c)
	opts.Tokens = a.deps.Tokens
	opts.UserAction = a.user
	opts.Procs = a.deps.Procs
	opts.LookupEnv = a.deps.LookupEnv
	opts.KeepAlive = a.deps.KeepAlive
	a.output = &startingGate{emit: a.emit}
	opts.Emit = a.output.pass
	opts.Login = a.loginFunc(c)
	opts.RequestMark, opts.AllowPrivateOAuthHosts = a.deps.RequestMark, a.deps.AllowPrivateOAuthHosts
	hand := a.hand
	a.deps.Work.Go(func() {
		conn, err := mcpconn.Dial(ctx, opts)
		if err != nil {
			if ctx.Err() == nil {
				root.Send(self, dialFailed{gen: gen, err: err})
			}
			return
		}
		if !hand.offer(conn) {
			conn.Close() // the actor stopped while we dialled
			return
		}
		root.Send(self, dialed{gen: gen, conn: conn})
	})
}

// features binds the host's client features to this server and forwards
// list changes to the server actor, tagged with this session's generation.
func (a *Actor) features(c actor.Context) mcpconn.Features {
	root, parent, gen, name := c.ActorSystem().Root, c.Parent(), a.gen, a.cfg.Name
	f := mcpconn.Features{
		Roots:       a.deps.Roots,
		RendersApps: a.deps.RendersApps,
		ListChanged: func(list string) {
			root.Send(parent, messages.ListChanged{Gen: gen, List: list})
		},
	}
	if subs := a.deps.Subscriptions; subs != nil {
		f.Subscriptions = subs(name)
	}
	if list := a.deps.ListRoots; list != nil {
		f.ListRoots = func(ctx context.Context) ([]*mcp.Root, error) { return list(ctx, name) }
	}
	if watch := a.deps.WatchRoots; watch != nil {
		f.WatchRoots = func(notify func()) { watch(name, notify) }
	}
	if elicit := a.deps.Elicit; elicit != nil {
		f.Elicit = func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return elicit(ctx, name, req)
		}
	}
	if sample := a.deps.Sample; sample != nil {
		f.Sample = func(ctx context.Context, req *mcp.CreateMessageWithToolsRequest) (*mcp.CreateMessageWithToolsResult, error) {
			return sample(ctx, name, req)
		}
	}
	return f
}

// loginFunc asks the server actor for an interactive login and waits for
// its one result. A waiter that gives up tells the server, whose callback
// actor then closes its socket.
func (a *Actor) loginFunc(c actor.Context) oauthflow.Login {
	root, parent, gen := c.ActorSystem().Root, c.Parent(), a.gen
	return func(ctx context.Context, req oauthflow.LoginRequest) (*auth.AuthorizationResult, error) {
		reply := make(chan messages.LoginResult, 1)
		root.Send(parent, messages.LoginNeeded{Gen: gen, URL: req.URL, RedirectURI: req.RedirectURI, Listener: req.Listener, Reply: reply})
		select {
		case r := <-reply:
			if r.Err != nil {
				return nil, r.Err
			}
			return &auth.AuthorizationResult{Code: r.Code, State: r.State, Iss: r.Iss}, nil
		case <-ctx.Done():
			// The server may be gone without answering: release the
			// reserved port here too (closing twice is harmless).
			if req.Listener != nil {
				req.Listener.Close()
			}
			root.Send(parent, messages.LoginAbandoned{Reply: reply})
			return nil, fmt.Errorf("%w: %w", oauthflow.ErrLoginCancelled, ctx.Err())
		}
	}
}

// watch reports the end of the transport to the actor, from a goroutine
// of deps.Work that the connection's own watcher starts then (none waits
// per session here, and Shutdown waits for the report). The report
// goes to this actor's mailbox, behind the dialed message being handled:
// SessionLost always reaches the parent after SessionReady.
func (a *Actor) watch(c actor.Context, conn *mcpconn.Conn) {
	root, self, gen, ctx := c.ActorSystem().Root, c.Self(), a.gen, a.ctx
	conn.AfterDone(func() {
		if ctx.Err() != nil {
			return // stopping: the parent hears of it otherwise
		}
		// The exit status is read (not reaped) with a short bound: a
		// process whose stdout closed is normally gone already.
		exit := conn.ExitStatus(exitStatusWait)
		root.Send(self, transportLost{gen: gen, err: conn.Err(), exit: exit})
	})
}

func (a *Actor) stop() {
	if a.cancel == nil {
		return
	}
	a.output.close()
	a.cancel()
	if conn := a.hand.close(); conn != nil {
		a.deps.Work.Go(conn.Close)
	}
}

// startingGate passes the connection's events to emit, except a connect's
// output (events.StartingOutput) once the actor began to stop: the next
// session's connect must never show this one's last line as its detail
// (its server actor clears the detail when it spawns that session, once
// this one terminated). Its other events — a server's last stderr lines —
// still pass.
type startingGate struct {
	emit func(events.Event)

	mu     sync.Mutex
	closed bool
}

func (g *startingGate) pass(e events.Event) {
	if _, ok := e.(events.StartingOutput); !ok {
		g.emit(e)
		return
	}
	// Under the lock, so that close waits for a line on its way (emit
	// does not block).
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.closed {
		g.emit(e)
	}
}

// close stops the connect's output: none is emitted once it returns.
func (g *startingGate) close() {
	g.mu.Lock()
	g.closed = true
	g.mu.Unlock()
}

// handoff decides who closes a connection whose dial races the actor's
// stop: exactly one of them does.
type handoff struct {
	mu     sync.Mutex
	closed bool
	conn   *mcpconn.Conn
}

// offer hands conn to the actor; false means the actor already stopped and
// the caller must close conn.
func (h *handoff) offer(conn *mcpconn.Conn) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return false
	}
	h.conn = conn
	return true
}

// close marks the actor stopped and returns the connection it must close,
// if one was handed over.
func (h *handoff) close() *mcpconn.Conn {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.closed = true
	conn := h.conn
	h.conn = nil
	return conn
}
