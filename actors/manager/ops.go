package manager

import (
	"errors"
	"fmt"
	"slices"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/openprogram/mcpvisor/actors/server"
	"github.com/openprogram/mcpvisor/config"
	"github.com/openprogram/mcpvisor/events"
	"github.com/openprogram/mcpvisor/messages"
)

// edit reads the file as it is on disk now, lets change modify it and
// saves the result: a hand edit of another entry is kept, and a file that
// does not parse is never replaced (C2).
func (a *Actor) edit(change func(f *config.File) error) error {
	f, err := a.load()
	if err != nil {
		return fmt.Errorf("refusing to write the config file: %w", err)
	}
	if err := change(f); err != nil {
		return err
	}
	info, err := a.Store.SaveInfo(f)
	if err != nil {
		a.forget() // what is on disk now is not known
		return fmt.Errorf("saving the config: %w", err)
	}
	a.wrote(f, info)
	a.rejected = ""
	a.Deps.Events.Emit(events.ConfigSaved{})
	a.file = f
	a.publishConfig()
	return nil
}

// load reads the file and says when it stops or starts parsing again
// (ConfigRejected, ConfigLoaded): the board's config error follows them.
// A file that stays good, or stays bad in the same way, says nothing more.
func (a *Actor) load() (*config.File, error) {
	f, err := a.Store.Load()
	switch {
	case errors.Is(err, config.ErrUnparsable):
		if msg := err.Error(); msg != a.rejected {
			a.rejected = msg
			a.Deps.Events.Emit(events.ConfigRejected{Error: msg})
		}
	case err == nil && a.rejected != "":
		a.rejected = ""
		a.Deps.Events.Emit(events.ConfigLoaded{})
	}
	return f, err
}

func (a *Actor) live(name string) (*entry, error) {
	if e := a.servers[name]; e != nil {
		return e, nil
	}
	return nil, fmt.Errorf("%w: %q", messages.ErrUnknownServer, name)
}

// add saves a new server and starts it connecting; it does not wait for
// the connect (the status shows it).
func (a *Actor) add(c actor.Context, srv config.Server) error {
	if err := srv.Validate(); err != nil {
		return err
	}
	if a.servers[srv.Name] != nil {
		return fmt.Errorf("%w: %q", messages.ErrServerExists, srv.Name)
	}
	err := a.edit(func(f *config.File) error {
		if _, taken := f.Get(srv.Name); taken {
			return fmt.Errorf("%w: %q (in the file, not running yet; reload to start it)", messages.ErrServerExists, srv.Name)
		}
		f.Put(srv)
		return nil
	})
	if err != nil {
		return err
	}
	a.startManaged(c, srv)
	return nil
}

// startManaged connects a server a POST added, at once: one explicit
// operation on one server takes no startup slot.
func (a *Actor) startManaged(c actor.Context, srv config.Server) {
	e := a.spawn(c, srv) // good = srv
	e.managed = true
	a.publishConfig()
	e.nextUser = true
	a.command(c, e, srv)
}

