// Package oauthcallback is the loopback OAuth callback actor: a child of a
// server actor that exists only while one interactive login waits.
//
// Contract:
//   - Started listens on the redirect URI's port on 127.0.0.1 (the port is
//     chosen once per server and reused, so the registered redirect_uri
//     keeps matching), then opens the authorization URL with the runtime's
//     OpenURL.
//   - A redirect whose state is not the login's is rejected and the login
//     keeps waiting; an error redirect with the right state fails it.
//   - Exactly one result reaches the waiter: the code, state and iss the
//     browser delivered, or an error. Stopping the actor (shutdown, delete,
//     disable, restart, timeout) closes the socket and fails the waiter
//     with oauthflow.ErrLoginCancelled; it never invents a code, a state
//     or a success.
package oauthcallback

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"html"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/jonboulle/clockwork"

	"github.com/openprogram/mcpvisor/actors"
	"github.com/openprogram/mcpvisor/events"
	"github.com/openprogram/mcpvisor/internal/netaddr"
	"github.com/openprogram/mcpvisor/internal/oauthflow"
	"github.com/openprogram/mcpvisor/internal/redact"
	"github.com/openprogram/mcpvisor/messages"
)

// Name is the actor's name among its server's children.
const Name = "oauthcallback"

// Request is the login the actor waits for.
type Request struct {
	// URL is the authorization URL to open; its state parameter is the
	// one the redirect must carry.
	URL string
	// RedirectURI is the loopback redirect, http://127.0.0.1:PORT/PATH.
	RedirectURI string
	// Reply receives exactly one result; it must have room for it.
	Reply chan messages.LoginResult
	// Listener, if set, is bound to the redirect's port already; the actor
	// takes it over instead of listening.
	Listener net.Listener
	// OpenURL sends the user to the authorization URL.
	OpenURL func(ctx context.Context, url string) error
	// Timeout bounds the wait. It must be set; the server actor passes
	// the runtime's resolved LoginTimeout (a zero would time out at once).
	Timeout time.Duration
	// Emit receives the actor's events (its panic): the server
	// incarnation's gated emit; nil is the bus.
	Emit func(events.Event)
}

// Props returns the props of the callback actor for req.
func Props(deps *actors.Deps, logger *slog.Logger, req Request) *actor.Props {
	return actors.PropsEmitting(deps, req.Emit, func() actor.Actor {
		return &Actor{deps: deps, logger: logger, req: req}
	})
}

// Actor is one waiting login.
type Actor struct {
	deps   *actors.Deps
	logger *slog.Logger
	name   string // the server whose login this is
	req    Request

	state      string
	since      time.Time
	listener   net.Listener
	server     *http.Server
	timer      clockwork.Timer
	cancelOpen context.CancelFunc

	once sync.Once // the one result
}

type (
	// finished: the browser's redirect was answered; the login is over.
	finished struct{}
	// timedOut: nobody came back from the browser in time.
	timedOut struct{}
)

// Receive handles lifecycle, then the reports of the HTTP goroutine and
// the timer.
func (a *Actor) Receive(c actor.Context) {
	switch msg := c.Message().(type) {
	case *actor.Started:
		a.start(c)
	case *actor.Stopping:
		a.stop()
	case finished:
		c.Stop(c.Self())
	case timedOut:
		a.deliver(messages.LoginResult{Err: fmt.Errorf("%w: no answer from the browser within %s", oauthflow.ErrLoginCancelled, a.timeout())})
		c.Stop(c.Self())
	case messages.Describe:
		msg.Reply <- messages.Description{Kind: "oauthcallback", State: "waiting", Since: a.since}
	case messages.Panic:
		panic("injected failure (debug)")
	}
}

func (a *Actor) timeout() time.Duration {
	return a.req.Timeout
}

func (a *Actor) start(c actor.Context) {
	a.since = a.deps.Now()
	a.name = actors.ServerOf(c.Self().Id)
	addr, path, err := a.parse()
	ln := a.req.Listener
	if err == nil && ln == nil {
		if ln, err = net.Listen("tcp", addr); err != nil {
			err = fmt.Errorf("oauth callback: listening on %s: %w", addr, err)
		}
	}
	if err != nil {
		if a.req.Listener != nil {
			a.req.Listener.Close()
		}
		a.deliver(messages.LoginResult{Err: err})
		c.Stop(c.Self())
		return
	}
	root, self := c.ActorSystem().Root, c.Self()
	mux := http.NewServeMux()
	mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) {
		if a.handle(w, r) {
			root.Send(self, finished{})
		}
	})
	a.listener = ln
	a.server = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	a.deps.Work.Go(func() { _ = a.server.Serve(ln) })
	a.timer = a.deps.AfterFunc(a.timeout(), func() { root.Send(self, timedOut{}) })

	ctx, cancel := context.WithCancel(context.Background())
	a.cancelOpen = cancel
	open, authURL, logger := a.req.OpenURL, a.req.URL, a.logger
	a.deps.Work.Go(func() {
		if open == nil {
			return
		}
		if err := open(ctx, authURL); err != nil && ctx.Err() == nil {
			logger.Warn("could not open the browser: open the authorize_url of the server's status yourself", "error", err)
		}
	})
}

