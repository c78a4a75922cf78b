package runtime

import (
	"context"
	"fmt"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/openprogram/mcpvisor/internal/testutil"
)

// subscriber is a go-sdk client of a gateway that records the URIs of the
// notifications/resources/updated it gets.
type subscriber struct {
	*mcp.ClientSession
	updates chan string
	proto   string
}

// connectSubscriber connects a client speaking proto to srv in memory.
func connectSubscriber(t *testing.T, srv *mcp.Server, proto string) *subscriber {
	t.Helper()
	s := &subscriber{updates: make(chan string, 256), proto: proto}
	ct, st := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(t.Context(), st, nil)
	if err != nil {
		t.Fatalf("server Connect: %v", err)
	}
	t.Cleanup(func() { _ = ss.Close() })
	client := mcp.NewClient(&mcp.Implementation{Name: "subscriber", Version: "1"}, &mcp.ClientOptions{
		ResourceUpdatedHandler: func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) {
			select {
			case s.updates <- req.Params.URI:
			default:
			}
		},
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: proto})
	if err != nil {
		t.Fatalf("client Connect: %v", err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	s.ClientSession = cs
	return s
}

// subscribe subscribes to uri. On 2026-07-28 the SDK's Subscribe is a
// subscriptions/listen stream that returns when it ends: it runs in the
// background until Unsubscribe or the session's end.
func (s *subscriber) subscribe(t *testing.T, uri string) {
	t.Helper()
	if s.proto == "2026-07-28" {
		go func() { _ = s.Subscribe(context.Background(), &mcp.SubscribeParams{URI: uri}) }()
		return
	}
	if err := s.Subscribe(t.Context(), &mcp.SubscribeParams{URI: uri}); err != nil {
		t.Fatalf("subscribing to %s through the gateway: %v", uri, err)
	}
}

// awaitTemplate waits until the gateway serves a resource template (the
// notes: it lists ex's resources once ex is ready).
func (s *subscriber) awaitTemplate(t *testing.T) {
	t.Helper()
	testutil.Eventually(t, 30*time.Second, "the notes template served", func() bool {
		res, err := s.ListResourceTemplates(t.Context(), nil)
		return err == nil && len(res.ResourceTemplates) > 0
	})
}

// upstream is the runtime's state of uri on server: how many holders it
// has and whether the server is subscribed.
func upstream(rt *testRuntime, server, uri string) (holders int, subscribed bool) {
	rt.subs.mu.Lock()
	defer rt.subs.mu.Unlock()
	if ss := rt.subs.servers[server]; ss != nil {
		if u := ss.uris[uri]; u != nil {
			return u.holders, u.subscribed
		}
	}
	return 0, false
}

func awaitUpstream(t *testing.T, rt *testRuntime, server, uri string, holders int, subscribed bool) {
	t.Helper()
	testutil.Eventually(t, 30*time.Second, fmt.Sprintf("%s on %s: %d holders, subscribed %v", uri, server, holders, subscribed), func() bool {
		h, s := upstream(rt, server, uri)
		return h == holders && s == subscribed
	})
}

// updateUntil calls the example server's update tool of note id through
// the runtime until every one of subs got an update under want (the
// upstream subscription of a 2026-07-28 session is acknowledged on its
// stream after SubscribeResource returns, so a first update may precede
// it), and fails on an update of another URI than want or allowed.
func updateUntil(t *testing.T, rt *testRuntime, id, want string, allowed []string, subs ...*subscriber) {
	t.Helper()
	got := make([]bool, len(subs))
	for range 40 {
		mustCall(t, rt, "ex__update", map[string]any{"id": id})
		deadline := time.After(500 * time.Millisecond)
	wait:
		for {
			all := true
			for i, s := range subs {
				for !got[i] {
					select {
					case uri := <-s.updates:
						switch {
						case uri == want:
							got[i] = true
						case !slices.Contains(allowed, uri):
							t.Fatalf("client %d got an update of %s, want only %s", i, uri, want)
						}
						continue
					case <-deadline:
						break wait
					}
				}
				all = all && got[i]
			}
			if all {
				return
			}
		}
	}
	t.Fatalf("not every client got an update of %s: %v", want, got)
}

// A client's resources/subscribe through the gateway subscribes the
// upstream server once however many clients subscribe; each client gets
// the server's updates under the URI it subscribed with (its own or the
// mcpvisor: one); the last unsubscribe, or the end of a session that never
// unsubscribed, unsubscribes the server.
func TestGatewayResourceSubscriptions(t *testing.T) {
	for _, proto := range protocols {
		t.Run(proto, func(t *testing.T) {
			rt := start(t, Options{}, exampleServer("ex", "-update-tool", "-protocol", proto))
			rt.waitReady(t, "ex")
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			m, err := rt.serveMirror(ctx, MCPServerOptions{})
			if err != nil {
				t.Fatal(err)
			}
			a, b := connectSubscriber(t, m.srv, proto), connectSubscriber(t, m.srv, proto)
			if caps := a.InitializeResult().Capabilities; caps.Resources == nil || !caps.Resources.Subscribe {
				t.Fatalf("the gateway's resources capability = %+v, want subscribe", caps.Resources)
			}
			// The gateway lists the notes template once it listed ex.
			a.awaitTemplate(t)

			const note = "demo://notes/7"
			a.subscribe(t, note)
			b.subscribe(t, note)
			testutil.Eventually(t, 10*time.Second, "two clients holding note 7", func() bool { return gatewayHolders(m, note) == 2 })
			awaitUpstream(t, rt, "ex", note, 1, true)
			updateUntil(t, rt, "7", note, nil, a, b)
			if h, _ := upstream(rt, "ex", note); h != 1 {
				t.Errorf("two clients of one URI hold %d runtime subscriptions, want 1", h)
			}

			// Under the prefixed URI: the update comes under it.
			prefixed := GatewayURI("ex", "demo://notes/9")
			a.subscribe(t, prefixed)
			awaitUpstream(t, rt, "ex", "demo://notes/9", 1, true)
			updateUntil(t, rt, "9", prefixed, []string{note}, a)

			// a leaves note 7: b still gets it, the server stays
			// subscribed; a gets no more of it (its stream is in order:
			// note 7's update would come before note 8's).
			if err := a.Unsubscribe(t.Context(), &mcp.UnsubscribeParams{URI: note}); err != nil {
				t.Fatal(err)
			}
			testutil.Eventually(t, 10*time.Second, "a's hold of note 7 gone", func() bool { return gatewayHolders(m, note) == 1 })
			a.subscribe(t, "demo://notes/8")
			awaitUpstream(t, rt, "ex", "demo://notes/8", 1, true)
			drainURIs(a.updates)
			mustCall(t, rt, "ex__update", map[string]any{"id": "7"})
			updateUntil(t, rt, "8", "demo://notes/8", nil, a)
			updateUntil(t, rt, "7", note, nil, b)
			if h, s := upstream(rt, "ex", note); h != 1 || !s {
				t.Errorf("note 7 with one client left: %d holders, subscribed %v; want 1, true", h, s)
			}

			// b goes away without unsubscribing: the server is
			// unsubscribed from note 7.
			if err := b.Close(); err != nil {
				t.Fatal(err)
			}
			awaitUpstream(t, rt, "ex", note, 0, false)
			if n := gatewayHolders(m, note); n != 0 {
				t.Errorf("note 7 held by %d sessions after the last one ended", n)
			}

			// Unknown URIs are refused; a's last unsubscribes end the rest.
			if err := a.Subscribe(t.Context(), &mcp.SubscribeParams{URI: "nowhere://x"}); err == nil && proto != "2026-07-28" {
				t.Error("subscribing to a URI the gateway does not serve succeeded")
			}
			for _, uri := range []string{prefixed, "demo://notes/8"} {
				if err := a.Unsubscribe(t.Context(), &mcp.UnsubscribeParams{URI: uri}); err != nil {
					t.Fatal(err)
				}
			}
			awaitUpstream(t, rt, "ex", "demo://notes/9", 0, false)
			awaitUpstream(t, rt, "ex", "demo://notes/8", 0, false)
		})
	}
}

// gatewayHolders is how many client sessions of m hold uri.
func gatewayHolders(m *mirror, uri string) int {
	m.subs.mu.Lock()
	defer m.subs.mu.Unlock()
	if e := m.subs.uris[uri]; e != nil {
		return len(e.holders)
	}
	return 0
}

func drainURIs(c chan string) {
	for {
		select {
		case <-c:
		default:
			return
		}
	}
}

// One client session may hold at most MaxGatewaySubscriptionsPerSession
// subscriptions; the error names the limit.
func TestGatewaySubscriptionCap(t *testing.T) {
	rt := start(t, Options{}, exampleServer("ex", "-update-tool", "-protocol", "2025-11-25"))
	rt.waitReady(t, "ex")
	srv, err := rt.MCPServer(t.Context(), MCPServerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c := connectSubscriber(t, srv, "2025-11-25")
	c.awaitTemplate(t)
	for i := range MaxGatewaySubscriptionsPerSession {
		c.subscribe(t, fmt.Sprintf("demo://notes/%d", i))
	}
	err = c.Subscribe(t.Context(), &mcp.SubscribeParams{URI: "demo://notes/over"})
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("at most %d per client session", MaxGatewaySubscriptionsPerSession)) {
		t.Fatalf("subscription %d of one session: %v, want the limit named", MaxGatewaySubscriptionsPerSession+1, err)
	}
	// Subscribing again to a URI held is no new subscription.
	c.subscribe(t, "demo://notes/0")
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, 30*time.Second, "every upstream subscription released", func() bool {
		rt.subs.mu.Lock()
		defer rt.subs.mu.Unlock()
		return len(rt.subs.byID) == 0
	})
}

