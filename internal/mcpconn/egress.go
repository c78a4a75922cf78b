package mcpconn

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"

	"github.com/openprogram/mcpvisor/tools"
)

// RequestMarkHeader is on every HTTP request the runtime sends to a remote
// server or an authorization server, with the Runtime's id as its value
// (not a secret). The management API refuses any request that carries it,
// so no server can make a runtime drive its own (or another runtime's)
// API, wherever the host mounted it.
const RequestMarkHeader = "Mcpvisor-Request"

// Bounds of a remote server's answers. The SDK reads a plain JSON answer
// and an error body whole; these bound what it can be made to hold. An
// SSE stream is not bounded as a whole (it may rightly last for hours):
// the SDK bounds each of its events to 16 MiB.
const (
	// MaxResponseBody bounds a successful answer that is not an event
	// stream (a JSON-RPC response): 16 MiB, the stdio frame limit.
	MaxResponseBody = 16 << 20
	// MaxErrorBody bounds the body of an answer with a status outside
	// 2xx: 64 KiB. Its text may end up in an error message.
	MaxErrorBody = 64 << 10
)

// ErrCrossOrigin: a request or redirect would have taken the server's
// headers, token or request body to another origin (scheme, host and
// port) than the configured URL's. The request is not sent.
var ErrCrossOrigin = errors.New("refused to leave the configured origin")

// origin is the scheme, host and port of u, lower-cased, with the
// default port written out, so that http://h and http://h:80 compare
// equal and https://h and http://h do not. It never holds userinfo, a
// path or a query, so it may go into an error.
func origin(u *url.URL) string {
	scheme := strings.ToLower(u.Scheme)
	port := u.Port()
	if port == "" {
		switch scheme {
		case "http":
			port = "80"
		case "https":
			port = "443"
		}
	}
	return scheme + "://" + net.JoinHostPort(strings.ToLower(u.Hostname()), port)
}

// crossOrigin is the error of a request for another origin than want.
func crossOrigin(want string, to *url.URL) error {
	return fmt.Errorf("%w: %s is not the configured origin %s (credentials and requests go only there)", ErrCrossOrigin, origin(to), want)
}

// sameOriginRedirects is the CheckRedirect of a remote server's client: a
// redirect within the configured origin is followed (at most 10), any
// other fails the request and is reported to refused (see originGuard).
// Following it without credentials would not be enough: a 307 resends the
// method and the JSON-RPC body.
func sameOriginRedirects(want string, refused func(error)) func(*http.Request, []*http.Request) error {
	return func(req *http.Request, via []*http.Request) error {
		if origin(req.URL) != want {
			err := fmt.Errorf("following a redirect: %w", crossOrigin(want, req.URL))
			refused(err)
			return err
		}
		if len(via) >= 10 {
			return errors.New("stopped after 10 redirects")
		}
		return nil
	}
}

// originGuard adds the configured headers (bearer token and request mark
// included) to requests for the configured origin, and refuses every
// other request before it is sent: a redirect that escaped CheckRedirect,
// or an SSE server's endpoint event naming another origin for the POSTs.
// The OAuth handler's Authorization header is set before the request
// reaches here, so it is held to the origin too.
//
// A refusal is also reported to refused, which ends the session with it:
// a server that sends us elsewhere is not one to keep talking to, and the
// SDK flattens some transport errors into text (the SSE POSTs).
type originGuard struct {
	base    http.RoundTripper
	url     *url.URL // the server's: a request with its scheme and host is of its origin
	origin  string
	headers http.Header
	refused func(error)
}

func (t originGuard) RoundTrip(req *http.Request) (*http.Response, error) {
	// Nearly every request has the server's own scheme and host as
	// configured; only the others have their origin worked out.
	if (req.URL.Scheme != t.url.Scheme || req.URL.Host != t.url.Host) && origin(req.URL) != t.origin {
		if req.Body != nil {
			req.Body.Close()
		}
		err := crossOrigin(t.origin, req.URL)
		t.refused(err)
		return nil, err
	}
	req = req.Clone(req.Context())
	for k, v := range t.headers {
		req.Header[k] = v
	}
	return t.base.RoundTrip(req)
}

// markTransport adds the request mark to every request; the OAuth
// requests (discovery, registration, tokens, refreshes) go through it.
type markTransport struct {
	base http.RoundTripper
	mark string
}

func (t markTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	req.Header.Set(RequestMarkHeader, t.mark)
	return t.base.RoundTrip(req)
}

// boundedAnswers bounds the bodies of a remote server's answers (see
// MaxResponseBody). Going over fails the read with tools.ErrResponseTooLarge
// and reports it to tooLarge, which ends the session: the SDK flattens or
// ignores a body read error, so it could not say why by itself.
type boundedAnswers struct {
	base     http.RoundTripper
	tooLarge func(error)
}

func (t boundedAnswers) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(req)
	if err != nil || resp.Body == nil {
		return resp, err
	}
	limit := int64(MaxResponseBody)
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		limit = MaxErrorBody
	} else if isEventStream(resp.Header.Get("Content-Type")) {
		return resp, nil
	}
	resp.Body = &boundedBody{rc: resp.Body, left: limit, limit: limit, status: resp.StatusCode, origin: origin(req.URL), report: t.tooLarge}
	return resp, nil
}

// isEventStream reports whether a Content-Type is text/event-stream (its
// parameters aside), without mime.ParseMediaType's map of them: every
// Streamable HTTP answer is checked.
func isEventStream(contentType string) bool {
	mt, _, _ := strings.Cut(contentType, ";")
	return strings.EqualFold(strings.TrimSpace(mt), "text/event-stream")
}

// boundedBody reads at most limit bytes of a body; past that, Read fails
// and the rest is never read (Close drops the connection).
type boundedBody struct {
	rc     io.ReadCloser
	left   int64
	limit  int64
	status int
	origin string
	report func(error)
	err    error // set once, at the overflow
}

func (b *boundedBody) Read(p []byte) (int, error) {
	if b.err != nil {
		return 0, b.err
	}
	if int64(len(p)) > b.left+1 {
		p = p[:b.left+1] // one byte more than allowed tells an overflow
	}
	n, err := b.rc.Read(p)
	if int64(n) <= b.left {
		b.left -= int64(n)
		return n, err
	}
	n, b.left = int(b.left), 0
	b.err = fmt.Errorf("reading the answer of %s (status %d): %w: over %d bytes", b.origin, b.status, tools.ErrResponseTooLarge, b.limit)
	if b.report != nil {
		b.report(b.err)
	}
	return n, b.err
}

func (b *boundedBody) Close() error { return b.rc.Close() }