// parse checks the request: a loopback http redirect and a state to match.
func (a *Actor) parse() (addr, path string, err error) {
	au, err := url.Parse(a.req.URL)
	if err != nil {
		return "", "", fmt.Errorf("oauth callback: bad authorization URL")
	}
	a.state = au.Query().Get("state")
	if a.state == "" {
		return "", "", errors.New("oauth callback: the authorization URL has no state")
	}
	ru, err := url.Parse(a.req.RedirectURI)
	if err != nil || ru.Scheme != "http" || !netaddr.Loopback(ru.Hostname()) || ru.Port() == "" {
		return "", "", fmt.Errorf("oauth callback: redirect URI %q is not a loopback http URL with a port", a.req.RedirectURI)
	}
	path = ru.Path
	if path == "" {
		path = "/"
	}
	// Listen on the IPv4 loopback whatever the URI says: "localhost" may
	// resolve to ::1 in the browser, but never to another machine.
	return net.JoinHostPort("127.0.0.1", ru.Port()), path, nil
}

// handle answers one request to the redirect path; true once the login is
// over (a code or an error with the right state).
func (a *Actor) handle(w http.ResponseWriter, r *http.Request) bool {
	if r.Method != http.MethodGet {
		page(w, http.StatusMethodNotAllowed, "Not a login redirect", "This address only takes the browser's redirect after a login.")
		return false
	}
	q := r.URL.Query()
	if subtle.ConstantTimeCompare([]byte(q.Get("state")), []byte(a.state)) != 1 {
		page(w, http.StatusBadRequest, "Unknown login", "This redirect does not belong to the login mcpvisor is waiting for. Nothing was done.")
		return false
	}
	if e := q.Get("error"); e != "" {
		// The description is the authorization server's, as long as it
		// likes: it goes into the status and a LoginFailed event.
		desc := redact.BoundError(q.Get("error_description"))
		if !a.deliver(messages.LoginResult{Err: fmt.Errorf("%w: the authorization server answered %.64q %s", oauthflow.ErrNeedsReauth, e, desc)}) {
			page(w, http.StatusConflict, "Login already handled", "This login is already over.")
			return false
		}
		page(w, http.StatusOK, "Login failed", "The authorization server refused the login ("+e+"). You can close this tab.")
		return true
	}
	code := q.Get("code")
	if code == "" {
		page(w, http.StatusBadRequest, "No code", "The redirect carries no authorization code. Nothing was done.")
		return false
	}
	if !a.deliver(messages.LoginResult{Code: code, State: q.Get("state"), Iss: q.Get("iss")}) {
		page(w, http.StatusConflict, "Login already handled", "This login is already over.")
		return false
	}
	page(w, http.StatusOK, "Logged in", "mcpvisor received the login. You can close this tab.")
	return true
}

// deliver hands the one result to the waiter; false if one was handed
// already.
func (a *Actor) deliver(r messages.LoginResult) bool {
	// The outcome event is the server actor's: it sees the session the
	// login was for succeed or fail, whichever part failed.
	done := false
	a.once.Do(func() {
		a.req.Reply <- r // room for one, by contract
		done = true
	})
	return done
}

// stop closes the socket at once (no new connection can reach a login
// that is over), lets a response being written finish in the background,
// and fails the waiter if nothing reached it.
func (a *Actor) stop() {
	if a.timer != nil {
		a.timer.Stop()
	}
	if a.cancelOpen != nil {
		a.cancelOpen()
	}
	if a.listener != nil {
		a.listener.Close()
		srv := a.server
		a.deps.Work.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			if srv.Shutdown(ctx) != nil {
				srv.Close()
			}
		})
	}
	a.deliver(messages.LoginResult{Err: oauthflow.ErrLoginCancelled})
}

func page(w http.ResponseWriter, status int, title, text string) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Referrer-Policy", "no-referrer")
	w.WriteHeader(status)
	fmt.Fprintf(w, "<!doctype html><meta charset=utf-8><title>%s</title><h1>%s</h1><p>%s</p>\n",
		html.EscapeString(title), html.EscapeString(title), html.EscapeString(text))
}
