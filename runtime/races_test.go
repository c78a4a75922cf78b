package runtime

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/openprogram/mcpvisor/config"
	"github.com/openprogram/mcpvisor/events"
	"github.com/openprogram/mcpvisor/internal/exampleserver"
	"github.com/openprogram/mcpvisor/internal/testutil"
	"github.com/openprogram/mcpvisor/messages"
	"github.com/openprogram/mcpvisor/status"
)

// Races between management operations, made deterministic with in-memory
// servers whose connects wait for a permit from the test.

type permits struct {
	mu sync.Mutex
	ch map[string]chan struct{}
}

func (p *permits) of(name string) chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ch[name] == nil {
		p.ch[name] = make(chan struct{}, 100)
	}
	return p.ch[name]
}

// allow lets n more connects of name through.
func (p *permits) allow(name string, n int) {
	for range n {
		p.of(name) <- struct{}{}
	}
}

type gatedTransport struct {
	permit <-chan struct{}
	inner  mcp.Transport
	server *mcp.ServerSession
}

func (g gatedTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	select {
	case <-g.permit:
	case <-ctx.Done():
		g.server.Close() // the server side was connected in advance
		return nil, ctx.Err()
	}
	return g.inner.Connect(ctx)
}

type failingTransport struct{}

func (failingTransport) Connect(context.Context) (mcp.Connection, error) {
	return nil, errors.New("this server cannot start")
}

// gatedOptions runs every server in memory; a server whose command is
// "fail" cannot connect. Permits are per server and timeout_seconds, so a
// test can let one config of a server connect and not another.
func gatedOptions(t *testing.T) (Options, *permits) {
	p := &permits{ch: map[string]chan struct{}{}}
	server := exampleserver.NewServer(exampleserver.Options{})
	return Options{transport: func(s config.Server) mcp.Transport {
		if s.Command[0] == "fail" {
			return failingTransport{}
		}
		ct, st := mcp.NewInMemoryTransports()
		ss, err := server.Connect(context.Background(), st, nil)
		if err != nil {
			t.Error(err)
		}
		return gatedTransport{permit: p.of(fmt.Sprintf("%s/%d", s.Name, s.TimeoutSeconds)), inner: ct, server: ss}
	}}, p
}

func memServer(name string) config.Server {
	return config.Server{Name: name, Type: config.TypeLocal, Command: []string{"in-memory"}, Enabled: true}
}

// startPatch runs a PATCH in the background and waits until its restart
// is connecting.
func startPatch(t *testing.T, rt *testRuntime, name, body string) <-chan error {
	done := make(chan error, 1)
	go func() { _, err := rt.PatchServer(context.Background(), name, []byte(body)); done <- err }()
	rt.waitState(t, name, status.Starting)
	return done
}

// A restart that supersedes a PATCH runs the saved config, not the PATCH's.
func TestRestartDoesNotRunSupersededPatch(t *testing.T) {
	opts, p := gatedOptions(t)
	p.allow("a/0", 1)
	rt := start(t, opts, memServer("a"))
	rt.waitState(t, "a", status.Ready)
	patched := startPatch(t, rt, "a", `{"timeout_seconds": 21}`) // never allowed to connect
	p.allow("a/0", 1)
	if _, err := rt.RestartServer(context.Background(), "a"); err != nil {
		t.Fatal(err)
	}
	if err := <-patched; !errors.Is(err, ErrSuperseded) {
		t.Fatalf("PATCH = %v, want ErrSuperseded", err)
	}
	if d, _ := rt.Server("a"); d.TimeoutSeconds == 21 {
		t.Fatal("the superseded PATCH reached the file")
	}
	if res, _ := rt.Reload(context.Background()); len(res.Restarted) > 0 {
		t.Fatalf("reload restarted %v: the restart ran the superseded PATCH's config", res.Restarted)
	}
}

// A failed PATCH goes back to the saved config, not to an earlier PATCH
// that it superseded.
func TestFailedPatchRevertsToSavedConfig(t *testing.T) {
	opts, p := gatedOptions(t)
	p.allow("a/0", 1)
	rt := start(t, opts, memServer("a"))
	rt.waitState(t, "a", status.Ready)
	before, _ := os.ReadFile(rt.configPath())
	first := startPatch(t, rt, "a", `{"timeout_seconds": 21}`)
	_, err := rt.PatchServer(context.Background(), "a", []byte(`{"command": ["fail"]}`))
	if !errors.Is(err, ErrRestartFailed) {
		t.Fatalf("second PATCH = %v, want ErrRestartFailed", err)
	}
	p.allow("a/0", 1) // for the revert
	if err := <-first; !errors.Is(err, ErrSuperseded) {
		t.Fatalf("first PATCH = %v, want ErrSuperseded", err)
	}
	rt.waitState(t, "a", status.Ready)
	if after, _ := os.ReadFile(rt.configPath()); !bytes.Equal(before, after) {
		t.Fatalf("file changed:\n%s", after)
	}
	if res, _ := rt.Reload(context.Background()); len(res.Restarted) > 0 {
		t.Fatalf("reload restarted %v: the revert ran the superseded PATCH's config", res.Restarted)
	}
}

