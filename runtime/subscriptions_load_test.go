package runtime

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/openprogram/mcpvisor/config"
	"github.com/openprogram/mcpvisor/events"
	"github.com/openprogram/mcpvisor/internal/testutil"
)

// TestSubscribeDuringRemovalLeavesNone: subscriptions made as fast as
// possible while their server is being removed either fail with
// ErrUnknownServer or end with the removal; none outlives it.
func TestSubscribeDuringRemovalLeavesNone(t *testing.T) {
	rt := start(t, Options{}, exampleServer("ex", "-update-tool"))
	rt.waitReady(t, "ex")
	evs := rt.Subscribe(events.SubscribeOptions{Server: "ex", Buffer: 1 << 10})
	defer evs.Close()
	removed := make(chan error, 1)
	go func() { removed <- rt.RemoveServer(context.Background(), "ex") }()
	testutil.Await(t, evs, 10*time.Second, "the removal", func(events.ServerRemoved) bool { return true })
	var made []*ResourceSubscription
	for {
		select {
		case err := <-removed:
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range made {
				if s.Err() == nil {
					t.Fatalf("of %d subscriptions made during the removal, %s outlived it", len(made), s.ID())
				}
			}
			rt.subs.mu.Lock()
			defer rt.subs.mu.Unlock()
			if n := len(rt.subs.byID) + len(rt.subs.servers); n != 0 {
				t.Errorf("the set keeps %d subscriptions and %d servers", len(rt.subs.byID), len(rt.subs.servers))
			}
			return
		default:
		}
		s, err := rt.SubscribeResource(context.Background(), "ex", "demo://notes/1")
		switch {
		case err == nil:
			made = append(made, s)
		case !errors.Is(err, ErrUnknownServer) && !errors.Is(err, ErrNotReady):
			t.Fatalf("SubscribeResource during the removal = %v", err)
		}
	}
}

// slowSubscribeServer is an in-memory 2025-11-25 server that does not
// answer a resources/subscribe silent says (by session, counted from 1,
// and URI) until it is cancelled; entered, if set, hears of each.
func slowSubscribeServer(sessions *atomic.Int32, silent func(session int32, uri string) bool, entered chan<- string) func(config.Server) mcp.Transport {
	return func(config.Server) mcp.Transport {
		n := sessions.Add(1)
		srv := mcp.NewServer(&mcp.Implementation{Name: "subs"}, &mcp.ServerOptions{
			SupportedProtocolVersions: []string{"2025-11-25"},
			SubscribeHandler: func(ctx context.Context, req *mcp.SubscribeRequest) error {
				if entered != nil {
					entered <- req.Params.URI
				}
				if silent(n, req.Params.URI) {
					<-ctx.Done()
				}
				return nil
			},
			UnsubscribeHandler: func(context.Context, *mcp.UnsubscribeRequest) error { return nil },
		})
		srv.AddResource(&mcp.Resource{URI: "mem://a", Name: "a"}, func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{}, nil
		})
		return connected(srv)
	}
}

// TestSilentResubscribeKeepsServerUp: a server whose new sessions never
// answer resources/subscribe comes back all the same when the host holds
// a subscription: the session is ready and the restart succeeds.
func TestSilentResubscribeKeepsServerUp(t *testing.T) {
	var sessions atomic.Int32
	silent := func(n int32, _ string) bool { return n > 1 }
	s := memServer("mem")
	s.TimeoutSeconds = 1
	rt := start(t, Options{transport: slowSubscribeServer(&sessions, silent, nil)}, s)
	rt.waitReady(t, "mem")
	if _, err := rt.SubscribeResource(context.Background(), "mem", "mem://a"); err != nil {
		t.Fatal(err)
	}
	if _, err := rt.RestartServer(context.Background(), "mem"); err != nil {
		t.Fatalf("RestartServer of a server that does not answer the re-subscribe: %v", err)
	}
	rt.waitReady(t, "mem")
}