// patch applies a PATCH body to the server as the file holds it. A change
// of enabled alone (or any change of a disabled server) is saved at once;
// any other change is saved only after the server restarted on it, and
// otherwise undone. reply is answered later in that case; an error
// returned here is answered by the caller.
func (a *Actor) patch(c actor.Context, name string, body []byte, reply chan<- error) error {
	e, err := a.live(name)
	if err != nil {
		return err
	}
	disk, err := a.load()
	if err != nil {
		return fmt.Errorf("refusing to write the config file: %w", err)
	}
	old, ok := disk.Get(name)
	if !ok {
		return fmt.Errorf("%w: %q is running but no longer in the file; reload first", messages.ErrUnknownServer, name)
	}
	next, err := config.ApplyPatch(old, body)
	if err != nil {
		return err
	}
	if next.Equal(old) {
		reply <- nil
		return nil
	}
	if a.retunable(e, old, next) {
		// Only the tools filter or the output caps: the running session
		// takes them on, so there is no connect to prove; save, then apply.
		if err := a.edit(func(f *config.File) error { f.Put(next); return nil }); err != nil {
			return err
		}
		if e.waitsTurn() {
			// Nothing runs for it (its actor died while it waited): its
			// turn starts it on the file, saved now. Taking it out of its
			// turn here would leave it to nothing.
			reply <- nil
			return nil
		}
		e.managed = true
		a.retune(c, e, next, reply)
		return nil
	}
	if e.waitsTurn() {
		// Its startup turn has not come: the file as it is now counts
		// (L3), as at the turn, also for a PATCH that fails or is not
		// saved (as for restart), not what startup read.
		e.good = old
	}
	e.managed = true
	toggled := old.Clone()
	toggled.Enabled = next.Enabled
	if next.Equal(toggled) || !next.Enabled {
		// Nothing to prove by connecting first: save, then apply.
		if err := a.edit(func(f *config.File) error { f.Put(next); return nil }); err != nil {
			return err
		}
		e.good = next
		if next.Enabled {
			// Answer without waiting for the connect, showing it begun
			// (before the command: the actor's own updates come after).
			a.Deps.Events.Emit(server.InitialState(next))
			e.nextUser = true
			a.command(c, e, next)
			reply <- nil
			return nil
		}
		e.nextUser = true
		a.command(c, e, next)
		// A disable settles at once; answer when the entry shows it. The
		// change is saved already, so whatever interrupts the wait (a later
		// change, the actor dying and coming back on it) it took effect.
		e.waiting = func(messages.ServerSettled, error) { reply <- nil }
		return nil
	}
	running := e.good
	e.nextUser = true
	a.command(c, e, next)
	e.waiting = func(res messages.ServerSettled, interrupted error) {
		switch {
		case interrupted != nil:
			reply <- fmt.Errorf("patching %q: %w", name, interrupted)
		case res.Ready, res.Authorizing: // a login pending is the user's part
			if err := a.edit(func(f *config.File) error { f.Put(next); return nil }); err != nil {
				a.command(c, e, running)
				reply <- err
				return
			}
			e.good = next
			reply <- nil
		default:
			a.command(c, e, running) // back on the previous config
			reply <- fmt.Errorf("%w: %s; %q runs on its previous config again and the file is unchanged", messages.ErrRestartFailed, res.Err, name)
		}
	}
	return nil
}

// retunable says whether the server of e, running cur, can take on next
// without a restart (a Retune): next differs from cur only in the tools
// filter and the output caps, both are enabled and valid (a server failed
// on a bad glob restarts once it is fixed; a bad one read by a reload
// fails it), and the server runs what it was last told to (a command of
// its, cur, with no operation waiting on it: an unsaved PATCH's restart
// is superseded by a restart instead, which keeps the rule that a PATCH
// is saved only once it runs).
func (a *Actor) retunable(e *entry, cur, next config.Server) bool {
	return e.epoch != 0 && e.waiting == nil && cur.Enabled && next.Enabled &&
		e.cfg.Equal(cur) && next.Equal(cur.WithLive(next)) &&
		cur.Validate() == nil && next.Validate() == nil
}

// retune gives the server of e next, a config retunable says it takes on
// without a restart, and answers reply (if not nil) once the actor has
// re-registered its tools on it, so that what the caller reads next shows
// the change. An actor that is not there starts on it: by the respawn
// pending, once a removed actor of its name is gone, or else now (its
// spawn failed): a retune never leaves a server with nothing to start it.
func (a *Actor) retune(c actor.Context, e *entry, next config.Server, reply chan<- error) {
	e.cfg, e.good = next, next
	if e.pid == nil {
		if e.respawnTimer == nil && a.dying[e.name] == nil {
			a.command(c, e, next)
		}
		if reply != nil {
			reply <- nil
		}
		return
	}
	c.Send(e.pid, messages.Retune{Server: next})
	e.retunes = append(e.retunes, reply) // nil too: Retuned answers in order
}

// retuned answers the oldest Retune the actor of e has taken on.
func (a *Actor) retuned(e *entry) {
	if e == nil || len(e.retunes) == 0 {
		return
	}
	reply := e.retunes[0]
	e.retunes = e.retunes[1:]
	if reply != nil {
		reply <- nil
	}
}

// flushRetunes answers every Retune still waiting for the actor of e,
// which is gone or going: the change is saved, and the next incarnation
// (if any) starts on it.
func (a *Actor) flushRetunes(e *entry) {
	for len(e.retunes) > 0 {
		a.retuned(e)
	}
}

// remove removes a server from the file, stops it and answers once its
// actor terminated and its processes are gone (within the grace periods),
// so no tool of it is registered and no process of it runs any more.
func (a *Actor) remove(c actor.Context, name string, reply chan<- error) error {
	e, err := a.live(name)
	if err != nil {
		return err
	}
	if err := a.edit(func(f *config.File) error { f.Remove(name); return nil }); err != nil {
		return err
	}
	forget := a.forgetLogin(name)
	e.onGone = func() {
		forget()
		reply <- e.goneErr
	}
	a.drop(c, e)
	a.publishConfig()
	return nil
}

