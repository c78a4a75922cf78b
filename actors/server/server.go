// Package server is the server actor: one per configured server. It owns
// the server's lifecycle, its tool registrations and its session child,
// and says what happens as events (Deps.Events): state changes, sessions
// started and lost, tool and prompt listings, logins. It never writes the
// status board or the log for any of them.
//
// Contract:
//   - Started emits nothing and starts nothing: the manager showed the
//     server's initial state (starting, disabled, or failed for an invalid
//     config) before spawning it, and decides when the server connects
//     (Connect) or stops (Disable).
//   - Each command carries the manager's epoch; the actor answers the
//     latest command once with ServerSettled. A command that arrives while
//     an earlier one is pending replaces it; the earlier gets no answer.
//   - Tools are registered only after a SessionReady of the current
//     generation, and unregistered the moment the session is lost or the
//     actor stops. Calls reach the session without passing through this
//     actor: it only publishes the current connection (internal/binding).
//   - A new session is spawned only after the previous one terminated (the
//     child name "session" is stable across generations).
//   - Stopping unregisters the tools, withdraws the connection and emits
//     the change to stopped (not after a panic: the manager shows that
//     death); the session child closes the connection.
//   - Every event of the incarnation and of its sessions passes its Gate,
//     which the manager retires with ServerRemoved: nothing of a removed
//     server follows that.
package server

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os/exec"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/cenkalti/backoff/v5"
	"github.com/jonboulle/clockwork"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/openprogram/mcpvisor/actors"
	"github.com/openprogram/mcpvisor/actors/session"
	"github.com/openprogram/mcpvisor/config"
	"github.com/openprogram/mcpvisor/events"
	"github.com/openprogram/mcpvisor/internal/binding"
	"github.com/openprogram/mcpvisor/internal/mcpconn"
	"github.com/openprogram/mcpvisor/internal/oauthflow"
	"github.com/openprogram/mcpvisor/messages"
	"github.com/openprogram/mcpvisor/status"
	"github.com/openprogram/mcpvisor/tools"
)

// Props returns the props of the actor for cfg. respawn says the actor
// replaces one that died: the board then shows what the manager emitted
// for the death (backoff, disabled), not the initial state, so the new
// actor emits its first state whatever it is. Every event of the
// incarnation and of its sessions passes gate (nil: never retired).
func Props(deps *actors.Deps, cfg config.Server, respawn bool, gate *actors.Gate) *actor.Props {
	emit := func(e events.Event) { gate.Emit(deps.Events, e) }
	return actors.PropsEmitting(deps, emit, func() actor.Actor {
		return &Actor{deps: deps, cfg: cfg, respawn: respawn, gate: gate}
	})
}

// Actor is one server incarnation.
type Actor struct {
	deps    *actors.Deps
	cfg     config.Server
	respawn bool
	gate    *actors.Gate
	logger  *slog.Logger
	tail    *mcpconn.Tail

	epoch    uint64 // of the manager's latest command
	pending  bool   // that command awaits its ServerSettled
	gen      uint64 // generation of the current session child
	session  *actor.PID
	draining *actor.PID // a stopped session not terminated yet
	// OAuth login (A2): the callback child while a login waits, one that
	// is stopping, and a login that waits for it to be gone.
	login         *login
	loginDraining *actor.PID
	queuedLogin   *messages.LoginNeeded
	logins        uint64              // logins started, for unique child names
	userConnect   bool                // the next session is one the user asked for
	lists         map[string]*listing // list changes of the current session
	spawnDue      bool                // spawn a session once draining terminated
	loggedIn      bool                // the current session asked for a login
	// staleDetail: a session stopped while the state shown was starting,
	// and no state change has been emitted since: the board may still
	// show that connect's last stderr line as the starting detail.
	staleDetail bool
	// binding publishes the current connection to the calls of the
	// registered tools and prompts, which never pass through this actor.
	binding *binding.Binding
	// What the events said last: the names of the registered tools and
	// prompts (ToolsChanged and PromptsChanged carry the difference), and
	// the state (a StateChanged is emitted when st differs from it).
	toolNames, promptNames []string
	toolsFiltered          int
	shown                  status.Server
	// listed is the current session's last tool listing, as the server
	// sent it: a Retune filters it again without asking the server.
	listed []*mcp.Tool

	// Recovery of a lost session (V1): recovering from the loss until a
	// session is ready again or a command takes over; retryToken tells the
	// current timer's retryNow from a cancelled one's.
	backoff    *backoff.ExponentialBackOff
	recovering bool
	retryTimer clockwork.Timer
	retryToken uint64
	readySince time.Time
	stopping   bool // children's Terminated during our own stop are expected
	panicked   bool // a Receive panicked: the actor is stopped as failed
	// st is the actor's own view of its state, for its decisions (settle,
	// Describe, a login's way back); the board's copy comes from events.
	st status.Server
}

