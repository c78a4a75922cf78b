package manager

import (
	"errors"
	"fmt"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/openprogram/mcpvisor/config"
	"github.com/openprogram/mcpvisor/messages"
)

// errUnparsable is answered to every write while the file does not parse:
// the file must never be replaced by a save then (C2).
func (a *Actor) writable() error {
	if a.file != nil {
		return nil
	}
	_, err := a.Store.Load()
	if err == nil {
		err = errors.New("the file changed since it last failed to parse; reload it first")
	}
	return fmt.Errorf("refusing to write the config file: %w", err)
}

// save writes f and makes it the manager's view of the file.
func (a *Actor) save(f *config.File) error {
	if err := a.Store.Save(f); err != nil {
		return fmt.Errorf("saving the config: %w", err)
	}
	a.file = f
	a.publishConfig()
	return nil
}

func (a *Actor) live(name string) (*entry, error) {
	e := a.servers[name]
	if e == nil || e.dying {
		return nil, fmt.Errorf("%w: %q", messages.ErrUnknownServer, name)
	}
	return e, nil
}

// add saves a new server and starts it connecting; it does not wait for
// the connect (the status shows it).
func (a *Actor) add(c actor.Context, srv config.Server) error {
	if err := a.writable(); err != nil {
		return err
	}
	if err := srv.Validate(); err != nil {
		return err
	}
	if old := a.servers[srv.Name]; old != nil {
		if !old.dying {
			return fmt.Errorf("%w: %q", messages.ErrServerExists, srv.Name)
		}
	}
	if _, taken := a.file.Get(srv.Name); taken {
		return fmt.Errorf("%w: %q", messages.ErrServerExists, srv.Name)
	}
	f := a.file.Clone()
	f.Put(srv)
	if err := a.save(f); err != nil {
		return err
	}
	if old := a.servers[srv.Name]; old != nil {
		// Its removal is still finishing: start once the name is free.
		old.onGone = append(old.onGone, func() { a.startManaged(c, srv) })
		return nil
	}
	a.startManaged(c, srv)
	return nil
}

func (a *Actor) startManaged(c actor.Context, srv config.Server) {
	e := a.spawn(c, srv)
	e.managed = true
	a.publishConfig()
	a.command(c, e, srv)
}

// patch applies a PATCH body. A change of enabled alone is saved at once;
// any other change is saved only after the server restarted on it, and
// otherwise undone. reply is answered later in that case; an error
// returned here is answered by the caller.
func (a *Actor) patch(c actor.Context, name string, body []byte, reply chan<- error) error {
	e, err := a.live(name)
	if err != nil {
		return err
	}
	if err := a.writable(); err != nil {
		return err
	}
	old, ok := a.file.Get(name)
	if !ok {
		return fmt.Errorf("%w: %q", messages.ErrUnknownServer, name)
	}
	next, err := config.ApplyPatch(old, body)
	if err != nil {
		return err
	}
	if next.Equal(old) {
		reply <- nil
		return nil
	}
	e.managed = true
	toggled := old.Clone()
	toggled.Enabled = next.Enabled
	if next.Equal(old) || next.Equal(toggled) || !next.Enabled {
		// Nothing to prove by connecting: save, then apply.
		f := a.file.Clone()
		f.Put(next)
		if err := a.save(f); err != nil {
			return err
		}
		a.command(c, e, next)
		reply <- nil
		return nil
	}
	a.command(c, e, next)
	e.waiting = func(res messages.ServerSettled) {
		if res.Ready {
			f := a.file.Clone()
			f.Put(next)
			if err := a.save(f); err != nil {
				a.command(c, e, old)
				reply <- err
				return
			}
			reply <- nil
			return
		}
		if res.Err == messages.ErrSuperseded.Error() || res.Err == messages.ErrShuttingDown.Error() {
			reply <- errors.New(res.Err)
			return
		}
		a.command(c, e, old) // back on the previous config
		reply <- fmt.Errorf("%w: %s; %q runs on its previous config again and the file is unchanged", messages.ErrRestartFailed, res.Err, name)
	}
	return nil
}

// remove stops a server, unregisters its tools at once and removes it
// from the file.
func (a *Actor) remove(c actor.Context, name string) error {
	e, err := a.live(name)
	if err != nil {
		return err
	}
	if err := a.writable(); err != nil {
		return err
	}
	f := a.file.Clone()
	f.Remove(name)
	if err := a.save(f); err != nil {
		return err
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
	if !e.cfg.Enabled {
		return fmt.Errorf("server %q is disabled; enable it with a PATCH of enabled", name)
	}
	e.managed = true
	a.command(c, e, e.cfg)
	e.waiting = func(res messages.ServerSettled) {
		if res.Err == messages.ErrSuperseded.Error() || res.Err == messages.ErrShuttingDown.Error() {
			reply <- errors.New(res.Err)
			return
		}
		reply <- nil // the entry shows ready or failed
	}
	return nil
}

// reload re-reads the file and applies the differences to the running set.
func (a *Actor) reload(c actor.Context) messages.ReloadResult {
	f, err := a.Store.Load()
	if err != nil {
		if errors.Is(err, config.ErrUnparsable) {
			msg := err.Error()
			a.Deps.ConfigError.Store(&msg)
			a.file = nil
		}
		return messages.ReloadResult{Err: err}
	}
	a.Deps.ConfigError.Store(nil)
	var res messages.ReloadResult
	for _, srv := range f.Servers {
		e := a.servers[srv.Name]
		switch {
		case e == nil || e.dying:
			res.Added = append(res.Added, srv.Name)
		case !e.cfg.Equal(srv):
			res.Restarted = append(res.Restarted, srv.Name)
			e.managed = true
			a.command(c, e, srv)
		}
	}
	for name, e := range a.servers {
		if _, ok := f.Get(name); !ok && !e.dying {
			res.Removed = append(res.Removed, name)
			a.drop(c, e)
		}
	}
	a.file = f
	for _, name := range res.Added {
		srv, _ := f.Get(name)
		if old := a.servers[name]; old != nil {
			old.onGone = append(old.onGone, func() { a.startManaged(c, srv) })
			continue
		}
		a.startManaged(c, srv)
	}
	a.publishConfig()
	return res
}

// tree describes the actors as the manager knows them.
func (a *Actor) tree(c actor.Context) messages.TreeNode {
	root := messages.TreeNode{Name: Name, Path: c.Self().Id, Kind: "manager", State: "running"}
	if a.stopping {
		root.State = "stopping"
	}
	for _, srv := range a.Deps.Config.Load().Servers {
		e := a.servers[srv.Name]
		if e == nil || e.pid == nil {
			continue
		}
		st, _ := a.Deps.Board.Get(srv.Name)
		node := messages.TreeNode{Name: srv.Name, Path: e.pid.Id, Kind: "server", State: string(st.State)}
		if st.PID > 0 || st.State == "starting" && srv.Enabled {
			node.Children = append(node.Children, messages.TreeNode{
				Name: "session", Path: e.pid.Id + "/session", Kind: "session", State: string(st.State), PID: st.PID,
			})
		}
		root.Children = append(root.Children, node)
	}
	return root
}
