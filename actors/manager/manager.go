// Package manager is the root actor of a Runtime and the only writer of the
// server set and of the config file. It spawns one server actor per
// configured server, runs startup (enabled servers connect in file order,
// one after another or up to Options.StartupConcurrency at once, each
// bounded by its own timeout_seconds) and serialises every management
// operation (add, patch, remove, restart, reload).
//
// Contract:
//   - The manager's protocol is messages.ManagerRequest, a closed set of
//     requests that each carry their reply channel, plus the server
//     actors' ServerSettled and Retuned. Each request is answered exactly
//     once, also while the manager stops (ErrShuttingDown); a message it
//     has no case for is logged as a bug and, if it is a messages.Request,
//     failed.
//   - The mailbox never waits for a connect: a command to a server actor
//     is answered later by ServerSettled, and what must happen then (the
//     next startup turn, saving a PATCH, answering the caller) waits in
//     the server's record, keyed by the command's epoch.
//   - Every command to a server bumps its epoch. An answer for an older
//     epoch is ignored, so a connect that completes after a later delete,
//     disable or restart never counts; an operation still waiting when a
//     later one replaces it is answered with ErrSuperseded.
//   - When startup reaches a server it looks at the file as it is now
//     (L3): a server deleted meanwhile is not started, a disabled one
//     stays disabled, and one a management call already took over is left
//     alone. A turn costs O(1) amortised: the file is read and parsed only
//     when it changed (its identity, see onDisk; the manager's own saves
//     are known without a read), and the config is republished only when
//     the turn changed it.
//   - Each startup turn is a message of its own (startupTurn), so a long
//     run of disabled or failing entries never holds the mailbox:
//     management operations and the stop interleave with startup.
//   - Turns begin in file order. A turn that connects holds one of the
//     StartupConcurrency slots until its connect settles (ready, failed,
//     or waiting for the user's OAuth login: a login holds no slot), or a
//     removal or the actor's death ends it; a turn that starts nothing
//     (deleted, disabled, invalid) holds none. A restart, PATCH or reload
//     of a server in its turn keeps the slot for the new command, until
//     that settles. What a reload adds or restarts waits for a turn too,
//     after those queued already (an operation still waiting on such a
//     server is superseded); an explicit add or restart of one server
//     connects at once, without a slot. A server whose actor dies while
//     it waits for its turn is respawned by the turn, not by a timer, and
//     a PATCH that the running session would take on (filter, caps)
//     leaves it waiting: nothing else would start it.
//   - The file is written only here, synchronously (a small file and an
//     fsync); connects, calls and process stops never run in this mailbox.
//   - A removal is answered, and its name is free again, only once the
//     server's actor terminated and its processes are gone (Deps.Procs;
//     the wait runs off the mailbox and is bounded by the grace periods).
//   - A failed server actor is stopped by the supervision strategy, never
//     restarted in place. Stopped closes the Done channel handed in.
package manager

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/cenkalti/backoff/v5"
	"github.com/jonboulle/clockwork"

	"github.com/openprogram/mcpvisor/actors"
	"github.com/openprogram/mcpvisor/actors/server"
	"github.com/openprogram/mcpvisor/config"
	"github.com/openprogram/mcpvisor/events"
	"github.com/openprogram/mcpvisor/messages"
)

// Name is the manager's actor name.
const Name = "manager"

// Options are what the manager is started with.
type Options struct {
	Deps  *actors.Deps
	Store config.Store
	// File is the config loaded at start; nil if it did not parse (then
	// every write is refused until a reload finds it parseable).
	File *config.File
	// Ready is called once every configured server is in the status board
	// and has its actor (again by a later incarnation, if any).
	Ready func()
	// StartupConcurrency is how many connects of startup turns (startup,
	// and what a reload adds or restarts) may wait at once; 1 or less is
	// one after another (the runtime resolves its default).
	StartupConcurrency int
	// Done is closed once the manager and all its children have stopped.
	Done chan<- struct{}
}

// Props returns the manager's props.
func Props(opts Options) *actor.Props {
	return actors.Props(opts.Deps, func() actor.Actor {
		return &Actor{Options: opts}
	})
}