// retryNow is the backoff timer's message to the actor.
type retryNow struct{ token uint64 }

// Receive handles lifecycle first, then the manager's and the session's
// messages.
func (a *Actor) Receive(c actor.Context) {
	defer func() {
		if r := recover(); r != nil {
			// The manager says what this death means (backoff,
			// disabled); the Stopping that follows must not show
			// "stopped" first. ReportPanics reports it.
			a.panicked = true
			panic(r)
		}
	}()
	switch msg := c.Message().(type) {
	case *actor.Started:
		a.started()
	case *actor.Stopping:
		a.stopping = true
		a.cancelRetry()
		// A failed listing's retry must not reach a same-named successor,
		// and a waiting login ends with an outcome, not silence.
		a.stopRelists()
		a.loginFailed(oauthflow.ErrLoginCancelled)
		a.withdraw()
		if a.deps.Bindings != nil {
			a.deps.Bindings.Drop(a.binding)
		}
		if !a.panicked {
			a.setState(status.Stopped)
		}
	case *actor.Terminated:
		a.terminated(c, msg.Who)
	case messages.Describe:
		d := messages.Description{Kind: "server", State: string(a.st.State), Since: a.st.Since}
		if st, ok := a.deps.Board.Get(a.cfg.Name); ok {
			d.Restarts = st.Restarts
		}
		if a.session != nil {
			d.Children = []*actor.PID{a.session}
		}
		if a.login != nil {
			d.Children = append(d.Children, a.login.pid)
		}
		msg.Reply <- d
		return
	case messages.Panic:
		panic("injected failure (debug)")
	case messages.Kill:
		if a.session == nil {
			msg.Reply <- fmt.Errorf("server %q has no session right now", a.cfg.Name)
		} else {
			msg.Reply <- actors.Inject(c, a.session, msg.How)
		}
		return
	}
	if a.stopping {
		// User messages still arrive while the children stop; a session
		// report now must not register anything again.
		switch msg := c.Message().(type) {
		case messages.LoginNeeded:
			msg.Refuse(oauthflow.ErrLoginCancelled)
		case messages.Retune:
			c.Send(c.Parent(), messages.Retuned{Name: msg.Server.Name})
		}
		return
	}
	switch msg := c.Message().(type) {
	case messages.Connect:
		a.connect(c, msg)
	case messages.Disable:
		a.disable(c, msg)
	case messages.Retune:
		a.retune(msg)
		c.Send(c.Parent(), messages.Retuned{Name: a.cfg.Name})
	case messages.SessionReady:
		if msg.Gen == a.gen {
			a.ready(c, msg.Conn)
		}
	case messages.SessionFailed:
		if msg.Gen == a.gen {
			a.loginFailed(msg.Err)
			// Any attempt that failed for a reason a retry can fix is
			// retried after the backoff (a waiting command still gets its
			// answer: the attempt failed).
			if kind := errorKind(msg.Err); retryable(kind) {
				a.lose(c, msg.Err, kind)
			} else {
				a.fail(c, msg.Err, kind)
			}
		}
	case messages.SessionLost:
		if msg.Gen == a.gen {
			a.emit(events.SessionLost{Error: msg.Err.Error(), ExitStatus: msg.ExitStatus})
			a.loginFailed(msg.Err)
			kind := status.KindSessionLost
			switch {
			case errors.Is(msg.Err, oauthflow.ErrNeedsReauth):
				kind = status.KindNeedsReauth
			case errors.Is(msg.Err, tools.ErrUnresponsive):
				kind = status.KindUnresponsive
			}
			a.lose(c, msg.Err, kind)
		}
	case messages.LoginNeeded:
		a.startLogin(c, msg)
	case messages.ListChanged:
		if msg.Gen == a.gen {
			a.listChanged(c, msg.List)
		}
	case relisted:
		a.applyListing(c, msg)
	case resourcesQuiet:
		a.endResourcesInterval(c, msg)
	case messages.LoginAbandoned:
		a.abandonLogin(c, msg.Reply)
	case retryNow:
		if msg.token == a.retryToken && a.recovering {
			a.st.NextRetryAt = nil
			a.setState(status.Starting)
			a.spawnDue = true
			a.spawnSession(c)
		}
	}
}

func (a *Actor) started() {
	a.logger = a.deps.Logger.With("server", a.cfg.Name)
	a.tail = a.deps.Tails.Of(a.cfg.Name)
	// The binding emits from callers' goroutines too (a lazy output-schema
	// compile that fails at a tool's first result), so its emit reads no
	// actor state: the name is this incarnation's for its whole life.
	name, gate, bus := a.cfg.Name, a.gate, a.deps.Events
	a.binding = binding.New(name, a.logger).WithEvents(func(e events.Event) { gate.Emit(bus, withServer(e, name)) })
	a.binding.SetPolicy(binding.PolicyOf(a.cfg))
	if a.deps.Bindings != nil {
		a.deps.Bindings.Put(a.binding)
	}
	a.backoff = a.deps.Restart.Backoff()
	a.st = InitialStatus(a.cfg)
	if !a.respawn {
		// The manager emitted this state before spawning us.
		a.shown = a.st
	}
}

