package oauthcallback

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/jonboulle/clockwork"
	"go.uber.org/goleak"

	"github.com/openprogram/mcpvisor/actors"
	"github.com/openprogram/mcpvisor/internal/oauthflow"
	"github.com/openprogram/mcpvisor/messages"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// wait bounds every wait of these tests; none asserts on speed.
const wait = 10 * time.Second

const testState = "st-4f9a1c"

// parent stands in for the server actor: it spawns the callback actor as
// its child and reports the child's Terminated, so a test can see the
// actor stop by itself.
type parent struct {
	props   *actor.Props
	spawned chan *actor.PID
	done    chan struct{}
}

func (p *parent) Receive(c actor.Context) {
	switch c.Message().(type) {
	case *actor.Started:
		p.spawned <- c.Spawn(p.props)
	case *actor.Terminated:
		close(p.done)
	}
}

type fixture struct {
	t        *testing.T
	system   *actor.ActorSystem
	work     *sync.WaitGroup
	deps     *actors.Deps
	port     int
	authURL  string
	redirect string
	reply    chan messages.LoginResult
	opened   chan string
	client   *http.Client
	parent   *actor.PID
	child    *actor.PID
	done     chan struct{}
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	logger := slog.New(slog.DiscardHandler)
	f := &fixture{
		t:    t,
		work: &sync.WaitGroup{},
		port: freePort(t),
		// An https authorization URL whose state the redirect must carry.
		authURL: "https://as.example.com/authorize?response_type=code&client_id=c1&state=" + testState,
		reply:   make(chan messages.LoginResult, 1),
		opened:  make(chan string, 4),
		client: &http.Client{
			Transport: &http.Transport{DisableKeepAlives: true},
			Timeout:   wait,
		},
	}
	f.redirect = fmt.Sprintf("http://127.0.0.1:%d/callback", f.port)
	f.system = actor.NewActorSystem(
		actor.WithLoggerFactory(func(*actor.ActorSystem) *slog.Logger { return logger }),
		actor.WithDeadLetterRequestLogging(false),
		actor.WithDeadLetterThrottleInterval(50*time.Millisecond),
	)
	f.deps = &actors.Deps{Logger: logger, Work: f.work}
	t.Cleanup(f.close)
	return f
}

// request is the default login request of f.
func (f *fixture) request() Request {
	return Request{
		URL:         f.authURL,
		RedirectURI: f.redirect,
		Reply:       f.reply,
		OpenURL:     f.recordOpen,
		Timeout:     5 * time.Minute, // what the runtime resolves by default
	}
}

func (f *fixture) recordOpen(_ context.Context, u string) error {
	f.opened <- u
	return nil
}

// spawn starts the callback actor for req as the child of a test parent.
func (f *fixture) spawn(req Request) {
	f.t.Helper()
	p := &parent{
		props:   Props(f.deps, f.deps.Logger, req),
		spawned: make(chan *actor.PID, 1),
		done:    make(chan struct{}),
	}
	pid, err := f.system.Root.SpawnNamed(actors.Props(f.deps, func() actor.Actor { return p }), "server")
	if err != nil {
		f.t.Fatal(err)
	}
	f.parent = pid
	select {
	case f.child = <-p.spawned:
	case <-time.After(wait):
		f.t.Fatal("the parent did not spawn the callback actor")
	}
	f.done = p.done
}

// waitOpened waits for OpenURL, which runs only once the socket listens.
func (f *fixture) waitOpened() string {
	f.t.Helper()
	select {
	case u := <-f.opened:
		return u
	case <-time.After(wait):
		f.t.Fatal("OpenURL was not called")
		return ""
	}
}

func (f *fixture) waitResult() messages.LoginResult {
	f.t.Helper()
	select {
	case r := <-f.reply:
		return r
	case <-time.After(wait):
		f.t.Fatal("no LoginResult")
		return messages.LoginResult{}
	}
}

func (f *fixture) noResult() {
	f.t.Helper()
	select {
	case r := <-f.reply:
		f.t.Fatalf("unexpected LoginResult %+v", r)
	default:
	}
}

// waitStopped waits until the callback actor has terminated by itself.
// wantRefused checks a login refused before it began: an error that is
// no cancellation, no code or state, the actor stopped, no browser opened.
func (f *fixture) wantRefused(t *testing.T) messages.LoginResult {
	t.Helper()
	r := f.waitResult()
	if r.Err == nil || r.Code != "" || r.State != "" {
		t.Fatalf("result = %+v, want an error and no code", r)
	}
	if errors.Is(r.Err, oauthflow.ErrLoginCancelled) {
		t.Errorf("err = %v: a refused login is not a cancellation", r.Err)
	}
	f.waitStopped()
	f.waitWork()
	select {
	case u := <-f.opened:
		t.Fatalf("OpenURL(%q) called for a login that could not start", u)
	default:
	}
	return r
}

