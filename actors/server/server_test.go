package server

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/jonboulle/clockwork"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/openprogram/mcpvisor/actors"
	"github.com/openprogram/mcpvisor/config"
	"github.com/openprogram/mcpvisor/events"
	"github.com/openprogram/mcpvisor/internal/mcpconn"
	"github.com/openprogram/mcpvisor/internal/testutil"
	"github.com/openprogram/mcpvisor/messages"
	"github.com/openprogram/mcpvisor/status"
	"github.com/openprogram/mcpvisor/tools"
)

var (
	demoBin string
	marker  = fmt.Sprintf("server-test-%d", os.Getpid())
)

func TestMain(m *testing.M) { testutil.Main(m, &demoBin, marker) }

// parent stands in for the manager: it spawns one server actor and passes
// its ServerSettled reports to a channel.
type parent struct {
	props   *actor.Props
	settled chan messages.ServerSettled
	spawned chan *actor.PID
}

func (p *parent) Receive(c actor.Context) {
	switch msg := c.Message().(type) {
	case *actor.Started:
		pid, _ := c.SpawnNamed(p.props, "ex")
		p.spawned <- pid
	case messages.ServerSettled:
		p.settled <- msg
	}
}

type fixture struct {
	system *actor.ActorSystem
	deps   *actors.Deps
	server *actor.PID
	cfg    config.Server
	work   *sync.WaitGroup
	settle chan messages.ServerSettled
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	f := &fixture{work: &sync.WaitGroup{}, settle: make(chan messages.ServerSettled, 4)}
	f.system = actor.NewActorSystem(actor.WithLoggerFactory(func(*actor.ActorSystem) *slog.Logger { return testLogger() }))
	tails := &actors.Tails{}
	board := status.NewBoard(tails.Lines)
	f.deps = &actors.Deps{
		Logger: testLogger(), Registry: tools.NewRegistry(nil), Board: board, Tails: tails,
		Events: events.NewBus(&events.Options{Reducer: board.Apply}),
		Work:   f.work, Grace: 200 * time.Millisecond, Client: &mcp.Implementation{Name: "test"},
		// Recovery would start a new session; these tests look at the gap:
		// the clock never moves, so no backoff ends.
		Clock: clockwork.NewFakeClock(), Restart: actors.RestartPolicy{}.WithDefaults(),
	}
	f.cfg = config.Server{Name: "ex", Type: config.TypeLocal, Command: []string{demoBin, "serve"}, Enabled: true,
		Env: map[string]string{testutil.MarkerEnv: marker}}
	// What the manager emits before it spawns a server actor.
	f.deps.Events.Emit(events.ServerAdded{Header: events.Header{Server: f.cfg.Name}})
	f.deps.Events.Emit(InitialState(f.cfg))
	p := &parent{props: Props(f.deps, f.cfg, false, nil), settled: f.settle, spawned: make(chan *actor.PID, 1)}
	pid, err := f.system.Root.SpawnNamed(actor.PropsFromProducer(func() actor.Actor { return p }), "parent")
	if err != nil {
		t.Fatal(err)
	}
	f.server = <-p.spawned
	t.Cleanup(func() {
		_ = f.system.Root.StopFuture(pid).Wait()
		f.work.Wait()
		f.system.Shutdown()
		if left := testutil.ProcessesWithMarker(marker); len(left) > 0 {
			t.Errorf("processes left: %v", left)
		}
	})
	return f
}

func (f *fixture) waitSettled(t *testing.T) messages.ServerSettled {
	t.Helper()
	select {
	case s := <-f.settle:
		return s
	case <-time.After(30 * time.Second):
		t.Fatal("no ServerSettled")
		return messages.ServerSettled{}
	}
}

// settleActor returns once the server actor has handled every message
// sent to it before: the Describe it answers queues behind them.
func (f *fixture) settleActor(t *testing.T) {
	t.Helper()
	reply := make(chan messages.Description, 1)
	f.system.Root.Send(f.server, messages.Describe{Reply: reply})
	select {
	case <-reply:
	case <-time.After(10 * time.Second):
		t.Fatal("the server actor did not describe itself")
	}
}

// waitState waits until the server is in state: the board shows it, or
// a StateChanged to it comes.
func (f *fixture) waitState(t *testing.T, state status.State) status.Server {
	t.Helper()
	sub := f.deps.Events.Subscribe(events.SubscribeOptions{Server: "ex"})
	defer sub.Close()
	if st, _ := f.deps.Board.Get("ex"); st.State == state {
		return st
	}
	testutil.Await(t, sub, 10*time.Second, "ex in "+string(state), func(e events.StateChanged) bool { return e.To == string(state) })
	st, _ := f.deps.Board.Get("ex")
	return st
}