// InitialStatus is a server's status before its first command: starting,
// disabled, or failed when its config is invalid. The manager emits it
// (InitialState) before the actor exists, so a host never sees a
// configured server missing from the status.
func InitialStatus(cfg config.Server) status.Server {
	st := status.Server{Name: cfg.Name, State: status.Starting, Since: time.Now()}
	switch err := cfg.Validate(); {
	case err != nil:
		st.State, st.Error, st.ErrorKind = status.Failed, err.Error(), status.KindInvalidConfig
	case !cfg.Enabled:
		st.State = status.Disabled
	}
	return st
}

// InitialState is the event that shows a server's initial status.
func InitialState(cfg config.Server) events.StateChanged {
	st := InitialStatus(cfg)
	return events.StateChanged{Header: events.Header{Server: cfg.Name}, To: string(st.State), Error: st.Error, ErrorKind: st.ErrorKind}
}

func (a *Actor) connect(c actor.Context, msg messages.Connect) {
	a.epoch, a.pending, a.cfg = msg.Epoch, true, msg.Server
	a.binding.SetPolicy(binding.PolicyOf(a.cfg))
	a.userConnect = msg.User
	a.endRecovery() // a manual restart starts the backoff afresh
	a.withdraw()
	a.stopSession(c)
	if err := a.cfg.Validate(); err != nil {
		a.fail(c, err, status.KindInvalidConfig)
		return
	}
	a.st.Error, a.st.ErrorKind = "", ""
	a.setState(status.Starting)
	a.spawnDue = true
	a.spawnSession(c)
}

func (a *Actor) disable(c actor.Context, msg messages.Disable) {
	a.epoch, a.pending, a.cfg = msg.Epoch, true, msg.Server
	a.endRecovery()
	a.withdraw()
	a.stopSession(c)
	a.spawnDue = false
	a.st.Error, a.st.ErrorKind = "", ""
	a.emit(events.InstructionsChanged{}) // out of the host's prompt (the board drops it if none were shown)
	a.setState(status.Disabled)
	a.settle(c)
}

// spawnSession starts the session the last Connect asked for, unless the
// previous one is still terminating (its name would be taken).
func (a *Actor) spawnSession(c actor.Context) {
	if !a.spawnDue || a.draining != nil || a.stopping {
		return
	}
	a.spawnDue = false
	a.lists = nil // the new session's lists start afresh
	if a.staleDetail {
		// Starting → starting (a restart or an edit while connecting)
		// emits no state change, which would clear the detail: an empty
		// line says the new connect has written nothing yet. The old
		// session has terminated, and stopped showing its output when it
		// began to stop, so none of its lines follows this one.
		a.staleDetail = false
		a.emit(events.StartingOutput{Header: events.Header{Server: a.cfg.Name}})
	}
	pid, err := c.SpawnNamed(session.Props(a.deps, a.cfg, a.gen, a.tail, a.logger, a.userConnect, a.emitAny), session.Name)
	a.userConnect = false // a retry is not the user's
	if err != nil {
		a.fail(c, fmt.Errorf("spawning session: %w", err), status.KindConnectFailed)
		return
	}
	a.session = pid
	a.loggedIn = false
}

func (a *Actor) terminated(c actor.Context, who *actor.PID) {
	switch {
	case a.stopping:
	case a.draining != nil && who.Equal(a.draining):
		a.draining = nil
		a.spawnSession(c)
	case a.loginTerminated(c, who):
	case a.session != nil && who.Equal(a.session):
		// It died without reporting (a panic): nothing of it is live.
		a.session = nil
		err := errors.New("session actor stopped unexpectedly")
		a.emit(events.SessionLost{Error: err.Error()})
		a.lose(c, err, status.KindSessionLost)
	}
}