func (f *fixture) waitStopped() {
	f.t.Helper()
	select {
	case <-f.done:
	case <-time.After(wait):
		f.t.Fatal("the callback actor did not stop")
	}
}

// waitWork waits for the goroutines the actor handed to Deps.Work.
func (f *fixture) waitWork() {
	f.t.Helper()
	drained := make(chan struct{})
	go func() { f.work.Wait(); close(drained) }()
	select {
	case <-drained:
	case <-time.After(wait):
		f.t.Fatal("Deps.Work did not drain")
	}
}

func (f *fixture) close() {
	if f.parent != nil {
		// Stopping the parent stops the callback actor first.
		_ = f.system.Root.StopFuture(f.parent).Wait()
	}
	f.waitWork()
	f.system.Shutdown()
	f.client.CloseIdleConnections()
}

// get sends a GET to the redirect path with query q.
func (f *fixture) get(q url.Values) (int, string, http.Header) {
	f.t.Helper()
	resp, err := f.client.Get(f.redirect + "?" + q.Encode())
	if err != nil {
		f.t.Fatalf("GET the redirect: %v", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		f.t.Fatalf("reading the page: %v", err)
	}
	return resp.StatusCode, string(body), resp.Header
}

// assertClosed checks that nothing listens on the port any more.
func (f *fixture) assertClosed() {
	f.t.Helper()
	c, err := net.DialTimeout("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(f.port)), wait)
	if err == nil {
		c.Close()
		f.t.Fatalf("port %d still accepts connections", f.port)
	}
}

// alive asks the callback actor to describe itself.
func (f *fixture) alive() bool {
	f.t.Helper()
	if _, ok := f.system.ProcessRegistry.Get(f.child); !ok {
		return false
	}
	reply := make(chan messages.Description, 1)
	f.system.Root.Send(f.child, messages.Describe{Reply: reply})
	select {
	case d := <-reply:
		return d.Kind == "oauthcallback" && d.State == "waiting"
	case <-time.After(wait):
		return false
	}
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	return port
}

func codeQuery(state, code, iss string) url.Values {
	q := url.Values{"state": {state}, "code": {code}}
	if iss != "" {
		q.Set("iss", iss)
	}
	return q
}

// (a) The right state and a code: exactly that code, state and iss reach
// the waiter, the browser gets a 200 HTML page, the actor stops by itself
// and the port is closed.
func TestRedirectDeliversCode(t *testing.T) {
	f := newFixture(t)
	f.spawn(f.request())
	f.waitOpened()

	status, body, hdr := f.get(codeQuery(testState, "code-abc", "https://as.example.com"))
	if status != http.StatusOK {
		t.Fatalf("status = %d, want 200; body %q", status, body)
	}
	if ct := hdr.Get("Content-Type"); !strings.HasPrefix(ct, "text/html") {
		t.Errorf("Content-Type = %q, want text/html", ct)
	}
	if !strings.Contains(body, "<h1>Logged in</h1>") {
		t.Errorf("page = %q, want the logged-in page", body)
	}
	r := f.waitResult()
	if r.Err != nil || r.Code != "code-abc" || r.State != testState || r.Iss != "https://as.example.com" {
		t.Fatalf("result = %+v, want code-abc/%s/https://as.example.com", r, testState)
	}
	f.waitStopped()
	f.assertClosed()
	f.waitWork()
	f.noResult()
}

// (b) A wrong state is refused with 400, delivers nothing and the login
// keeps waiting; so are a right state without a code and a POST. A later
// right redirect still succeeds.
func TestWrongStateKeepsWaiting(t *testing.T) {
	f := newFixture(t)
	f.spawn(f.request())
	f.waitOpened()

	if status, body, _ := f.get(codeQuery("not-the-state", "code-evil", "")); status != http.StatusBadRequest {
		t.Fatalf("wrong state: status = %d, want 400; body %q", status, body)
	}
	f.noResult()
	q := url.Values{"state": {"not-the-state"}, "error": {"access_denied"}}
	if status, _, _ := f.get(q); status != http.StatusBadRequest {
		t.Fatalf("error with a wrong state: status = %d, want 400", status)
	}
	f.noResult()
	if status, _, _ := f.get(url.Values{"state": {testState}}); status != http.StatusBadRequest {
		t.Fatalf("no code: status = %d, want 400", status)
	}
	f.noResult()
	resp, err := f.client.Post(f.redirect+"?"+codeQuery(testState, "code-post", "").Encode(), "text/plain", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Fatalf("POST: status = %d, want 405", resp.StatusCode)
	}
	f.noResult()
	if !f.alive() {
		t.Fatal("the login stopped waiting after rejected redirects")
	}

	if status, body, _ := f.get(codeQuery(testState, "code-good", "")); status != http.StatusOK {
		t.Fatalf("right state: status = %d, want 200; body %q", status, body)
	}
	r := f.waitResult()
	if r.Err != nil || r.Code != "code-good" || r.State != testState || r.Iss != "" {
		t.Fatalf("result = %+v, want code-good", r)
	}
	f.waitStopped()
	f.assertClosed()
}

// (c) An error redirect with the right state fails the login with an error
// matching ErrNeedsReauth, and no code.
func TestErrorRedirectNeedsReauth(t *testing.T) {
	f := newFixture(t)
	f.spawn(f.request())
	f.waitOpened()

	q := url.Values{"state": {testState}, "error": {"access_denied"}, "error_description": {"the user said no"}}
	status, body, _ := f.get(q)
	if status != http.StatusOK || !strings.Contains(body, "Login failed") {
		t.Fatalf("status = %d, body %q; want 200 and the failure page", status, body)
	}
	r := f.waitResult()
	if !errors.Is(r.Err, oauthflow.ErrNeedsReauth) {
		t.Fatalf("err = %v, want ErrNeedsReauth", r.Err)
	}
	if r.Code != "" || r.State != "" || r.Iss != "" {
		t.Fatalf("result = %+v, want no code, state or iss", r)
	}
	if !strings.Contains(r.Err.Error(), "access_denied") {
		t.Errorf("err = %v, want it to name access_denied", r.Err)
	}
	f.waitStopped()
	f.assertClosed()
}

// (d) Stopping the actor while it waits fails the waiter with
// ErrLoginCancelled, closes the socket, and cancels an OpenURL still
// running.
func TestStopCancelsLogin(t *testing.T) {
	f := newFixture(t)
	openDone := make(chan error, 1)
	req := f.request()
	req.OpenURL = func(ctx context.Context, u string) error {
		f.opened <- u
		<-ctx.Done() // a browser launcher that hangs until cancelled
		openDone <- ctx.Err()
		return ctx.Err()
	}
	f.spawn(req)
	f.waitOpened()
	f.noResult()

	if err := f.system.Root.StopFuture(f.child).Wait(); err != nil {
		t.Fatalf("StopFuture: %v", err)
	}
	r := f.waitResult()
	if !errors.Is(r.Err, oauthflow.ErrLoginCancelled) {
		t.Fatalf("err = %v, want ErrLoginCancelled", r.Err)
	}
	if r.Code != "" || r.State != "" || r.Iss != "" {
		t.Fatalf("result = %+v, want no code, state or iss", r)
	}
	f.assertClosed()
	select {
	case err := <-openDone:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("OpenURL's context ended with %v, want Canceled", err)
		}
	case <-time.After(wait):
		t.Fatal("OpenURL's context was not cancelled by the stop")
	}
	f.waitStopped()
	f.waitWork()
	f.noResult()
}

// (e) No answer within Timeout: ErrLoginCancelled, and the port is freed.
func TestTimeoutCancelsLogin(t *testing.T) {
	f := newFixture(t)
	clock := clockwork.NewFakeClock()
	f.deps.Clock = clock
	req := f.request()
	req.Timeout = 200 * time.Millisecond
	f.spawn(req)
	f.waitOpened()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	if err := clock.BlockUntilContext(ctx, 1); err != nil {
		t.Fatal("the login set no timeout")
	}
	clock.Advance(req.Timeout - time.Nanosecond)
	f.noResult() // not yet
	clock.Advance(time.Nanosecond)

	r := f.waitResult()
	if !errors.Is(r.Err, oauthflow.ErrLoginCancelled) {
		t.Fatalf("err = %v, want ErrLoginCancelled", r.Err)
	}
	if r.Code != "" || r.State != "" {
		t.Fatalf("result = %+v, want no code or state", r)
	}
	f.waitStopped()
	f.assertClosed()
	// The port is free for the next login of this server.
	l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(f.port)))
	if err != nil {
		t.Fatalf("port not freed: %v", err)
	}
	l.Close()
}