// Actor is the manager.
type Actor struct {
	Options

	file     *config.File // the file as last read or written; nil: unparsable
	epochs   uint64       // the last epoch handed out
	servers  map[string]*entry
	dying    map[string]*entry // removed servers whose actor or processes are not gone yet (pid nil: the processes)
	startup  []string          // servers still waiting for their startup turn
	turns    int               // startup turns whose connect has not settled (entry.inTurn)
	queued   bool              // a startupTurn is in the mailbox
	disk     onDisk            // the file as last read from or written to disk
	diskPos  positions         // index of disk.file
	filePos  positions         // index of file; reset when its list changes
	stopping bool
	// rejected is the error of the last ConfigRejected emitted while the
	// file still does not parse; "" once it is good again.
	rejected string
}

// startupTurn is the manager's message to itself that runs the next
// startup turn; one is queued at a time.
type startupTurn struct{}

// entry is the manager's record of one server.
type entry struct {
	name string
	cfg  config.Server // what the actor was last told to run
	// good is the last config that is settled: persisted, or what startup,
	// add or reload gave it. A restart, the undoing of a failed PATCH and
	// a respawn go back to it, never to an unsaved PATCH's config.
	good    config.Server
	pid     *actor.PID   // nil once the actor is gone
	gate    *actors.Gate // of the actor's incarnation, retired at a removal
	epoch   uint64       // unique across the manager, never reused by a later entry
	managed bool         // a management call took it over: startup leaves it alone
	// onGone answers a removal once the actor terminated and the server's
	// processes are gone: its tools are gone by then (its Stopping
	// withdraws them).
	onGone func()
	// goneErr is what a removal is answered with: nil, or
	// ErrProcessesLinger when its processes outlived the wait.
	goneErr error
	// Respawn of an actor that died on its own (V2): after a backoff,
	// reset once an incarnation lived for the policy's ResetAfter.
	respawns     *backoff.ExponentialBackOff
	respawnTimer clockwork.Timer
	spawnedAt    time.Time
	// waiting is the operation that completes on the ServerSettled of
	// epoch (a PATCH's restart, a restart), or is interrupted (superseded,
	// shutting down, the server actor died) with a non-nil error.
	waiting func(res messages.ServerSettled, interrupted error)
	// user marks the current command as the user's (see Connect.User);
	// nextUser makes the next command the user's.
	user, nextUser bool
	// died: the last actor died on its own and the board shows what the
	// manager emitted for it, so the next actor emits its first state.
	died bool
	// inTurn: its startup turn waits for its connect, holding a slot.
	inTurn bool
	// queued: it is in the manager's startup list, waiting for its turn.
	queued bool
	// retunes are the replies (nil for none) of the Retunes sent to the
	// actor and not answered by a Retuned yet, oldest first.
	retunes []chan<- error
}

// Receive reads top to bottom: the actor's lifecycle, the requests from
// outside the tree (messages.ManagerRequest, each answered on its Reply),
// the server actors' reports, then the manager's own messages. Anything
// else is a bug: it is logged with its type and, if it carries a reply
// path, failed with messages.ErrUnhandled, so nothing waits for it.
func (a *Actor) Receive(c actor.Context) {
	switch msg := c.Message().(type) {
	// Lifecycle.
	case *actor.Started:
		a.start(c)
	case *actor.Stopping:
		a.beginStop(c)
	case *actor.Stopped:
		close(a.Done)
	case *actor.Terminated:
		a.terminated(c, msg.Who)

	// Requests. Operations are refused while the manager stops (user
	// messages still run while the children stop); Kill and Describe are
	// answered until the end.
	case messages.AddServer:
		if a.accepts(msg) {
			msg.Reply <- a.add(c, msg.Server)
		}
	case messages.PatchServer:
		if a.accepts(msg) {
			a.answerLater(msg, a.patch(c, msg.Name, msg.Patch, msg.Reply))
		}
	case messages.RemoveServer:
		if a.accepts(msg) {
			a.answerLater(msg, a.remove(c, msg.Name, msg.Reply))
		}
	case messages.RestartServer:
		if a.accepts(msg) {
			a.answerLater(msg, a.restart(c, msg.Name, msg.Reply))
		}
	case messages.Reload:
		if a.accepts(msg) {
			msg.Reply <- a.reload(c)
		}
	case messages.Kill:
		a.kill(c, msg)
	case messages.Describe:
		msg.Reply <- a.describe()

	// Reports of the server actors.
	case messages.ServerSettled:
		a.settled(c, msg)
	case messages.Retuned:
		a.retuned(a.servers[msg.Name])

	// The manager's own timers and background work.
	case startupTurn:
		a.queued = false
		if !a.stopping {
			a.takeTurn(c)
		}
	case respawnServer:
		if !a.stopping {
			a.respawn(c, msg)
		}
	case spawnFailed:
		a.spawnFailed(c, msg)
	case processesGone:
		if e := a.dying[msg.name]; e != nil && e.pid == nil && e.epoch == msg.epoch {
			a.retired(c, e, msg.ok)
		}

	default:
		a.unhandled(msg)
	}
}

