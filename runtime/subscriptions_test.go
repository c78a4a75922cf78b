package runtime

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/openprogram/mcpvisor/config"
	"github.com/openprogram/mcpvisor/events"
	"github.com/openprogram/mcpvisor/internal/testutil"
)

// protocols are the two ways a session subscribes: resources/subscribe
// (2025-11-25) and a subscriptions/listen stream per URI (2026-07-28).
var protocols = []string{"2025-11-25", "2026-07-28"}

// updateUntilSeen changes note id with the example server's update tool
// until its ResourceUpdated arrives on sub. On 2026-07-28 a subscription is
// only requested when SubscribeResource returns (the server acknowledges
// on its stream later), so an update sent at once may precede it: each
// attempt waits for the event, and a few attempts bound the whole.
func updateUntilSeen(t *testing.T, rt *testRuntime, sub *events.Subscription, server, id string) events.ResourceUpdated {
	t.Helper()
	uri := "demo://notes/" + id
	for range 20 {
		mustCall(t, rt, server+"__update", map[string]any{"id": id})
		ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
		for {
			e, err := sub.Next(ctx)
			if err != nil {
				break
			}
			if u, ok := e.(events.ResourceUpdated); ok && u.Server == server && u.URI == uri {
				cancel()
				return u
			}
		}
		cancel()
	}
	t.Fatalf("no resource_updated of %s on %s after 20 updates", uri, server)
	return events.ResourceUpdated{}
}

// TestSubscriptionDeliversUpdates: on both protocols, a subscribed note's
// changes arrive as resource_updated events (and an unsubscribed one's do
// not); the subscription survives the server process being killed and a
// restart of the server actor; of two holders of a URI, one ending leaves
// the other's updates coming; the context's end ends a subscription.
func TestSubscriptionDeliversUpdates(t *testing.T) {
	for _, proto := range protocols {
		t.Run(proto, func(t *testing.T) {
			rt := start(t, Options{}, exampleServer("ex", "-update-tool", "-protocol", proto))
			st := rt.waitReady(t, "ex")
			sub := rt.subscribe(t, "ex")
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			first, err := rt.SubscribeResource(ctx, "ex", "demo://notes/7")
			if err != nil {
				t.Fatalf("SubscribeResource: %v", err)
			}
			updateUntilSeen(t, rt, sub, "ex", "7")

			// Only subscribed URIs become events: note 8's update, sent
			// before note 7's, must not show up first.
			mustCall(t, rt, "ex__update", map[string]any{"id": "8"})
			mustCall(t, rt, "ex__update", map[string]any{"id": "7"})
			u := testutil.Await[events.ResourceUpdated](t, sub, 10*time.Second, "the next update", nil)
			if u.URI != "demo://notes/7" {
				t.Fatalf("got an update of %s, which nobody subscribed to", u.URI)
			}

			// The process dies: the new session subscribes again.
			if err := testutil.Kill(st.PID); err != nil {
				t.Fatal(err)
			}
			rt.waitBack(t, "ex")
			updateUntilSeen(t, rt, sub, "ex", "7")

			// A restart respawns the server actor: still subscribed.
			if _, err := rt.RestartServer(t.Context(), "ex"); err != nil {
				t.Fatal(err)
			}
			rt.waitReady(t, "ex")
			updateUntilSeen(t, rt, sub, "ex", "7")

			// A second holder of the URI; the first one's end leaves it.
			second, err := rt.SubscribeResource(context.Background(), "ex", "demo://notes/7")
			if err != nil {
				t.Fatalf("second SubscribeResource: %v", err)
			}
			defer second.Close()
			if second.ID() == first.ID() {
				t.Fatalf("two subscriptions share the id %s", first.ID())
			}
			cancel() // ends the first
			select {
			case <-first.Done():
			case <-time.After(10 * time.Second):
				t.Fatal("the subscription did not end with its context")
			}
			if !errors.Is(first.Err(), context.Canceled) {
				t.Errorf("the ended subscription's Err = %v, want context.Canceled", first.Err())
			}
			updateUntilSeen(t, rt, sub, "ex", "7")
			if err := second.Close(); err != nil {
				t.Errorf("Close of the last holder: %v", err)
			}
			if !errors.Is(second.Err(), ErrSubscriptionClosed) {
				t.Errorf("Err after Close = %v, want ErrSubscriptionClosed", second.Err())
			}
		})
	}
}

// subscriptionServer is an in-memory server speaking protocol 2025-11-25
// (where subscribing is a request the server sees) that reports each
// subscribe and unsubscribe on calls.
func subscriptionServer(calls chan<- string) func(config.Server) mcp.Transport {
	return func(config.Server) mcp.Transport {
		srv := mcp.NewServer(&mcp.Implementation{Name: "subs"}, &mcp.ServerOptions{
			SupportedProtocolVersions: []string{"2025-11-25"},
			SubscribeHandler: func(_ context.Context, req *mcp.SubscribeRequest) error {
				calls <- "subscribe " + req.Params.URI
				return nil
			},
			UnsubscribeHandler: func(_ context.Context, req *mcp.UnsubscribeRequest) error {
				calls <- "unsubscribe " + req.Params.URI
				return nil
			},
		})
		srv.AddResource(&mcp.Resource{URI: "mem://a", Name: "a"}, func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: "mem://a", Text: "a"}}}, nil
		})
		return connected(srv)
	}
}

// connected is the client end of an in-memory connection to srv, for
// Options.transport: each session gets a server of its own.
func connected(srv *mcp.Server) mcp.Transport {
	ct, st := mcp.NewInMemoryTransports()
	if _, err := srv.Connect(context.Background(), st, nil); err != nil {
		panic(err)
	}
	return ct
}