// (f) A port in use fails the login at once, without a code and without
// opening the browser.
func TestPortInUse(t *testing.T) {
	f := newFixture(t)
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	f.port = busy.Addr().(*net.TCPAddr).Port
	f.redirect = fmt.Sprintf("http://127.0.0.1:%d/callback", f.port)
	f.spawn(f.request())

	r := f.wantRefused(t)
	if !errors.Is(r.Err, syscall.EADDRINUSE) {
		t.Errorf("err = %v, want it to wrap EADDRINUSE", r.Err)
	}
	f.noResult()
}

// (g) Exactly one result: once a code was delivered, later redirects with
// the right state (a code or an error) get 409, no second delivery, and
// block nothing, although the first result still fills the one-slot
// channel. The actor's mailbox is suspended meanwhile so that it cannot
// stop and close the socket before the later redirects arrive.
func TestExactlyOneResult(t *testing.T) {
	f := newFixture(t)
	f.spawn(f.request())
	f.waitOpened()
	proc, ok := f.system.ProcessRegistry.Get(f.child)
	if !ok {
		t.Fatal("callback actor not registered")
	}
	// A system message posted before the first redirect is handled before
	// the finished message that redirect causes.
	proc.SendSystemMessage(f.child, &actor.SuspendMailbox{})

	if status, body, _ := f.get(codeQuery(testState, "code-first", "")); status != http.StatusOK {
		t.Fatalf("first redirect: status = %d, want 200; body %q", status, body)
	}
	if n := len(f.reply); n != 1 {
		t.Fatalf("%d results queued after the first redirect, want 1", n)
	}
	// A second delivery would block its handler on the full channel and
	// the request would time out instead of answering.
	if status, body, _ := f.get(codeQuery(testState, "code-second", "")); status != http.StatusConflict {
		t.Fatalf("second redirect: status = %d, want 409; body %q", status, body)
	}
	q := url.Values{"state": {testState}, "error": {"access_denied"}}
	if status, body, _ := f.get(q); status != http.StatusConflict {
		t.Fatalf("error redirect after the code: status = %d, want 409; body %q", status, body)
	}
	if n := len(f.reply); n != 1 {
		t.Fatalf("%d results queued, want 1", n)
	}

	proc.SendSystemMessage(f.child, &actor.ResumeMailbox{})
	f.waitStopped()
	f.waitWork() // every goroutine that could deliver is done
	r := f.waitResult()
	if r.Err != nil || r.Code != "code-first" || r.State != testState {
		t.Fatalf("result = %+v, want code-first", r)
	}
	f.noResult()
	f.assertClosed()
}