// beginStop refuses what waits and stops the timers; the children stop
// on their own (Stopping precedes theirs).
func (a *Actor) beginStop(c actor.Context) {
	a.stopping = true
	for _, e := range a.dying {
		if e.pid == nil { // its processes were being waited for
			a.retired(c, e, true)
		}
	}
	for _, e := range a.servers {
		a.supersede(e, messages.ErrShuttingDown)
		a.flushRetunes(e)
		if e.respawnTimer != nil {
			e.respawnTimer.Stop()
		}
	}
}

// accepts tells whether an operation may run now, and otherwise answers
// it with ErrShuttingDown.
func (a *Actor) accepts(req messages.Request) bool {
	if a.stopping {
		req.Fail(messages.ErrShuttingDown)
		return false
	}
	return true
}

// answerLater answers req with err if the operation failed at once;
// otherwise the operation answers it when it completes.
func (a *Actor) answerLater(req messages.Request, err error) {
	if err != nil {
		req.Fail(err)
	}
}

// kill injects a failure into a server actor, or has it inject one into
// its session.
func (a *Actor) kill(c actor.Context, msg messages.Kill) {
	e := a.servers[msg.Server]
	switch {
	case e == nil:
		msg.Fail(fmt.Errorf("%w: %q", messages.ErrUnknownServer, msg.Server))
	case e.pid == nil:
		msg.Fail(fmt.Errorf("server %q has no actor right now", msg.Server))
	case msg.Target == "server":
		msg.Reply <- actors.Inject(c, e.pid, msg.How)
	default:
		c.Send(e.pid, msg) // the server actor knows its session
	}
}

// describe is the manager's node of the live tree: its children in
// config order.
func (a *Actor) describe() messages.Description {
	d := messages.Description{Kind: "manager", State: "running"}
	if a.stopping {
		d.State = "stopping"
	}
	for _, srv := range a.Deps.Config.Load().Servers {
		if e := a.servers[srv.Name]; e != nil && e.pid != nil {
			d.Children = append(d.Children, e.pid)
		}
	}
	return d
}

// unhandled logs a message the manager has no case for: a bug in the
// sender. A request among them is failed, so its sender does not wait.
func (a *Actor) unhandled(msg any) {
	a.Deps.Logger.Error("manager: unhandled message (a bug)", "type", fmt.Sprintf("%T", msg))
	if req, ok := msg.(messages.Request); ok {
		req.Fail(fmt.Errorf("manager: %w: %T", messages.ErrUnhandled, msg))
	}
}

func (a *Actor) start(c actor.Context) {
	a.servers = map[string]*entry{}
	a.dying = map[string]*entry{}
	a.file = a.File
	if a.file == nil {
		a.rejected = "(rejected at start)" // Start emitted the ConfigRejected
	}
	running := a.file
	if running == nil {
		running = &config.File{}
	}
	for _, srv := range running.Servers {
		a.queue(a.spawn(c, srv))
	}
	a.publishConfig()
	a.Ready()
	a.nextTurn(c)
}

// spawn records a server and creates its actor (at once, or as soon as a
// removed actor of the same name terminated), and emits its arrival and
// initial state.
func (a *Actor) spawn(c actor.Context, srv config.Server) *entry {
	e := &entry{name: srv.Name, cfg: srv, good: srv}
	a.servers[srv.Name] = e
	a.Deps.Events.Emit(events.ServerAdded{Header: events.Header{Server: srv.Name}})
	a.Deps.Events.Emit(server.InitialState(srv))
	a.ensureActor(c, e)
	return e
}

