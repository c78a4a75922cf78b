package mcpconn

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The SDK's method names of a 2026-07-28 subscription stream and of a
// cancellation (unexported there).
const (
	methodListen    = "subscriptions/listen"
	methodCancelled = "notifications/cancelled"
)

// maxListenEnds bounds the stream ends kept for a Conn not made yet (a
// session's wanted URIs are subscribed after attach, so normally there
// are none; this keeps any listen the SDK opens during the dial from being
// lost): beyond it, the URIs are reopened at the next session only.
const maxListenEnds = 256

// listenTracker notices when a subscriptions/listen stream the SDK opened
// for resource URIs ends inside a live session. The SDK's Subscribe opens
// the stream and never awaits its answer, so when the server answers the
// listen request (it ended or refused the stream) or, over HTTP, the
// stream's response ends, nothing in the SDK notices, and the URI stays
// "subscribed" with no stream behind it. The tracker sees the requests
// going out and their ends coming in, at the JSON-RPC message level on
// stdio (listenConn) and at the HTTP level on Streamable HTTP
// (listenRoundTripper, since the SDK's HTTP connection cannot be wrapped),
// and tells the Conn which URIs lost their stream. A stream ended from
// here (Unsubscribe sends notifications/cancelled) is forgotten first.
// Over HTTP it sees a POST's response only: a listen stream that breaks
// counts as ended even when the SDK resumes it with a GET (Last-Event-ID),
// so the Conn reopens it instead (cancelling the resumed one), and the
// updates the server would have replayed on it are lost; a host that
// cares reads the resource again on the next update.
type listenTracker struct {
	mu      sync.Mutex
	byID    map[jsonrpc.ID][]string // open listens for resource URIs
	current map[string]jsonrpc.ID   // each URI's latest listen
	onEnd   func(uri string)        // set once the Conn exists
	pending []string                // ends seen before that
	// authorizing are the listens refused with 401 or 403 whose POST the
	// SDK re-sends (same id) once its OAuth handler has authorized.
	authorizing map[jsonrpc.ID]bool
}

func newListenTracker() *listenTracker {
	return &listenTracker{byID: map[jsonrpc.ID][]string{}, current: map[string]jsonrpc.ID{}}
}

// sent records an outgoing listen request for resource URIs, or forgets
// the listen an outgoing cancellation ends. It returns the id of a listen
// it recorded.
func (t *listenTracker) sent(msg jsonrpc.Message) (jsonrpc.ID, bool) {
	req, ok := msg.(*jsonrpc.Request)
	if !ok {
		return jsonrpc.ID{}, false
	}
	switch req.Method {
	case methodListen:
		var p mcp.SubscriptionsListenParams
		if !req.IsCall() || json.Unmarshal(req.Params, &p) != nil || p.Notifications == nil || len(p.Notifications.ResourceSubscriptions) == 0 {
			return jsonrpc.ID{}, false
		}
		t.mu.Lock()
		defer t.mu.Unlock()
		if t.byID == nil {
			return jsonrpc.ID{}, false
		}
		t.byID[req.ID] = p.Notifications.ResourceSubscriptions
		for _, uri := range p.Notifications.ResourceSubscriptions {
			t.current[uri] = req.ID
		}
		return req.ID, true
	case methodCancelled:
		var p struct {
			RequestID any `json:"requestId"`
		}
		if json.Unmarshal(req.Params, &p) != nil {
			return jsonrpc.ID{}, false
		}
		if id, err := jsonrpc.MakeID(p.RequestID); err == nil {
			t.forget(id)
		}
	}
	return jsonrpc.ID{}, false
}

// forget drops a listen ended from here.
func (t *listenTracker) forget(id jsonrpc.ID) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.dropLocked(id)
}

func (t *listenTracker) dropLocked(id jsonrpc.ID) []string {
	uris := t.byID[id]
	delete(t.byID, id)
	delete(t.authorizing, id)
	var ended []string
	for _, uri := range uris {
		if t.current[uri] == id { // a later listen of the URI is not ended by this one's end
			delete(t.current, uri)
			ended = append(ended, uri)
		}
	}
	return ended
}

// ended says the listen id ended by the server's doing (answered,
// refused, its HTTP stream over). It must not block: it runs on the
// transport's reading goroutine.
func (t *listenTracker) ended(id jsonrpc.ID) {
	t.mu.Lock()
	uris := t.dropLocked(id)
	onEnd := t.onEnd
	if onEnd == nil {
		t.pending = append(t.pending, uris[:min(len(uris), maxListenEnds-len(t.pending))]...)
	}
	t.mu.Unlock()
	if onEnd != nil {
		for _, uri := range uris {
			onEnd(uri)
		}
	}
}

// refusedForAuth says the listen id was refused with 401 or 403 on a
// connection with an OAuth handler, which authorizes and re-sends it. It
// reports whether that is the first refusal, to be waited out: a second
// one (the retry refused too) is an end.
func (t *listenTracker) refusedForAuth(id jsonrpc.ID) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, open := t.byID[id]; !open || t.authorizing[id] {
		return false
	}
	if t.authorizing == nil {
		t.authorizing = map[jsonrpc.ID]bool{}
	}
	t.authorizing[id] = true
	return true
}

// attach sets what is told of ends from now on, and tells it those seen
// before (listens opened during the dial, if any).
func (t *listenTracker) attach(onEnd func(uri string)) {
	t.mu.Lock()
	t.onEnd = onEnd
	pending := t.pending
	t.pending = nil
	t.mu.Unlock()
	for _, uri := range pending {
		onEnd(uri)
	}
}

