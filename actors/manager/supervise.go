package manager

import (
	"context"
	"fmt"
	"strings"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/openprogram/mcpvisor/events"
	"github.com/openprogram/mcpvisor/internal/mcpconn"
	"github.com/openprogram/mcpvisor/messages"
	"github.com/openprogram/mcpvisor/status"
)

// Supervision of the server actors (V2): a removed server's actor ends
// for good; one that died on its own is respawned after a backoff, fresh,
// on the server's settled config.

// terminated handles the end of a server actor: the expected end of a
// removed one, or a death of its own (its tools went with it; its status
// must not keep claiming otherwise).
func (a *Actor) terminated(c actor.Context, who *actor.PID) {
	// A server actor's id is the manager's id, "/" and the server's name:
	// find its record without scanning them all (10 000 servers stop at
	// shutdown).
	name, ok := strings.CutPrefix(who.Id, c.Self().Id+"/")
	if !ok {
		return
	}
	if e := a.dying[name]; e != nil && e.pid != nil && e.pid.Equal(who) {
		e.pid = nil
		a.retire(c, e)
		return
	}
	e := a.servers[name]
	if e == nil || e.pid == nil || !e.pid.Equal(who) {
		return
	}
	e.pid = nil
	a.flushRetunes(e)
	if !a.stopping {
		// What the dead incarnation's connection still says is not the
		// server's any more: the respawned one gets a gate of its own.
		e.gate.Close()
		a.scheduleRespawn(c, e)
		a.endTurn(c, e)
	}
}

// processesGone tells the manager that a removed server's processes are
// gone (or the wait for them gave up).
type processesGone struct {
	name  string
	epoch uint64
	ok    bool // false: some still ran when the bound ran out
}

// retire finishes a removal once the server's actor terminated: it waits,
// off the mailbox, until the server's processes are gone too (its
// session's Close stops them in the background), so that the removal is
// answered when nothing of the server runs any more, and a server added
// under the same name meanwhile starts only then. The wait is bounded by
// the stop sequence's own bound (mcpconn.StopBound); past it the removal
// is answered with ErrProcessesLinger and a warning is logged. While the
// manager stops, it finishes at once, without waiting (Shutdown kills
// what is left).
func (a *Actor) retire(c actor.Context, e *entry) {
	if a.stopping {
		a.retired(c, e, true)
		return
	}
	root, self, tracker := c.ActorSystem().Root, c.Self(), a.Deps.Procs
	name, epoch, bound := e.name, e.epoch, mcpconn.StopBound(a.Deps.Grace)
	a.Deps.Work.Go(func() {
		ctx, cancel := context.WithTimeout(context.Background(), bound)
		defer cancel()
		ok := tracker.WaitOwner(ctx, name)
		root.Send(self, processesGone{name: name, epoch: epoch, ok: ok})
	})
}

// retired answers a removal and frees its name; gone tells whether the
// server's processes were all gone.
func (a *Actor) retired(c actor.Context, e *entry, gone bool) {
	if !gone {
		a.Deps.Logger.Warn("removed server's processes still run after the stop sequence's bound", "server", e.name)
		e.goneErr = fmt.Errorf("%q %w", e.name, messages.ErrProcessesLinger)
	}
	delete(a.dying, e.name)
	if e.onGone != nil {
		e.onGone()
		e.onGone = nil
	}
	if a.stopping {
		return
	}
	if a.Deps.Freed != nil {
		a.Deps.Freed(e.name)
	}
	// A server of the same name added meanwhile shows its initial state
	// (the removed actor's events stopped at its ServerRemoved).
	if next := a.servers[e.name]; next != nil {
		a.ensureActor(c, next)
		a.deliver(c, next)
	}
}

// respawnServer is the respawn timer's message to the manager.
type respawnServer struct {
	name  string
	epoch uint64
}

// scheduleRespawn gives a server whose actor died on its own (a panic, an
// outside Stop or Poison) a fresh actor after a backoff. Its tools and
// session went with the old actor; what waited on it is answered.
func (a *Actor) scheduleRespawn(c actor.Context, e *entry) {
	a.supersede(e, messages.ErrServerDied)
	e.died = true
	a.epochs++
	e.epoch = a.epochs
	e.cfg = e.good // a respawn runs the settled config
	if e.waitsTurn() && e.good.Enabled {
		// Its startup turn spawns it, within the slots: no timer.
		a.showWaiting(e)
		return
	}
	policy := a.Deps.Restart
	if e.respawns == nil {
		e.respawns = policy.Backoff()
	}
	if a.Deps.Since(e.spawnedAt) >= policy.ResetAfter {
		e.respawns.Reset()
	}
	delay := e.respawns.NextBackOff()
	next := a.Deps.Now().Add(delay)
	h := events.Header{Server: e.name}
	if !e.good.Enabled {
		// Nothing runs for a disabled server: show it so at once; the
		// respawned actor takes over the same state.
		a.Deps.Events.Emit(events.StateChanged{Header: h, To: string(status.Disabled)})
		a.command(c, e, e.good)
		return
	}
	a.Deps.Events.Emit(events.StateChanged{Header: h, To: string(status.Backoff),
		Error: messages.ErrServerDied.Error(), ErrorKind: status.KindSessionLost, NextRetryAt: next})
	root, self, msg := c.ActorSystem().Root, c.Self(), respawnServer{name: e.name, epoch: e.epoch}
	e.respawnTimer = a.Deps.AfterFunc(delay, func() { root.Send(self, msg) })
}

// respawn runs when the timer fires, unless a command respawned the actor
// meanwhile or the server was removed. A server a reload queued for a
// startup turn since is left to it, so the respawn takes no connect
// outside the slots.
func (a *Actor) respawn(c actor.Context, msg respawnServer) {
	e := a.servers[msg.name]
	if e == nil || e.epoch != msg.epoch || e.pid != nil {
		return
	}
	e.respawnTimer = nil
	if e.waitsTurn() { // a reload queued it since it died
		a.showWaiting(e)
		return
	}
	a.command(c, e, e.good)
}

// showWaiting shows a server whose actor died while it waits for its
// startup turn: in backoff, with no retry time (no timer is set: the turn
// spawns it, within the slots), the error saying so.
func (a *Actor) showWaiting(e *entry) {
	a.Deps.Events.Emit(events.StateChanged{Header: events.Header{Server: e.name}, To: string(status.Backoff),
		Error: messages.ErrServerDied.Error() + "; it starts again at its startup turn", ErrorKind: status.KindSessionLost})
}

// spawnFailed is what ensureActor tells itself when a server's actor
// could not be spawned.
type spawnFailed struct {
	name  string
	epoch uint64
	err   error
}

// spawnFailed shows a server whose actor could not be spawned as failed
// (nothing runs for it) and answers what waited on it, so that neither
// the status nor a caller waits for an actor that does not exist.
func (a *Actor) spawnFailed(c actor.Context, msg spawnFailed) {
	e := a.servers[msg.name]
	if e == nil || e.pid != nil || e.epoch != msg.epoch {
		return // removed, or a later attempt replaced this one
	}
	a.Deps.Events.Emit(events.StateChanged{Header: events.Header{Server: e.name}, To: string(status.Failed),
		Error: msg.err.Error(), ErrorKind: status.KindConnectFailed})
	a.supersede(e, msg.err)
	a.endTurn(c, e)
}
