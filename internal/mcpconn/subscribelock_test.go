package mcpconn

import (
	"context"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/openprogram/mcpvisor/config"
	"github.com/openprogram/mcpvisor/events"
	"github.com/openprogram/mcpvisor/internal/testutil"
)

// churnWants wants mem://a. Its at-th Wants call runs hook and answers
// false: what it read just before the host's last holder left and a new
// one came (hook), which is the order the race needs.
type churnWants struct {
	calls atomic.Int32
	at    int32
	hook  func()
}

func (w *churnWants) URIs() []string { return []string{"mem://a"} }
func (w *churnWants) Wants(uri string) bool {
	if w.calls.Add(1) == w.at {
		w.hook()
		return false
	}
	return uri == "mem://a"
}

// dialSubscribeServer dials a fresh 2026-07-28 subscribeServer that
// acknowledges at once, with subs and emit; the caller closes the Conn.
func dialSubscribeServer(t *testing.T, subs Subscriptions, emit func(events.Event), left chan<- string) (*Conn, *mcp.Server) {
	t.Helper()
	release := make(chan struct{})
	close(release)
	ct, srv := watchedSubscribeServer(t, "2026-07-28", make(chan string, 8), release, left)
	conn, err := testDial(t.Context(), Options{
		Server:    config.Server{Name: "s", Type: config.TypeLocal, Command: []string{"unused"}, Enabled: true},
		Transport: ct,
		Emit:      emit,
		Features:  Features{Subscriptions: subs},
	})
	if err != nil {
		t.Fatal(err)
	}
	return conn, srv
}

// TestResubscribeUndoSparesNewHolder: the background subscribe of a new
// session checks, after subscribing, whether the URI is still wanted and
// unsubscribes it if not. When the last holder leaves and a new one
// subscribes around that check, the new holder's stream must survive:
// the check, its undo and the host's Subscribe/Unsubscribe of the URI
// are serialised. Without that the undo cancels the stream the new
// holder just opened, and the host holds a subscription with no stream.
func TestResubscribeUndoSparesNewHolder(t *testing.T) {
	connCh := make(chan *Conn, 1)
	churned := make(chan struct{})
	left := make(chan string, 8)
	w := &churnWants{at: 2} // the background subscribe's check after subscribing
	w.hook = func() {
		c := <-connCh
		go func() {
			defer close(churned)
			_ = c.Unsubscribe(context.Background(), "mem://a") // the last holder leaves
			// The server tears the first stream down before the new one
			// comes: a go-sdk server keeps one subscription per session
			// and URI, and a teardown after the new stream's start would
			// end that too.
			select {
			case <-left:
			case <-time.After(5 * time.Second):
				t.Error("the server did not tear the first stream down within 5 s")
				return
			}
			_ = c.Subscribe(context.Background(), "mem://a") // a new one comes
		}()
		// The churn runs to its end, or waits for the URI's lock.
		testutil.Eventually(t, 5*time.Second, "the host's churn to end or wait", func() bool {
			select {
			case <-churned:
				return true
			default:
				return c.reopen.locks.users("mem://a") > 1
			}
		})
	}
	got := make(chan events.Event, 64)
	conn, srv := dialSubscribeServer(t, w, func(e events.Event) { got <- e }, left)
	defer conn.Close()
	connCh <- conn
	select {
	case <-churned:
	case <-time.After(10 * time.Second):
		t.Fatal("the host's churn (unsubscribe, the server's teardown, subscribe) did not end within 10 s")
	}
	testutil.Eventually(t, 5*time.Second, "the URI's lock to be free", func() bool { return conn.reopen.locks.users("mem://a") == 0 })
	// The new stream is up once an update reaches the host; it never
	// does if the stream was cancelled.
	var e events.Event
	if !testutil.Within(5*time.Second, func() bool {
		_ = srv.ResourceUpdated(t.Context(), &mcp.ResourceUpdatedNotificationParams{URI: "mem://a"})
		select {
		case e = <-got:
			return true
		default:
			return false
		}
	}) {
		t.Fatal("the host holds mem://a but no update comes: the background subscribe's undo cancelled the new holder's stream")
	}
	if u, ok := e.(events.ResourceUpdated); !ok || u.URI != "mem://a" {
		t.Fatalf("got %v; want the update of mem://a", e)
	}
}