// DELETE answers only when no tool of the server is registered any more,
// even when the server became ready just before.
func TestNoToolsAfterDelete(t *testing.T) {
	opts, p := gatedOptions(t)
	rt := start(t, opts)
	ctx := context.Background()
	// The DELETE comes at each stage of the start in turn: at once, once
	// it is starting, once its session started, once it shows ready (its
	// tools about to register), once its tools are registered.
	stages := []func(events.Event) bool{
		nil,
		func(e events.Event) bool {
			s, ok := e.(events.StateChanged)
			return ok && s.To == string(status.Starting)
		},
		func(e events.Event) bool { _, ok := e.(events.SessionStarted); return ok },
		func(e events.Event) bool { s, ok := e.(events.StateChanged); return ok && s.To == string(status.Ready) },
		func(e events.Event) bool { s, ok := e.(events.ToolsChanged); return ok && s.Count > 0 },
	}
	for i := range 40 {
		name := "s" + string(rune('a'+i%26)) + string(rune('a'+i/26))
		sub := rt.subscribe(t, name)
		if _, err := rt.AddServer(ctx, memServer(name)); err != nil {
			t.Fatal(err)
		}
		p.allow(name+"/0", 1)
		if stage := stages[i%len(stages)]; stage != nil {
			testutil.AwaitEvent(t, sub, 10*time.Second, fmt.Sprintf("stage %d of %s's start", i%len(stages), name), stage)
		}
		sub.Close()
		if err := rt.RemoveServer(ctx, name); err != nil {
			t.Fatal(err)
		}
		for _, tool := range rt.Tools() {
			if tool.Server == name {
				t.Fatalf("iteration %d: tool %s listed after DELETE answered", i, tool.Name)
			}
		}
	}
}

// An operation that reaches the manager while it stops is refused and
// changes nothing.
func TestOperationDuringStopRefused(t *testing.T) {
	hung := exampleServer("hung", "-hang-initialize", "-ignore-sigterm")
	hung.TimeoutSeconds = 60
	rt := start(t, Options{StopGrace: 300 * time.Millisecond}, hung)
	waitForProcesses(t, 1)
	before, _ := os.ReadFile(rt.configPath())
	reply := make(chan error, 1)
	rt.system.Root.Stop(rt.manager) // its children take a grace period to stop
	rt.system.Root.Send(rt.manager, messages.AddServer{Server: exampleServer("late"), Reply: reply})
	select {
	case err := <-reply:
		if !errors.Is(err, ErrShuttingDown) {
			t.Fatalf("AddServer while stopping = %v, want ErrShuttingDown", err)
		}
	case <-rt.managerDone:
		// Stopped before the message was read: dropped, which is fine too.
	}
	if after, _ := os.ReadFile(rt.configPath()); !bytes.Equal(before, after) {
		t.Fatalf("file changed while stopping:\n%s", after)
	}
}

// When startup reaches a server it shows the config it found in the file,
// and a restart before that turn also goes by the file.
func TestStartupTurnReadsAndShowsTheFile(t *testing.T) {
	first := exampleServer("first", "-hang-initialize")
	first.TimeoutSeconds = 2
	rt := start(t, Options{}, first, exampleServer("later"), exampleServer("restarted_early"))
	waitForProcesses(t, 1)
	store := config.Store{Dir: func() (string, error) { return rt.dir, nil }}
	f, _ := store.Load()
	for _, name := range []string{"later", "restarted_early"} {
		s, _ := f.Get(name)
		s.Enabled = false
		s.TimeoutSeconds = 9
		f.Put(s)
	}
	if err := store.Save(f); err != nil {
		t.Fatal(err)
	}
	if _, err := rt.RestartServer(context.Background(), "restarted_early"); !errors.Is(err, ErrDisabled) {
		t.Fatalf("restart of a server the file now disables = %v, want ErrDisabled", err)
	}
	rt.waitState(t, "later", status.Disabled)
	if d, _ := rt.Server("later"); d.Enabled || d.TimeoutSeconds != 9 {
		t.Fatalf("later shows enabled=%v timeout=%d, want the file's false and 9", d.Enabled, d.TimeoutSeconds)
	}
}