// TestSlowSubscribeHoldsUpNoOtherURI: a subscribe the server does not
// answer holds up neither the end of another URI's subscription (its
// unsubscribe included) nor a subscribe of another URI.
func TestSlowSubscribeHoldsUpNoOtherURI(t *testing.T) {
	var sessions atomic.Int32
	entered := make(chan string, 8)
	silent := func(_ int32, uri string) bool { return uri == "mem://slow" }
	s := memServer("mem")
	s.TimeoutSeconds = 60
	rt := start(t, Options{transport: slowSubscribeServer(&sessions, silent, entered)}, s)
	rt.waitReady(t, "mem")
	a, err := rt.SubscribeResource(context.Background(), "mem", "mem://a")
	if err != nil {
		t.Fatal(err)
	}
	<-entered
	ctx, cancel := context.WithCancel(context.Background())
	slowDone := make(chan error, 1)
	go func() { _, err := rt.SubscribeResource(ctx, "mem", "mem://slow"); slowDone <- err }()
	if uri := <-entered; uri != "mem://slow" {
		t.Fatalf("subscribed %q", uri)
	}
	closed := make(chan struct{})
	go func() {
		if err := a.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		b, err := rt.SubscribeResource(context.Background(), "mem", "mem://b")
		if err != nil {
			t.Errorf("subscribing to another URI: %v", err)
		} else {
			_ = b.Close()
		}
		close(closed)
	}()
	endsSoon(t, closed, "mem://a's Close and mem://b's subscribe, behind mem://slow's,")
	cancel()
	if err := <-slowDone; !errors.Is(err, context.Canceled) {
		t.Errorf("the slow subscribe = %v, want its context's end", err)
	}
}

// TestUpdateFloodKeepsLifecycleEvents: thousands of updates of a
// subscribed URI are coalesced, so that a subscriber with a small buffer
// that does not read meanwhile loses none of the server's lifecycle
// events to them.
func TestUpdateFloodKeepsLifecycleEvents(t *testing.T) {
	var srv atomic.Pointer[mcp.Server]
	transport := func(config.Server) mcp.Transport {
		s := mcp.NewServer(&mcp.Implementation{Name: "subs"}, &mcp.ServerOptions{
			SupportedProtocolVersions: []string{"2025-11-25"},
			SubscribeHandler:          func(context.Context, *mcp.SubscribeRequest) error { return nil },
			UnsubscribeHandler:        func(context.Context, *mcp.UnsubscribeRequest) error { return nil },
		})
		s.AddResource(&mcp.Resource{URI: "mem://a", Name: "a"}, func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{}, nil
		})
		srv.Store(s)
		return connected(s)
	}
	rt := start(t, Options{transport: transport}, memServer("mem"))
	rt.waitReady(t, "mem")
	small := rt.Subscribe(events.SubscribeOptions{Server: "mem", Buffer: 64})
	defer small.Close()
	watch := rt.subscribe(t, "mem")
	if _, err := rt.SubscribeResource(context.Background(), "mem", "mem://a"); err != nil {
		t.Fatal(err)
	}
	for range 5000 {
		if err := srv.Load().ResourceUpdated(context.Background(), &mcp.ResourceUpdatedNotificationParams{URI: "mem://a"}); err != nil {
			t.Fatal(err)
		}
	}
	// The restart's events follow the flood (the session that carried it
	// is closed first).
	if _, err := rt.RestartServer(context.Background(), "mem"); err != nil {
		t.Fatal(err)
	}
	testutil.Await(t, watch, 10*time.Second, "the restart's ready", func(e events.StateChanged) bool { return e.To == "ready" })
	updates := 0
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		e, err := small.Next(ctx)
		cancel()
		if err != nil {
			t.Fatalf("the small subscriber never saw the restart's ready (%d updates before): %v", updates, err)
		}
		switch e := e.(type) {
		case events.Dropped:
			t.Fatalf("the small subscriber lost %d events after %d updates", e.N, updates)
		case events.ResourceUpdated:
			updates++
		case events.StateChanged:
			if e.To == "ready" && updates > 0 {
				return
			}
		}
	}
}