// TestSubscribeRacingCloseEndsItsStream: a Subscribe that races Close
// (the SDK's Close may cancel every stream before Subscribe records its
// own) leaves no SDK listen goroutine behind.
func TestSubscribeRacingCloseEndsItsStream(t *testing.T) {
	for i := range 300 {
		conn, _ := dialSubscribeServer(t, nil, nil, nil)
		done := make(chan struct{})
		go func() { _ = conn.Subscribe(context.Background(), "mem://a"); close(done) }()
		if i%2 == 0 {
			runtime.Gosched()
		}
		conn.Close()
		<-done
	}
	listens := func() int {
		buf := make([]byte, 1<<22)
		return strings.Count(string(buf[:runtime.Stack(buf, true)]), "mcp.callSubscriptionsListen")
	}
	if !testutil.Within(10*time.Second, func() bool { return listens() == 0 }) {
		t.Fatalf("%d SDK listen goroutines wait for ever on streams of closed sessions", listens())
	}
}

// TestReopenStateFollowsTheHost: a URI's reopening state goes when the
// host no longer wants it, and a fresh subscription starts it anew (a URI
// the reopener gave up on is reopened again).
func TestReopenStateFollowsTheHost(t *testing.T) {
	conn, _ := dialSubscribeServer(t, wanted{"mem://a"}, nil, nil)
	defer conn.Close()
	r := conn.reopen
	state := func(uri string) *reopenState {
		r.mu.Lock()
		defer r.mu.Unlock()
		return r.uris[uri]
	}
	gaveUp := func(uri string) {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.uris[uri] = &reopenState{gaveUp: true, opened: time.Now()}
	}

	gaveUp("mem://a")
	if err := conn.Subscribe(t.Context(), "mem://a"); err != nil {
		t.Fatal(err)
	}
	if st := state("mem://a"); st != nil {
		t.Fatalf("after a fresh subscribe the URI's state is %+v; want it gone (reopened again)", *st)
	}

	gaveUp("mem://a")
	if err := conn.Unsubscribe(t.Context(), "mem://a"); err != nil {
		t.Fatal(err)
	}
	if st := state("mem://a"); st != nil {
		t.Fatalf("after the unsubscribe the URI's state is %+v; want it gone", *st)
	}

	// An end of a URI the host does not want drops its state too.
	gaveUp("mem://gone")
	r.ended("mem://gone")
	if st := state("mem://gone"); st != nil {
		t.Fatalf("an end of an unwanted URI kept its state %+v", *st)
	}
}

// TestReopenGivesUpABusyLock: a reopen that cannot take its URI's lock
// within timeout_seconds (a host request of the URI holds it) lets the
// next end of the stream try again, rather than leave the URI marked as
// being reopened for the rest of the session.
func TestReopenGivesUpABusyLock(t *testing.T) {
	release := make(chan struct{})
	close(release)
	ct, _ := subscribeServer(t, "2026-07-28", make(chan string, 8), release)
	conn, err := testDial(t.Context(), Options{
		Server:    config.Server{Name: "s", Type: config.TypeLocal, Command: []string{"unused"}, Enabled: true, TimeoutSeconds: 1},
		Transport: ct,
		Features:  Features{Subscriptions: wanted{"mem://a"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	r := conn.reopen
	testutil.Eventually(t, 5*time.Second, "the background subscribe to end", func() bool { return r.locks.users("mem://a") == 0 })
	unlock, err := r.locks.lock(t.Context(), "mem://a")
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	r.ended("mem://a")
	busy := func() bool {
		r.mu.Lock()
		defer r.mu.Unlock()
		st := r.uris["mem://a"]
		return st == nil || st.busy
	}
	if !busy() {
		t.Fatal("the end did not start a reopen")
	}
	testutil.Eventually(t, 10*time.Second, "the reopen to give up the busy lock", func() bool { return !busy() })
}