// (h) OpenURL gets the authorization URL; one that fails does not fail
// the login.
func TestOpenURL(t *testing.T) {
	t.Run("receives the authorization URL", func(t *testing.T) {
		f := newFixture(t)
		f.spawn(f.request())
		if got := f.waitOpened(); got != f.authURL {
			t.Fatalf("OpenURL got %q, want %q", got, f.authURL)
		}
		f.get(codeQuery(testState, "c1", ""))
		if r := f.waitResult(); r.Err != nil || r.Code != "c1" {
			t.Fatalf("result = %+v", r)
		}
		f.waitStopped()
	})
	t.Run("an error does not fail the login", func(t *testing.T) {
		f := newFixture(t)
		req := f.request()
		req.OpenURL = func(_ context.Context, u string) error {
			f.opened <- u
			return errors.New("no browser here")
		}
		warned := make(chan string, 4)
		f.deps.Logger = slog.New(warnHandler{warned})
		f.spawn(req)
		if got := f.waitOpened(); got != f.authURL {
			t.Fatalf("OpenURL got %q, want %q", got, f.authURL)
		}
		select { // the actor has seen OpenURL's error
		case msg := <-warned:
			if !strings.Contains(msg, "could not open the browser") {
				t.Fatalf("warning %q, want the could-not-open one", msg)
			}
		case <-time.After(wait):
			t.Fatal("OpenURL's error was not logged")
		}
		f.noResult()
		if !f.alive() {
			t.Fatal("a failed OpenURL ended the login")
		}
		if status, _, _ := f.get(codeQuery(testState, "c2", "")); status != http.StatusOK {
			t.Fatalf("status = %d, want 200", status)
		}
		if r := f.waitResult(); r.Err != nil || r.Code != "c2" {
			t.Fatalf("result = %+v, want c2", r)
		}
		f.waitStopped()
	})
	t.Run("nil OpenURL", func(t *testing.T) {
		f := newFixture(t)
		req := f.request()
		req.OpenURL = nil
		f.spawn(req)
		if !f.alive() {
			t.Fatal("the login is not waiting")
		}
		if status, _, _ := f.get(codeQuery(testState, "c3", "")); status != http.StatusOK {
			t.Fatalf("status = %d, want 200", status)
		}
		if r := f.waitResult(); r.Err != nil || r.Code != "c3" {
			t.Fatalf("result = %+v, want c3", r)
		}
		f.waitStopped()
	})
}

