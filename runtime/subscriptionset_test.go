package runtime

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/openprogram/mcpvisor/config"
	"github.com/openprogram/mcpvisor/internal/binding"
	"github.com/openprogram/mcpvisor/internal/mcpconn"
)

// endsSoon fails the test unless done is closed within a generous bound:
// for something that must not wait for anything.
func endsSoon(t *testing.T, done <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatalf("%s is still waiting", what)
	}
}

// answered is a subscribe the server answers at once.
func answered(context.Context) error { return nil }

// TestSubscribeRefusedBetweenGoneAndFreed: from a server's removal until
// its actor is gone (the manager's Gone to its Freed), its binding may
// still hand out its session, but nothing of the name is subscribed;
// after Freed (a server of the name added again) it is.
func TestSubscribeRefusedBetweenGoneAndFreed(t *testing.T) {
	var s subscriptionSet
	if _, err := s.add(t.Context(), nil, "s", "mem://a", answered); err != nil {
		t.Fatal(err)
	}
	s.serverGone("s")
	if sub, err := s.add(t.Context(), nil, "s", "mem://a", answered); !errors.Is(err, ErrUnknownServer) {
		t.Fatalf("add of a removed server = %v, %v; want ErrUnknownServer", sub, err)
	}
	if got := s.of("s").URIs(); len(got) != 0 {
		t.Errorf("a removed server still wants %v", got)
	}
	s.freed("s")
	sub, err := s.add(t.Context(), nil, "s", "mem://a", answered)
	if err != nil || sub.Err() != nil {
		t.Fatalf("add after the name was freed = %v, %v", sub, err)
	}
}

// TestSubscribeInFlightWhenServerGoes: a subscribe in flight (the URI's
// first, asking the server) and one waiting for it, when the server is
// removed or the runtime shuts down, fail with that reason: never an
// ended subscription with a nil error, never the other reason.
func TestSubscribeInFlightWhenServerGoes(t *testing.T) {
	for _, tc := range []struct {
		name string
		end  func(*subscriptionSet)
		want error
	}{
		{"removal", func(s *subscriptionSet) { s.serverGone("s") }, ErrUnknownServer},
		{"shutdown", func(s *subscriptionSet) { s.close() }, ErrShuttingDown},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var s subscriptionSet
			asked, release := make(chan struct{}), make(chan struct{})
			slow := func(context.Context) error { close(asked); <-release; return nil }
			errs := make(chan error, 2)
			go func() { _, err := s.add(t.Context(), nil, "s", "mem://a", slow); errs <- err }()
			<-asked
			go func() { _, err := s.add(t.Context(), nil, "s", "mem://a", answered); errs <- err }()
			tc.end(&s)
			close(release)
			for range 2 {
				if err := <-errs; !errors.Is(err, tc.want) {
					t.Errorf("add = %v, want %v", err, tc.want)
				}
			}
			if n := len(s.byID); n != 0 {
				t.Errorf("%d subscriptions left", n)
			}
		})
	}
}

// TestURIsDoNotWaitForEachOther: a subscribe the server is slow to
// answer holds up neither the end of another URI's subscription nor its
// unsubscribe; the end of the slow URI's own holder, whose context ends
// while the subscribe runs, ends it at once, says so, and the subscribe
// is undone once answered; the set keeps no entry of a URI nobody holds.
func TestURIsDoNotWaitForEachOther(t *testing.T) {
	unsubscribed := make(chan string, 4)
	s := subscriptionSet{unsubscribe: func(_ context.Context, _, uri string) error { unsubscribed <- uri; return nil }}
	a, err := s.add(t.Context(), nil, "s", "mem://a", answered)
	if err != nil {
		t.Fatal(err)
	}
	asked, release := make(chan struct{}), make(chan struct{})
	slow := func(context.Context) error { close(asked); <-release; return nil }
	made := make(chan error, 1)
	go func() { _, err := s.add(t.Context(), nil, "s", "mem://slow", slow); made <- err }()
	<-asked

	closed := make(chan struct{})
	go func() { _ = a.Close(); close(closed) }()
	endsSoon(t, closed, "the end of mem://a, behind mem://slow's subscribe,")
	if got := <-unsubscribed; got != "mem://a" {
		t.Fatalf("unsubscribed %q", got)
	}

	// The slow URI's holder is ended (a DELETE whose client gave up).
	var waiting *ResourceSubscription
	s.mu.Lock()
	for _, sub := range s.byID {
		waiting = sub
	}
	s.mu.Unlock()
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := waiting.close(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("end with its context cancelled = %v, want context.Canceled", err)
	}
	if waiting.Err() == nil {
		t.Error("the subscription did not end")
	}
	close(release)
	if err := <-made; !errors.Is(err, ErrSubscriptionClosed) {
		t.Errorf("the subscribe of a holder ended meanwhile = %v, want ErrSubscriptionClosed", err)
	}
	if got := <-unsubscribed; got != "mem://slow" {
		t.Fatalf("unsubscribed %q, want the subscribe undone", got)
	}
	s.mu.Lock()
	uris := len(s.servers["s"].uris)
	s.mu.Unlock()
	if uris != 0 {
		t.Errorf("the set keeps %d URI entries nobody holds", uris)
	}
}