// restart reconnects a server on its current config and answers once the
// new session is ready or failed.
func (a *Actor) restart(c actor.Context, name string, reply chan<- error) error {
	e, err := a.live(name)
	if err != nil {
		return err
	}
	target := e.good
	if e.waitsTurn() {
		// Its startup turn has not come (its actor may have died
		// meanwhile): the file as it is now counts (L3), as at the turn.
		if srv, ok, _ := a.persisted(name); ok {
			target = srv
		}
	}
	if !target.Enabled {
		return fmt.Errorf("%w: %q; enable it with a PATCH of enabled", messages.ErrDisabled, name)
	}
	e.managed = true
	e.good = target
	e.nextUser = true
	a.command(c, e, target)
	e.waiting = func(_ messages.ServerSettled, interrupted error) {
		if interrupted != nil {
			reply <- fmt.Errorf("restarting %q: %w", name, interrupted)
			return
		}
		reply <- nil // the entry shows ready or failed
	}
	return nil
}

// reload re-reads the file and applies the differences to the running set.
func (a *Actor) reload(c actor.Context) messages.ReloadResult {
	f, err := a.load()
	a.forget() // a reload always reads; the next turn reads again once
	if err != nil {
		return messages.ReloadResult{Err: err}
	}
	a.file = f
	var res messages.ReloadResult
	for name, e := range a.servers {
		if _, ok := f.Get(name); !ok {
			res.Removed = append(res.Removed, name)
			e.onGone = a.forgetLogin(name)
			a.drop(c, e)
		}
	}
	slices.Sort(res.Removed)
	for _, srv := range f.Servers {
		e := a.servers[srv.Name]
		switch {
		case e == nil:
			res.Added = append(res.Added, srv.Name)
			a.startBulk(c, a.spawn(c, srv), srv)
		case e.waitsTurn() && !e.good.Equal(srv):
			// Its turn is still to come and reads the file as it is then;
			// only a change that starts nothing waits for none.
			if e.pid != nil && e.epoch != 0 && e.cfg.Equal(srv) {
				e.managed, e.good = true, srv // back to what it runs: no turn needed
				break
			}
			if srv.Equal(e.good.WithLive(srv)) {
				res.Updated = append(res.Updated, srv.Name)
			} else {
				res.Restarted = append(res.Restarted, srv.Name)
			}
			a.startBulk(c, e, srv)
		case e.waitsTurn(), e.cfg.Equal(srv):
		case a.retunable(e, e.cfg, srv):
			res.Updated = append(res.Updated, srv.Name)
			e.managed = true
			a.retune(c, e, srv, nil)
		default:
			res.Restarted = append(res.Restarted, srv.Name)
			a.startBulk(c, e, srv)
		}
	}
	a.publishConfig()
	a.nextTurn(c)
	return res
}

// startBulk starts e on srv for a reload. A connect waits for a startup
// turn, after those queued already, so a reload that adds or changes many
// servers connects StartupConcurrency of them at once, like startup; a
// server whose startup turn runs keeps its slot and connects now. A
// disable or an invalid config starts nothing and is applied at once.
// An operation waiting on a server that queues is superseded.
func (a *Actor) startBulk(c actor.Context, e *entry, srv config.Server) {
	prev := e.good
	e.good = srv
	e.nextUser = true
	if e.inTurn || !srv.Enabled || srv.Validate() != nil {
		e.managed = true
		a.command(c, e, srv)
		return
	}
	// An operation still waiting on e (a PATCH's or a restart's connect)
	// is replaced by what the turn starts: left waiting, a PATCH would
	// save over the file the reload read, or undo itself outside the
	// slots.
	if e.waiting != nil && e.epoch != 0 && !e.cfg.Equal(prev) {
		// A PATCH's connect, on a config that was never saved: until its
		// turn the server goes back to the config it ran before, as a
		// server the reload restarts keeps its session until its turn,
		// rather than serve what the file does not hold.
		a.command(c, e, prev) // supersedes the PATCH
	}
	a.supersede(e, messages.ErrSuperseded)
	e.managed = false // the runtime's turn starts it
	a.queue(e)
}

// forgetLogin deletes a removed server's stored OAuth login once its actor
// is gone (its connection can no longer store anything): a server added
// later under the same name must not inherit someone's tokens.
func (a *Actor) forgetLogin(name string) func() {
	return func() {
		if err := a.Deps.Tokens.Delete(name); err != nil {
			a.Deps.Logger.Warn("deleting the stored login failed", "server", name, "error", err)
		}
	}
}
