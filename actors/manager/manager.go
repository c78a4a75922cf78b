// Package manager is the root actor of a Runtime: the only writer of the
// server set. It spawns one server actor per configured server and runs
// startup: enabled servers connect one after another, in file order, each
// bounded by its own timeout_seconds.
//
// Contract:
//   - Started spawns the server actors (each publishes its own status) and
//     starts the first server; it never waits in its mailbox.
//   - A failed server actor is stopped by the supervision strategy, never
//     restarted in place.
//   - Stopping stops every child; Stopped (after every child stopped)
//     closes the Done channel handed in, which is how the Runtime awaits
//     the whole tree.
package manager

import (
	"slices"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/openprogram/mcpvisor/actors"
	"github.com/openprogram/mcpvisor/actors/server"
	"github.com/openprogram/mcpvisor/config"
	"github.com/openprogram/mcpvisor/messages"
	"github.com/openprogram/mcpvisor/status"
)

// Name is the manager's actor name.
const Name = "manager"

// Props returns the manager's props. file is the config loaded at start;
// ready is called once every configured server is in the status board and
// has its actor (it may be called again by a later incarnation); done is
// closed once the manager and all its children have stopped.
func Props(deps *actors.Deps, file *config.File, ready func(), done chan<- struct{}) *actor.Props {
	return actors.Props(deps.Logger, func() actor.Actor {
		return &Actor{deps: deps, file: file, ready: ready, done: done}
	})
}

// Actor is the manager.
type Actor struct {
	deps  *actors.Deps
	file  *config.File
	ready func()
	done  chan<- struct{}

	servers  map[string]*actor.PID
	queue    []string // servers still waiting for their startup turn
	pending  string   // the server whose startup turn is running
	stopping bool
}

// Receive handles lifecycle first, then the servers' reports.
func (a *Actor) Receive(c actor.Context) {
	switch msg := c.Message().(type) {
	case *actor.Started:
		a.start(c)
	case *actor.Stopping:
		a.stopping = true
	case *actor.Stopped:
		close(a.done)
	case *actor.Terminated:
		a.terminated(c, msg.Who)
	case messages.ServerSettled:
		if msg.Name == a.pending {
			a.pending = ""
			a.next(c)
		}
	}
}

func (a *Actor) start(c actor.Context) {
	a.servers = map[string]*actor.PID{}
	names := make([]string, 0, len(a.file.Servers))
	for _, srv := range a.file.Servers {
		a.deps.Board.Set(server.InitialStatus(srv), nil)
		pid, err := c.SpawnNamed(server.Props(a.deps, srv), srv.Name)
		if err != nil {
			a.deps.Logger.Error("spawning server actor", "server", srv.Name, "error", err)
			continue
		}
		a.servers[srv.Name] = pid
		names = append(names, srv.Name)
	}
	a.deps.Board.SetOrder(names)
	a.ready()
	a.queue = names
	a.next(c)
}

// next gives the next queued server its startup turn.
func (a *Actor) next(c actor.Context) {
	for a.pending == "" && len(a.queue) > 0 {
		name := a.queue[0]
		a.queue = a.queue[1:]
		if pid, ok := a.servers[name]; ok {
			a.pending = name
			c.Send(pid, messages.StartServer{})
		}
	}
}

// terminated forgets a server actor that died; if it held the startup
// turn, the next server gets it. Its tools went with it (its Stopping
// unregisters them); its status must not keep claiming otherwise.
func (a *Actor) terminated(c actor.Context, who *actor.PID) {
	for name, pid := range a.servers {
		if pid.Equal(who) {
			delete(a.servers, name)
			if !a.stopping {
				a.deps.Board.Set(status.Server{
					Name: name, State: status.Failed, Since: time.Now(),
					Error: "server actor stopped unexpectedly", ErrorKind: status.KindSessionLost,
				}, nil)
			}
			a.queue = slices.DeleteFunc(a.queue, func(n string) bool { return n == name })
			if a.pending == name {
				a.pending = ""
				a.next(c)
			}
			return
		}
	}
}