// wantCalls takes the next calls the server saw, in order.
func wantCalls(t *testing.T, calls <-chan string, want ...string) {
	t.Helper()
	for _, w := range want {
		select {
		case got := <-calls:
			if got != w {
				t.Fatalf("the server saw %q, want %q", got, w)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("the server never saw %q", w)
		}
	}
	select {
	case got := <-calls:
		t.Fatalf("the server saw %q too", got)
	default:
	}
}

// TestSubscribersCountedPerURI: the server is subscribed once for two
// holders of a URI and unsubscribed only when the last one ends; ending
// an ended subscription does nothing.
func TestSubscribersCountedPerURI(t *testing.T) {
	calls := make(chan string, 16)
	rt := start(t, Options{transport: subscriptionServer(calls)}, memServer("mem"))
	rt.waitReady(t, "mem")
	a, err := rt.SubscribeResource(context.Background(), "mem", "mem://a")
	if err != nil {
		t.Fatal(err)
	}
	b, err := rt.SubscribeResource(context.Background(), "mem", "mem://a")
	if err != nil {
		t.Fatal(err)
	}
	wantCalls(t, calls, "subscribe mem://a")
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	wantCalls(t, calls) // b still holds it
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	wantCalls(t, calls, "unsubscribe mem://a")
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	wantCalls(t, calls)
}

// TestSubscriptionsBounded: a server holds at most
// MaxSubscriptionsPerServer subscriptions; one ending makes room.
func TestSubscriptionsBounded(t *testing.T) {
	calls := make(chan string, 16)
	rt := start(t, Options{transport: subscriptionServer(calls)}, memServer("mem"))
	rt.waitReady(t, "mem")
	var last *ResourceSubscription
	for i := range MaxSubscriptionsPerServer {
		s, err := rt.SubscribeResource(context.Background(), "mem", "mem://a")
		if err != nil {
			t.Fatalf("subscription %d: %v", i+1, err)
		}
		last = s
	}
	_, err := rt.SubscribeResource(context.Background(), "mem", "mem://a")
	if !errors.Is(err, ErrTooManySubscriptions) || !strings.Contains(err.Error(), fmt.Sprint(MaxSubscriptionsPerServer)) {
		t.Fatalf("subscription %d: %v, want ErrTooManySubscriptions naming the bound", MaxSubscriptionsPerServer+1, err)
	}
	_ = last.Close()
	if _, err := rt.SubscribeResource(context.Background(), "mem", "mem://a"); err != nil {
		t.Fatalf("after one ended: %v", err)
	}
}

// TestSubscriptionEndsWithItsServer: removing a server ends its
// subscriptions (Done, Err is ErrUnknownServer) and forgets their ids;
// Shutdown ends the rest.
func TestSubscriptionEndsWithItsServer(t *testing.T) {
	calls := make(chan string, 16)
	rt := start(t, Options{transport: subscriptionServer(calls)}, memServer("mem"), memServer("other"))
	rt.waitReady(t, "mem")
	rt.waitReady(t, "other")
	s, err := rt.SubscribeResource(context.Background(), "mem", "mem://a")
	if err != nil {
		t.Fatal(err)
	}
	kept, err := rt.SubscribeResource(context.Background(), "other", "mem://a")
	if err != nil {
		t.Fatal(err)
	}
	if err := rt.RemoveServer(context.Background(), "mem"); err != nil {
		t.Fatal(err)
	}
	select {
	case <-s.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the removed server's subscription did not end")
	}
	if !errors.Is(s.Err(), ErrUnknownServer) {
		t.Errorf("Err = %v, want ErrUnknownServer", s.Err())
	}
	if _, ok := rt.subs.get(s.ID()); ok {
		t.Error("the removed server's subscription id is still known")
	}
	if kept.Err() != nil {
		t.Errorf("another server's subscription ended too: %v", kept.Err())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := rt.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if !errors.Is(kept.Err(), ErrShuttingDown) {
		t.Errorf("after Shutdown Err = %v, want ErrShuttingDown", kept.Err())
	}
}

// TestUndeclaredCapabilities: a server that declares neither
// resources.subscribe nor completions gets neither request.
func TestUndeclaredCapabilities(t *testing.T) {
	transport := func(config.Server) mcp.Transport {
		srv := mcp.NewServer(&mcp.Implementation{Name: "plain"}, nil)
		srv.AddResource(&mcp.Resource{URI: "mem://a", Name: "a"}, func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{}, nil
		})
		return connected(srv)
	}
	rt := start(t, Options{transport: transport}, memServer("plain"))
	rt.waitReady(t, "plain")
	if _, err := rt.SubscribeResource(context.Background(), "plain", "mem://a"); !errors.Is(err, ErrNotDeclared) {
		t.Errorf("SubscribeResource = %v, want ErrNotDeclared", err)
	}
	ref := CompletionRef{Server: "plain", ResourceTemplate: "mem://{x}"}
	if _, err := rt.Complete(context.Background(), ref, "x", "", nil); !errors.Is(err, ErrNotDeclared) {
		t.Errorf("Complete = %v, want ErrNotDeclared", err)
	}
	api := newAPI(t, rt)
	api.do("POST", "/api/mcp/resources/subscriptions", `{"server":"plain","uri":"mem://a"}`).want(t, 409)
	api.do("POST", "/api/mcp/complete", `{"server":"plain","resource_template":"mem://{x}","argument":"x"}`).want(t, 409)
	if _, err := rt.SubscribeResource(context.Background(), "nope", "mem://a"); !errors.Is(err, ErrUnknownServer) {
		t.Errorf("SubscribeResource of an unknown server = %v, want ErrUnknownServer", err)
	}
}