func (a *Actor) ready(c actor.Context, conn *mcpconn.Conn) {
	select {
	case <-conn.Done(): // lost before we got to publish it
		a.lose(c, conn.Err(), status.KindSessionLost)
		return
	default:
	}
	a.binding.Publish(conn)
	a.listed = conn.Tools()
	list := a.binding.Tools(conn, a.listed)
	if a.loggedIn {
		a.loggedIn = false
		a.emit(events.LoginCompleted{})
	}
	a.sessionStarted(conn)
	// Ready is emitted before the tools appear (and a loss unregisters
	// them before the state changes), so a registered tool always belongs
	// to a server that shows ready.
	a.st.Error, a.st.ErrorKind = "", ""
	a.readySince = a.deps.Now()
	a.recovering = false
	a.setState(status.Ready)
	if err := a.deps.Registry.SetServer(a.cfg.Name, list); err != nil {
		// The runtime is shutting down: nothing registers any more.
		a.binding.Withdraw()
		a.fail(c, err, status.KindConnectFailed)
		return
	}
	a.toolsChanged(list, a.binding.Filtered())
	a.settle(c)
	if conn.Capabilities().Prompts != nil {
		a.listing(mcpconn.ListPrompts).again = true
	}
	for _, list := range []string{mcpconn.ListTools, mcpconn.ListPrompts} {
		if l := a.lists[list]; l != nil && l.again {
			l.again = false
			a.listChanged(c, list)
		}
	}
}

func (a *Actor) fail(c actor.Context, err error, kind string) {
	a.withdraw()
	a.stopSession(c)
	a.spawnDue = false
	a.recovering = false
	a.setFailed(err, kind)
	a.settle(c)
}

// withdraw takes the server's tools and connection out of service.
// Unregister first, so no new call picks a tool whose session is going.
func (a *Actor) withdraw() {
	a.deps.Registry.RemoveServer(a.cfg.Name)
	a.deps.Prompts.RemoveServer(a.cfg.Name)
	a.binding.Withdraw()
	a.listed = nil
	a.toolsChanged(nil, 0)
	a.promptsChanged(nil)
}

// stopSession stops the current session and retires its generation: a
// report it sent before it stopped (a SessionReady overtaken by our own
// Stop, which is a system message) must not be taken for a live session.
func (a *Actor) stopSession(c actor.Context) {
	a.stopLogin(c) // a login belongs to the session that asked for it
	a.loginFailed(oauthflow.ErrLoginCancelled)
	a.stopRelists()
	if a.session != nil {
		c.Stop(a.session)
		a.draining, a.session = a.session, nil
		a.staleDetail = a.staleDetail || a.shown.State == status.Starting
	}
	a.gen++
}

// settle answers the manager's latest command once.
func (a *Actor) settle(c actor.Context) {
	if a.pending {
		a.pending = false
		msg := messages.ServerSettled{Name: a.cfg.Name, Epoch: a.epoch, Ready: a.st.State == status.Ready,
			Authorizing: a.st.State == status.Authorizing}
		if !msg.Ready && !msg.Authorizing {
			msg.Err = a.st.Error
		}
		c.Send(c.Parent(), msg)
	}
}

// setState moves the actor to s and emits the change, if the state or
// its error or retry time differ from what was emitted last (the board
// fills in From and Restarts).
func (a *Actor) setState(s status.State) {
	if a.st.State != s {
		a.st.Since = a.deps.Now()
	}
	a.st.State = s
	a.st.Ready = s == status.Ready
	if s == status.Ready {
		a.st.NextRetryAt = nil
	}
	prev := a.shown
	if prev.State == s && prev.Error == a.st.Error && prev.ErrorKind == a.st.ErrorKind && sameTime(prev.NextRetryAt, a.st.NextRetryAt) {
		return
	}
	a.shown = a.st
	a.staleDetail = false // the board clears the detail on every move
	e := events.StateChanged{To: string(s), Error: a.st.Error, ErrorKind: a.st.ErrorKind}
	if a.st.NextRetryAt != nil {
		e.NextRetryAt = *a.st.NextRetryAt
	}
	a.emit(e)
}

func sameTime(x, y *time.Time) bool {
	if x == nil || y == nil {
		return x == nil && y == nil
	}
	return x.Equal(*y)
}

// emit sends an event about this server.
func (a *Actor) emit(e events.Event) {
	a.gate.Emit(a.deps.Events, withServer(e, a.cfg.Name))
}

// emitAny is the emit the sessions of this incarnation are handed.
func (a *Actor) emitAny(e events.Event) { a.gate.Emit(a.deps.Events, e) }

func (a *Actor) setFailed(err error, kind string) {
	a.st.Error, a.st.ErrorKind = err.Error(), kind
	if kind == status.KindNeedsReauth {
		a.setState(status.NeedsAuth)
		return
	}
	a.setState(status.Failed)
}

// errorKind classifies an error for hosts that react to a class of failure.
func errorKind(err error) string {
	var fe *config.FieldError
	switch {
	case errors.Is(err, oauthflow.ErrNeedsReauth):
		return status.KindNeedsReauth
	case errors.Is(err, exec.ErrNotFound), errors.Is(err, fs.ErrNotExist):
		return status.KindCommandNotFound
	case errors.As(err, &fe), errors.Is(err, mcpconn.ErrUnsupported):
		return status.KindInvalidConfig
	case errors.Is(err, context.DeadlineExceeded):
		return status.KindTimeout
	default:
		return status.KindConnectFailed
	}
}