// close stops tracking: the session is going, nothing is reopened.
func (t *listenTracker) close() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.byID, t.current, t.onEnd, t.pending, t.authorizing = nil, nil, nil, nil, nil
}

// listenConn is a connection whose listen requests and their answers the
// tracker sees. A listen the transport failed to send ended at once.
type listenConn struct {
	mcp.Connection
	tracker *listenTracker
}

func (c listenConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	id, listen := c.tracker.sent(msg)
	err := c.Connection.Write(ctx, msg)
	if err != nil && listen {
		c.tracker.ended(id)
	}
	return err
}

func (c listenConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if resp, ok := msg.(*jsonrpc.Response); ok && err == nil {
		c.tracker.ended(resp.ID)
	}
	return msg, err
}

// listenRoundTripper sees the Streamable HTTP POSTs of listen requests
// and the end of their responses: a refused POST, or a response stream
// that ended (with the listen's answer or without) while the request's
// context lives, is a stream the server ended. The SDK cancels that
// context when it ends the stream itself (Unsubscribe, Close).
//
// With an OAuth handler (oauth), a first 401 or 403 is not an end: the
// SDK authorizes and sends the same listen again, through here (an
// Authorize that fails ends it, see listenAuth). A response stream that
// breaks is an end even when the SDK resumes it (a GET with
// Last-Event-ID, which this does not follow): the URI's stream is then
// reopened, and the updates the server would have replayed are lost.
type listenRoundTripper struct {
	base    http.RoundTripper
	tracker *listenTracker
	oauth   bool
}

func (rt listenRoundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	id, listen := rt.listenOf(req)
	resp, err := rt.base.RoundTrip(req)
	if !listen {
		return resp, err
	}
	if err == nil && rt.oauth && (resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden) &&
		rt.tracker.refusedForAuth(id) {
		return resp, nil
	}
	if err != nil || resp.StatusCode < 200 || resp.StatusCode > 299 {
		if req.Context().Err() == nil {
			rt.tracker.ended(id)
		}
		return resp, err
	}
	resp.Body = &listenBody{ReadCloser: resp.Body, end: func() {
		if req.Context().Err() == nil {
			rt.tracker.ended(id)
		}
	}}
	return resp, nil
}

// listenAuth is the OAuth handler of a Streamable HTTP connection whose
// listens a listenRoundTripper watches: a listen whose authorization
// failed is not re-sent, so it ended.
type listenAuth struct {
	auth.OAuthHandler
	tracker *listenTracker
}

func (a listenAuth) Authorize(ctx context.Context, req *http.Request, resp *http.Response) error {
	err := a.OAuthHandler.Authorize(ctx, req, resp)
	if err == nil || ctx.Err() != nil {
		return err
	}
	if msg, ok := listenMessage(req); ok {
		if r, ok := msg.(*jsonrpc.Request); ok && r.Method == methodListen {
			a.tracker.ended(r.ID)
		}
	}
	return err
}

// listenOf records the request if it is a listen (or a cancellation). The
// SDK's POST bodies are its own encoding of one message, which GetBody
// replays without touching the body sent. Most POSTs are other requests
// (a tool call's arguments may be megabytes): only a prefix of each is
// read, and the body is read whole and decoded only when the prefix
// names a method that matters. The SDK encodes "jsonrpc", "id" and
// "method" first, in that order, so the method is always in the prefix;
// a body whose prefix does not name it is not a listen.
func (rt listenRoundTripper) listenOf(req *http.Request) (jsonrpc.ID, bool) {
	msg, ok := listenMessage(req)
	if !ok {
		return jsonrpc.ID{}, false
	}
	return rt.tracker.sent(msg)
}

// listenMessage is the message a POST carries if it may be a listen or a
// cancellation (see listenOf).
func listenMessage(req *http.Request) (jsonrpc.Message, bool) {
	if req.Method != http.MethodPost || req.GetBody == nil {
		return nil, false
	}
	body, err := req.GetBody()
	if err != nil {
		return nil, false
	}
	defer body.Close()
	var buf [listenPrefix]byte
	n, err := io.ReadFull(body, buf[:])
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return nil, false
	}
	prefix := buf[:n]
	if !bytes.Contains(prefix, []byte(`"`+methodListen+`"`)) && !bytes.Contains(prefix, []byte(`"`+methodCancelled+`"`)) {
		return nil, false
	}
	data, err := io.ReadAll(io.MultiReader(bytes.NewReader(prefix), io.LimitReader(body, maxListenBody-int64(n))))
	if err != nil {
		return nil, false
	}
	msg, err := jsonrpc.DecodeMessage(data)
	if err != nil {
		return nil, false
	}
	return msg, true
}

// listenPrefix is what listenOf reads of every POST: enough for
// {"jsonrpc":"2.0","id":ID,"method":"notifications/cancelled" with an id
// of any size the SDK makes.
const listenPrefix = 512

// maxListenBody bounds what listenOf reads of a listen or a cancellation
// (ours, and a listen for 256 URIs of 2 KiB each fits).
const maxListenBody = 1 << 20

// listenBody calls end once when the response stream ends: read to its
// end or to an error, or closed before.
type listenBody struct {
	io.ReadCloser
	once sync.Once
	end  func()
}

func (b *listenBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil {
		b.once.Do(b.end)
	}
	return n, err
}

func (b *listenBody) Close() error {
	err := b.ReadCloser.Close()
	b.once.Do(b.end)
	return err
}