// ensureActor gives a server an actor if it has none and its name is free.
func (a *Actor) ensureActor(c actor.Context, e *entry) {
	if e.pid != nil || a.dying[e.name] != nil || a.stopping {
		return
	}
	gate := &actors.Gate{}
	pid, err := c.SpawnNamed(server.Props(a.Deps, e.cfg, e.died, gate), e.name)
	if err != nil {
		// Said once the current message is handled, so that the operation
		// that asked for this actor is waiting by then and gets the error.
		c.Send(c.Self(), spawnFailed{name: e.name, epoch: e.epoch, err: fmt.Errorf("spawning server actor: %w", err)})
		return
	}
	e.pid, e.gate = pid, gate
	e.died = false
	e.spawnedAt = a.Deps.Now()
}

// command gives a server its next config to run, replacing whatever it was
// doing: a waiting operation is superseded. A startup turn on it goes on:
// its slot stays with the entry until the new command settles (a disable
// and an invalid config settle at once), so a restart, PATCH or reload
// during a turn never lets one more connect run than there are slots.
func (a *Actor) command(c actor.Context, e *entry, srv config.Server) {
	a.supersede(e, messages.ErrSuperseded)
	a.epochs++
	e.epoch = a.epochs
	e.cfg = srv
	e.user, e.nextUser = e.nextUser, false
	if e.respawnTimer != nil {
		e.respawnTimer.Stop() // spawned now instead
		e.respawnTimer = nil
	}
	a.ensureActor(c, e)
	a.deliver(c, e)
}

// deliver sends the server actor the command of the current epoch. An
// entry still waiting for its actor gets it when the actor is spawned.
func (a *Actor) deliver(c actor.Context, e *entry) {
	switch {
	case e.pid == nil || e.epoch == 0:
	case e.cfg.Enabled:
		c.Send(e.pid, messages.Connect{Epoch: e.epoch, Server: e.cfg, User: e.user})
	default:
		c.Send(e.pid, messages.Disable{Epoch: e.epoch, Server: e.cfg})
	}
}

// supersede interrupts a waiting operation with err.
func (a *Actor) supersede(e *entry, err error) {
	if w := e.waiting; w != nil {
		e.waiting = nil
		w(messages.ServerSettled{Name: e.name, Epoch: e.epoch}, err)
	}
}

func (a *Actor) settled(c actor.Context, msg messages.ServerSettled) {
	e := a.servers[msg.Name]
	if e == nil || e.pid == nil || msg.Epoch != e.epoch {
		return // an answer to a command that was replaced since
	}
	if w := e.waiting; w != nil {
		e.waiting = nil
		w(msg, nil)
	}
	if e.epoch == msg.Epoch { // not when the wait gave a new command (a PATCH undone): that one holds the slot
		a.endTurn(c, e)
	}
}

// endTurn ends e's startup turn, if one holds a slot, and lets the next
// server have it.
func (a *Actor) endTurn(c actor.Context, e *entry) {
	if e.inTurn {
		e.inTurn = false
		a.turns--
		a.nextTurn(c)
	}
}

// slotFree tells whether another startup turn may begin.
func (a *Actor) slotFree() bool {
	return a.turns < max(a.StartupConcurrency, 1)
}

// nextTurn queues the next startup turn, unless no slot is free or one is
// queued: each turn is a message of its own, behind whatever the mailbox
// holds.
func (a *Actor) nextTurn(c actor.Context) {
	if !a.slotFree() || a.queued || len(a.startup) == 0 || a.stopping {
		return
	}
	a.queued = true
	c.Send(c.Self(), startupTurn{})
}

// queue gives e a startup turn after those already waiting: the
// servers in the file at start, and those a reload adds or changes.
func (a *Actor) queue(e *entry) {
	if !e.queued {
		e.queued = true
		a.startup = append(a.startup, e.name)
	}
}

// waitsTurn tells whether e waits for a startup turn that will start it:
// no management call took it over since it was queued.
func (e *entry) waitsTurn() bool { return e.queued && !e.managed }

