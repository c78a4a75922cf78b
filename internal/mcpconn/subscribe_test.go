package mcpconn

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/openprogram/mcpvisor/config"
	"github.com/openprogram/mcpvisor/events"
)

// wanted is a fixed Subscriptions.
type wanted []string

func (w wanted) URIs() []string { return w }
func (w wanted) Wants(uri string) bool {
	for _, u := range w {
		if u == uri {
			return true
		}
	}
	return false
}

// subscribeServer is an in-memory server of one protocol version whose
// subscribe handler reports each URI on entered and then waits for
// release (or refuses URIs starting with "refused:").
func subscribeServer(t *testing.T, protocol string, entered chan<- string, release <-chan struct{}) (mcp.Transport, *mcp.Server) {
	t.Helper()
	return watchedSubscribeServer(t, protocol, entered, release, nil)
}

// watchedSubscribeServer is subscribeServer that also reports on left
// (if not nil) each URI unsubscribed (on 2026-07-28: each listen torn
// down).
func watchedSubscribeServer(t *testing.T, protocol string, entered chan<- string, release <-chan struct{}, left chan<- string) (mcp.Transport, *mcp.Server) {
	t.Helper()
	srv := mcp.NewServer(&mcp.Implementation{Name: "subs"}, &mcp.ServerOptions{
		SupportedProtocolVersions: []string{protocol},
		SubscribeHandler: func(ctx context.Context, req *mcp.SubscribeRequest) error {
			entered <- req.Params.URI
			if len(req.Params.URI) > 8 && req.Params.URI[:8] == "refused:" {
				return errors.New("no such resource")
			}
			select {
			case <-release:
			case <-ctx.Done():
			}
			return nil
		},
		UnsubscribeHandler: func(_ context.Context, req *mcp.UnsubscribeRequest) error {
			if left != nil {
				left <- req.Params.URI
			}
			return nil
		},
	})
	srv.AddResource(&mcp.Resource{URI: "mem://a", Name: "a"}, func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{}, nil
	})
	ct, st := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(t.Context(), st, nil)
	if err != nil {
		t.Fatalf("server connect: %v", err)
	}
	t.Cleanup(func() { ss.Close() })
	return ct, srv
}

// TestSubscribeAnswers pins down what the SDK's Subscribe returns and
// when, on each protocol: on 2025-11-25 it is the resources/subscribe
// request (it waits for the server's handler and carries its refusal);
// on 2026-07-28 it opens a subscriptions/listen stream and returns before
// the server acknowledged (or refused) anything. That is why a
// subscription's 201 only means "requested".
func TestSubscribeAnswers(t *testing.T) {
	for _, tc := range []struct {
		protocol       string
		waitsForServer bool
	}{{"2025-11-25", true}, {"2026-07-28", false}} {
		t.Run(tc.protocol, func(t *testing.T) {
			entered := make(chan string, 8)
			release := make(chan struct{})
			var releaseOnce sync.Once
			defer releaseOnce.Do(func() { close(release) })
			ct, _ := subscribeServer(t, tc.protocol, entered, release)
			conn, err := testDial(t.Context(), Options{
				Server:    config.Server{Name: "s", Type: config.TypeLocal, Command: []string{"unused"}, Enabled: true},
				Transport: ct,
			})
			if err != nil {
				t.Fatalf("Dial: %v", err)
			}
			defer conn.Close()
			done := make(chan error, 1)
			go func() { done <- conn.Subscribe(context.Background(), "mem://a") }()
			if got := <-entered; got != "mem://a" {
				t.Fatalf("the server saw a subscription of %q", got)
			}
			// The server's handler is still running, so nothing has been
			// acknowledged yet.
			if tc.waitsForServer {
				select {
				case err := <-done:
					t.Fatalf("Subscribe returned (%v) before the server answered", err)
				default:
				}
				releaseOnce.Do(func() { close(release) })
			}
			select {
			case err := <-done:
				if err != nil {
					t.Fatalf("Subscribe: %v", err)
				}
			case <-time.After(5 * time.Second):
				t.Fatal("Subscribe did not return")
			}
			releaseOnce.Do(func() { close(release) })
			err = conn.Subscribe(context.Background(), "refused:x")
			<-entered
			if gotErr := err != nil; gotErr != tc.waitsForServer {
				t.Errorf("Subscribe of a URI the server refuses = %v; want an error only on 2025-11-25", err)
			}
		})
	}
}

// TestDialSubscribesWantedURIs: a new session subscribes to the URIs the
// host wants once it is up (on 2025-11-25, where that is a request), and
// only updates of wanted URIs become events.
func TestDialSubscribesWantedURIs(t *testing.T) {
	entered := make(chan string, 8)
	release := make(chan struct{})
	close(release)
	ct, srv := subscribeServer(t, "2025-11-25", entered, release)
	got := make(chan events.Event, 8)
	conn, err := testDial(t.Context(), Options{
		Server:    config.Server{Name: "s", Type: config.TypeLocal, Command: []string{"unused"}, Enabled: true},
		Transport: ct,
		Emit:      func(e events.Event) { got <- e },
		Features:  Features{Subscriptions: wanted{"mem://a"}},
	})
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	defer conn.Close()
	select {
	case uri := <-entered:
		if uri != "mem://a" {
			t.Fatalf("subscribed %q", uri)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the new session did not subscribe to the wanted URI")
	}
	// The server also has mem://b subscribed, which the host does not
	// want (any more): its updates are dropped. Notifications arrive in
	// order.
	if err := conn.Subscribe(t.Context(), "mem://b"); err != nil {
		t.Fatal(err)
	}
	<-entered
	for _, uri := range []string{"mem://b", "mem://a"} {
		if err := srv.ResourceUpdated(t.Context(), &mcp.ResourceUpdatedNotificationParams{URI: uri}); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case e := <-got:
		u, ok := e.(events.ResourceUpdated)
		if !ok || u.URI != "mem://a" || u.Server != "s" {
			t.Fatalf("first event %v, want resource_updated of mem://a", e)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no resource_updated")
	}
}