// A SessionReady that a session sent just before it was stopped (our Stop,
// a system message, overtakes it) must not bring the server back to ready
// on a connection that is going away; nor may a connection that is
// already lost.
func TestStaleOrDeadSessionReadyIgnored(t *testing.T) {
	f := newFixture(t)
	f.system.Root.Send(f.server, messages.Connect{Epoch: 1, Server: f.cfg})
	if s := f.waitSettled(t); !s.Ready {
		t.Fatalf("first connect: %+v", s)
	}
	f.system.Root.Stop(actor.NewPID(f.system.Address(), "parent/ex/session"))
	f.waitState(t, status.Backoff)

	extra, err := mcpconn.Dial(context.Background(), mcpconn.Options{Server: f.cfg, Grace: 200 * time.Millisecond, Client: f.deps.Client, Go: f.work.Go})
	if err != nil {
		t.Fatal(err)
	}
	f.system.Root.Send(f.server, messages.SessionReady{Gen: 1, Conn: extra}) // the first session's generation
	f.settleActor(t)                                                         // the server actor has handled it
	if st, _ := f.deps.Board.Get("ex"); st.State != status.Backoff || len(f.deps.Registry.List()) != 0 {
		t.Fatalf("after a stale SessionReady: %+v with %d tools", st, len(f.deps.Registry.List()))
	}

	extra.Close()
	f.system.Root.Send(f.server, messages.SessionReady{Gen: 2, Conn: extra}) // current generation, dead connection
	f.settleActor(t)
	if st, _ := f.deps.Board.Get("ex"); st.State == status.Ready || len(f.deps.Registry.List()) != 0 {
		t.Fatalf("after a SessionReady of a closed connection: %+v with %d tools", st, len(f.deps.Registry.List()))
	}
}

// Stopping the server actor unregisters its tools and says stopped.
func TestStopWithdrawsEverything(t *testing.T) {
	f := newFixture(t)
	f.system.Root.Send(f.server, messages.Connect{Epoch: 1, Server: f.cfg})
	f.waitSettled(t)
	if len(f.deps.Registry.List()) == 0 {
		t.Fatal("no tools after ready")
	}
	if err := f.system.Root.StopFuture(f.server).Wait(); err != nil {
		t.Fatal(err)
	}
	if n := len(f.deps.Registry.List()); n != 0 {
		t.Fatalf("%d tools after stop", n)
	}
	if st, _ := f.deps.Board.Get("ex"); st.State != status.Stopped || st.PID != 0 || st.ToolCount != 0 {
		t.Fatalf("status after stop = %+v", st)
	}
}

// A burst of resources/list_changed is one ResourcesChanged at once and
// one more at the end of the interval (mcpconn.UpdateInterval), not one
// each.
func TestResourcesChangedThrottled(t *testing.T) {
	f := newFixture(t)
	f.system.Root.Send(f.server, messages.Connect{Epoch: 1, Server: f.cfg})
	f.waitSettled(t)
	sub := f.deps.Events.Subscribe(events.SubscribeOptions{})
	defer sub.Close()
	for range 50 {
		for gen := range uint64(4) { // the session's generation is the actor's: one of these is it
			f.system.Root.Send(f.server, messages.ListChanged{Gen: gen, List: mcpconn.ListResources})
		}
	}
	f.settleActor(t)
	fence := events.ServerLog{Header: events.Header{Server: "fence"}}
	f.deps.Events.Emit(fence)
	count := func() int {
		n := 0
		testutil.AwaitEvent(t, sub, 10*time.Second, "the fence", func(e events.Event) bool {
			if _, ok := e.(events.ResourcesChanged); ok {
				n++
			}
			return e.Type() == fence.Type() && e.(events.ServerLog).Server == "fence"
		})
		return n
	}
	if n := count(); n != 1 {
		t.Fatalf("%d ResourcesChanged for a burst of 50 within the interval, want 1", n)
	}
	f.deps.Clock.(*clockwork.FakeClock).Advance(mcpconn.UpdateInterval)
	testutil.Await(t, sub, 10*time.Second, "the burst's trailing ResourcesChanged", func(events.ResourcesChanged) bool { return true })
}