// takeTurn gives the next server its startup turn, on the file as it is
// now (L3): what was deleted, disabled or changed meanwhile counts.
func (a *Actor) takeTurn(c actor.Context) {
	if !a.slotFree() || len(a.startup) == 0 {
		return
	}
	name := a.startup[0]
	a.startup = a.startup[1:]
	e := a.servers[name]
	if e != nil {
		e.queued = false
	}
	if e == nil || e.managed {
		a.nextTurn(c)
		return
	}
	srv, ok, changed := a.persisted(name)
	if !ok { // deleted from the file by hand since start (or its reload)
		if a.file != nil {
			a.file.Remove(name)
			a.filePos = positions{}
		}
		e.onGone = a.forgetLogin(name)
		a.drop(c, e)
		a.publishConfig()
		a.nextTurn(c)
		return
	}
	e.good = srv
	a.command(c, e, srv)
	if srv.Enabled && srv.Validate() == nil {
		e.inTurn = true
		a.turns++
	}
	if changed {
		a.publishConfig()
	}
	a.nextTurn(c)
}

// persisted returns a server as the file holds it now, falling back to the
// last good read when the file does not parse. changed reports that the
// running file (a.file) was updated to it.
func (a *Actor) persisted(name string) (srv config.Server, ok, changed bool) {
	f, err := a.current()
	if err != nil {
		if a.file == nil {
			return config.Server{}, false, false
		}
		srv, ok = a.filePos.get(a.file, name)
		return srv, ok, false
	}
	srv, ok = a.diskPos.get(f, name)
	if ok && a.file != nil {
		if cur, had := a.filePos.get(a.file, name); !had || !cur.Equal(srv) {
			a.file.Put(srv)
			a.filePos = positions{}
			changed = true
		}
	}
	return srv, ok, changed
}

// drop removes a server from the running set: its tools go at once, its
// actor is stopped, and its name is free again once the actor terminated
// and its processes are gone (retire).
func (a *Actor) drop(c actor.Context, e *entry) {
	a.supersede(e, messages.ErrSuperseded)
	a.flushRetunes(e)
	if e.respawnTimer != nil {
		e.respawnTimer.Stop()
		e.respawnTimer = nil
	}
	delete(a.servers, e.name)
	a.Deps.Registry.RemoveServer(e.name)
	a.Deps.Tails.Forget(e.name)
	// Nothing of the old incarnation follows its removal: not its
	// Stopping's "stopped", not a late log line of its connection.
	if a.Deps.Gone != nil {
		a.Deps.Gone(e.name) // its last word goes before its removal
	}
	removed := events.ServerRemoved{Header: events.Header{Server: e.name}}
	if e.gate != nil {
		e.gate.Retire(a.Deps.Events, removed)
	} else {
		a.Deps.Events.Emit(removed)
	}
	switch {
	case e.pid != nil:
		c.Stop(e.pid)
		a.dying[e.name] = e
	case a.dying[e.name] == nil:
		// Its actor died on its own; its processes may still be stopping.
		a.dying[e.name] = e
		a.retire(c, e)
	case e.onGone != nil:
		e.onGone() // never had an actor: an older one of the name still goes
	}
	a.startup = slices.DeleteFunc(a.startup, func(n string) bool { return n == e.name })
	a.endTurn(c, e)
}

// publishConfig publishes the configured servers (in file order) for the
// runtime's readers.
func (a *Actor) publishConfig() {
	var list []config.Server
	listed := map[string]bool{}
	if a.file != nil {
		for _, srv := range a.file.Servers {
			if a.servers[srv.Name] != nil {
				list = append(list, srv)
				listed[srv.Name] = true
			}
		}
	}
	// Servers running but not in the file (the file stopped parsing after
	// start) are still shown, after the others, by name.
	var extra []config.Server
	for _, e := range a.servers {
		if !listed[e.name] {
			extra = append(extra, e.cfg)
		}
	}
	slices.SortFunc(extra, func(x, y config.Server) int { return strings.Compare(x.Name, y.Name) })
	list = append(list, extra...)
	a.Deps.Config.Store(&config.File{Servers: list})
}