// Over Streamable HTTP: a client's update arrives on its stream, and its
// session's end (the client's DELETE) releases the upstream subscription.
func TestGatewaySubscriptionHTTP(t *testing.T) {
	rt := start(t, Options{}, exampleServer("ex", "-update-tool"))
	rt.waitReady(t, "ex")
	srv, err := rt.MCPServer(t.Context(), MCPServerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(MCPHandler(srv, MCPHTTPOptions{}))
	defer hs.Close()
	defer hs.CloseClientConnections()
	s := &subscriber{updates: make(chan string, 256), proto: "2025-11-25"}
	client := mcp.NewClient(&mcp.Implementation{Name: "subscriber", Version: "1"}, &mcp.ClientOptions{
		ResourceUpdatedHandler: func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) { s.updates <- req.Params.URI },
	})
	cs, err := client.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: hs.URL + "/mcp"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	s.ClientSession = cs
	s.awaitTemplate(t)
	s.subscribe(t, "demo://notes/3")
	awaitUpstream(t, rt, "ex", "demo://notes/3", 1, true)
	updateUntil(t, rt, "3", "demo://notes/3", nil, s)
	if err := cs.Close(); err != nil {
		t.Fatal(err)
	}
	awaitUpstream(t, rt, "ex", "demo://notes/3", 0, false)
}