// TestSubscriptionWatchStopped: a subscription that ends another way than
// by its context (its server's removal, Shutdown, Close) stops watching
// the context.
func TestSubscriptionWatchStopped(t *testing.T) {
	for _, tc := range []struct {
		name string
		end  func(*subscriptionSet, *ResourceSubscription)
	}{
		{"removal", func(s *subscriptionSet, _ *ResourceSubscription) { s.serverGone("s") }},
		{"shutdown", func(s *subscriptionSet, _ *ResourceSubscription) { s.close() }},
		{"close", func(_ *subscriptionSet, sub *ResourceSubscription) { _ = sub.Close() }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := subscriptionSet{unsubscribe: func(context.Context, string, string) error { return nil }}
			sub, err := s.add(t.Context(), t.Context(), "s", "mem://a", answered)
			if err != nil {
				t.Fatal(err)
			}
			tc.end(&s, sub)
			if sub.Err() == nil {
				t.Fatal("not ended")
			}
			if sub.stop() {
				t.Error("the ended subscription still watched its context")
			}
		})
	}
}

// TestSubscribeURIBounded: an overlong URI is refused before anything is
// asked, on the Go API (ErrBadResourceURI) and on the management API (400
// naming the field).
func TestSubscribeURIBounded(t *testing.T) {
	calls := make(chan string, 4)
	rt := start(t, Options{transport: subscriptionServer(calls)}, memServer("mem"))
	rt.waitReady(t, "mem")
	long := "mem://" + strings.Repeat("x", MaxResourceURIBytes)
	if _, err := rt.SubscribeResource(t.Context(), "mem", long); !errors.Is(err, ErrBadResourceURI) {
		t.Errorf("SubscribeResource of a %d-byte URI = %v, want ErrBadResourceURI", len(long), err)
	}
	e := newAPI(t, rt).do("POST", "/api/mcp/resources/subscriptions", `{"server":"mem","uri":"`+long+`"}`).want(t, 400).apiError(t)
	if e.Field != "uri" {
		t.Errorf("field %q, want uri (%s)", e.Field, e.Error)
	}
	wantCalls(t, calls)
}

// TestUnsubscribeReachesNewerSession: a session that became the server's
// current one while its predecessor was being unsubscribed (it may have
// subscribed the URI while it was still wanted) is unsubscribed too.
func TestUnsubscribeReachesNewerSession(t *testing.T) {
	var r Runtime
	b := binding.New("s", slog.New(slog.DiscardHandler))
	r.bindings.Put(b)
	unsubscribed := make(chan string, 4)
	var second *mcpconn.Conn
	dial := func(name string, onUnsubscribe func()) *mcpconn.Conn {
		srv := mcp.NewServer(&mcp.Implementation{Name: name}, &mcp.ServerOptions{
			SupportedProtocolVersions: []string{"2025-11-25"},
			SubscribeHandler:          func(context.Context, *mcp.SubscribeRequest) error { return nil },
			UnsubscribeHandler: func(context.Context, *mcp.UnsubscribeRequest) error {
				unsubscribed <- name
				onUnsubscribe()
				return nil
			},
		})
		conn, err := mcpconn.Dial(t.Context(), mcpconn.Options{
			Server:    config.Server{Name: "s", Type: config.TypeLocal, Command: []string{"in-memory"}, Enabled: true},
			Transport: connected(srv), Grace: time.Second, Client: &mcp.Implementation{Name: "test"},
		})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(conn.Close)
		return conn
	}
	second = dial("second", func() {})
	first := dial("first", func() { b.Publish(second) })
	b.Publish(first)
	if err := r.unsubscribeCurrent(t.Context(), "s", "mem://a"); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"first", "second"} {
		select {
		case got := <-unsubscribed:
			if got != want {
				t.Fatalf("unsubscribed %s, want %s", got, want)
			}
		default:
			t.Fatalf("%s was not unsubscribed", want)
		}
	}
}