// (i) A redirect URI that is not a loopback http URL with a port, or an
// authorization URL without a state, is refused without listening or
// opening the browser.
func TestBadRequestRefused(t *testing.T) {
	cases := []struct {
		name     string
		redirect func(port int) string
		authURL  string
	}{
		{"remote host", func(p int) string { return fmt.Sprintf("http://example.com:%d/callback", p) }, ""},
		{"remote IP", func(p int) string { return fmt.Sprintf("http://192.0.2.1:%d/callback", p) }, ""},
		{"https", func(p int) string { return fmt.Sprintf("https://127.0.0.1:%d/callback", p) }, ""},
		{"no port", func(int) string { return "http://127.0.0.1/callback" }, ""},
		{"no state", func(p int) string { return fmt.Sprintf("http://127.0.0.1:%d/callback", p) }, "https://as.example.com/authorize?client_id=c1"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			f.redirect = tc.redirect(f.port)
			if tc.authURL != "" {
				f.authURL = tc.authURL
			}
			f.spawn(f.request())
			f.wantRefused(t)
			f.assertClosed()
		})
	}
}

// A loopback redirect named "localhost" or [::1] still listens on the IPv4
// loopback only.
func TestLoopbackNamesListenOn127(t *testing.T) {
	for _, host := range []string{"localhost", "[::1]"} {
		t.Run(host, func(t *testing.T) {
			f := newFixture(t)
			f.redirect = fmt.Sprintf("http://%s:%d/cb", host, f.port)
			f.spawn(f.request())
			f.waitOpened()
			resp, err := f.client.Get(fmt.Sprintf("http://127.0.0.1:%d/cb?%s", f.port, codeQuery(testState, "c-"+host, "").Encode()))
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("status = %d, want 200", resp.StatusCode)
			}
			if r := f.waitResult(); r.Err != nil || r.Code != "c-"+host {
				t.Fatalf("result = %+v", r)
			}
			f.waitStopped()
		})
	}
}

// warnHandler passes the messages of warnings to a channel.
type warnHandler struct{ ch chan string }

func (h warnHandler) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelWarn }
func (h warnHandler) Handle(_ context.Context, r slog.Record) error {
	select {
	case h.ch <- r.Message:
	default:
	}
	return nil
}
func (h warnHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h warnHandler) WithGroup(string) slog.Handler      { return h }

// A Listener handed over in the request is served instead of a new one,
// and closed when the login ends.
func TestHandedOverListener(t *testing.T) {
	f := newFixture(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	f.port = ln.Addr().(*net.TCPAddr).Port
	f.redirect = fmt.Sprintf("http://127.0.0.1:%d/callback", f.port)
	req := f.request()
	req.Listener = ln
	f.spawn(req)
	f.waitOpened()

	if status, body, _ := f.get(codeQuery(testState, "code-ln", "")); status != http.StatusOK {
		t.Fatalf("status = %d, want 200; body %q", status, body)
	}
	if r := f.waitResult(); r.Err != nil || r.Code != "code-ln" {
		t.Fatalf("result = %+v, want code-ln", r)
	}
	f.waitStopped()
	f.assertClosed()
}

// A handed-over Listener of a request that is refused is closed, not
// leaked.
func TestHandedOverListenerClosedOnRefusal(t *testing.T) {
	f := newFixture(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	f.port = ln.Addr().(*net.TCPAddr).Port
	f.redirect = fmt.Sprintf("http://127.0.0.1:%d/callback", f.port)
	f.authURL = "https://as.example.com/authorize?client_id=c1" // no state
	req := f.request()
	req.Listener = ln
	f.spawn(req)

	r := f.waitResult()
	if r.Err == nil || r.Code != "" {
		t.Fatalf("result = %+v, want an error and no code", r)
	}
	f.waitStopped()
	f.waitWork()
	select {
	case u := <-f.opened:
		t.Fatalf("OpenURL(%q) called for a refused request", u)
	default:
	}
	f.assertClosed()
}
