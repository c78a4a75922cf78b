package mcpconn

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/openprogram/mcpvisor/config"
	"github.com/openprogram/mcpvisor/internal/exampleserver"
)

// hits counts the requests a test server got and keeps their headers.
type hits struct {
	mu      sync.Mutex
	n       int
	headers []http.Header
}

func (h *hits) record(r *http.Request) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.n++
	h.headers = append(h.headers, r.Header.Clone())
}

func (h *hits) count() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.n
}

// sawSecret reports whether any request carried a planted secret.
func (h *hits) sawSecret() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, hd := range h.headers {
		if strings.Contains(fmt.Sprint(hd), plantedToken) || strings.Contains(fmt.Sprint(hd), plantedHeader) {
			return true
		}
	}
	return false
}

// recording is a loopback server that records each request and answers
// 202, as an SSE message endpoint would.
func recording(t *testing.T, seen *hits) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen.record(r)
		w.WriteHeader(http.StatusAccepted)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// redirecting is a loopback server whose /mcp answers 307 to target+"/mcp"
// and which serves the example server (behind the planted credentials) at
// /real.
func redirecting(t *testing.T, target func() string, seen *hits) *httptest.Server {
	t.Helper()
	mcpH := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server {
		return exampleserver.NewServer(exampleserver.Options{Stderr: discard{}})
	}, nil)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen.record(r)
		if r.URL.Path == "/mcp" {
			http.Redirect(w, r, target()+"/real", http.StatusTemporaryRedirect)
			return
		}
		if r.Header.Get("Authorization") != "Bearer "+plantedToken || r.Header.Get("X-Key") != plantedHeader {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		mcpH.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// noSecrets fails if err's text quotes a planted secret.
func noSecrets(t *testing.T, err error) {
	t.Helper()
	for _, s := range []string{plantedToken, plantedHeader} {
		if strings.Contains(err.Error(), s) {
			t.Fatalf("the error quotes a planted secret: %v", err)
		}
	}
}

// A redirect within the configured origin is followed, credentials and all.
func TestRemoteSameOriginRedirectFollowed(t *testing.T) {
	var seen hits
	var srv *httptest.Server
	srv = redirecting(t, func() string { return srv.URL }, &seen)
	var work sync.WaitGroup
	c, err := testDial(context.Background(), Options{Server: remote(config.TypeHTTP, srv.URL+"/mcp", plantedToken), Go: work.Go, RequestMark: "rt-test-1"})
	if err != nil {
		t.Fatal(err)
	}
	res, err := c.CallTool(context.Background(), "echo", map[string]any{"text": "redirected"})
	if err != nil || res.Content[0].(*mcp.TextContent).Text != "redirected" {
		t.Fatalf("echo: %v %+v", err, res)
	}
	c.Close()
	work.Wait()
	seen.mu.Lock()
	defer seen.mu.Unlock()
	for _, h := range seen.headers { // the mark Handler refuses is on every request
		if h.Get(RequestMarkHeader) != "rt-test-1" {
			t.Fatalf("a request without %s: %v", RequestMarkHeader, h)
		}
	}
}

// A redirect to another port of the same host is another origin: the dial
// fails naming both origins, and the other server receives nothing.
func TestRemoteCrossOriginRedirectRefused(t *testing.T) {
	var other hits
	victim := recording(t, &other)
	// localhost:OTHER, as in the issue: Go's own stripping would let the
	// headers through, since the host name is the same.
	vu, _ := url.Parse(victim.URL)
	to := "http://localhost:" + vu.Port()
	var seen hits
	srv := redirecting(t, func() string { return to }, &seen)
	su, _ := url.Parse(srv.URL)
	configured := "http://localhost:" + su.Port() + "/mcp?api_key=" + plantedHeader

	var work sync.WaitGroup
	_, err := testDial(context.Background(), Options{Server: remote(config.TypeHTTP, configured, plantedToken), Go: work.Go})
	work.Wait()
	if !errors.Is(err, ErrCrossOrigin) {
		t.Fatalf("dial error %v, want ErrCrossOrigin", err)
	}
	for _, o := range []string{"http://localhost:" + su.Port(), "http://localhost:" + vu.Port()} {
		if !strings.Contains(err.Error(), o) {
			t.Errorf("error %q does not name origin %s", err, o)
		}
	}
	noSecrets(t, err)
	if n := other.count(); n != 0 {
		t.Fatalf("the other origin received %d requests", n)
	}
	if seen.count() == 0 || !seen.sawSecret() {
		t.Fatalf("the configured server got no credentials (%d requests): the test proves nothing", seen.count())
	}
}

// An https server redirecting to http on the same host is a downgrade to
// another origin: refused, nothing sent in clear text.
func TestRemoteHTTPSDowngradeRefused(t *testing.T) {
	var plain hits
	clear := recording(t, &plain)
	var seen hits
	tlsSrv := httptest.NewUnstartedServer(nil)
	tlsSrv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen.record(r)
		http.Redirect(w, r, clear.URL+"/mcp", http.StatusTemporaryRedirect)
	})
	tlsSrv.StartTLS()
	defer tlsSrv.Close()

	c, err := dialRemoteWith(t, remote(config.TypeHTTP, tlsSrv.URL+"/mcp", plantedToken), tlsSrv.Client().Transport.(*http.Transport))
	if err == nil {
		c.Close()
		t.Fatal("connected through a downgrade")
	}
	if !errors.Is(err, ErrCrossOrigin) || !strings.Contains(err.Error(), "https://127.0.0.1:") || !strings.Contains(err.Error(), clear.URL) {
		t.Fatalf("dial error %v, want ErrCrossOrigin naming both origins", err)
	}
	noSecrets(t, err)
	if plain.count() != 0 {
		t.Fatalf("the http server received %d requests", plain.count())
	}
	if !seen.sawSecret() {
		t.Fatal("the https server got no credentials: the test proves nothing")
	}
}

// dialRemoteWith dials srv through a copy of base (a test TLS client's
// transport) instead of http.DefaultTransport.
func dialRemoteWith(t *testing.T, srv config.Server, base *http.Transport) (*Conn, error) {
	t.Helper()
	var work sync.WaitGroup
	defer work.Wait()
	return testDial(context.Background(), Options{Server: srv, Go: work.Go, baseTransport: base})
}

// An SSE server's endpoint event naming another origin gets no POST: the
// JSON-RPC body and the credentials stay home.
func TestRemoteSSEEndpointOnAnotherOriginRefused(t *testing.T) {
	var other hits
	victim := recording(t, &other)
	var gets atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gets.Add(1)
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "event: endpoint\ndata: %s/message\n\n", victim.URL)
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}))
	defer srv.Close()
	var work sync.WaitGroup
	_, err := testDial(context.Background(), Options{Server: remote(config.TypeSSE, srv.URL+"/sse", plantedToken), Go: work.Go})
	if !errors.Is(err, ErrCrossOrigin) {
		t.Fatalf("dial error %v, want ErrCrossOrigin", err)
	}
	srv.CloseClientConnections()
	work.Wait()
	noSecrets(t, err)
	if other.count() != 0 || gets.Load() == 0 {
		t.Fatalf("the other origin received %d requests (SSE GETs %d)", other.count(), gets.Load())
	}
}

func TestOriginNormalisesDefaultPorts(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		same bool
	}{
		{"http://Example.com/x", "http://example.com:80/y", true},
		{"https://example.com", "https://example.com:443/", true},
		{"https://example.com", "http://example.com:443", false},
		{"http://localhost:1", "http://localhost:2", false},
		{"http://[::1]:8080", "http://[::1]:8080/mcp", true},
	} {
		a, _ := url.Parse(tc.a)
		b, _ := url.Parse(tc.b)
		if got := origin(a) == origin(b); got != tc.same {
			t.Errorf("origin(%s)==origin(%s) is %v, want %v", tc.a, tc.b, got, tc.same)
		}
	}
}

// isEventStream reads the media type as mime.ParseMediaType would: case
// and parameters aside.
func TestIsEventStream(t *testing.T) {
	for ct, want := range map[string]bool{
		"text/event-stream": true, "Text/Event-Stream; charset=utf-8": true, " text/event-stream ;x=y": true,
		"application/json": false, "": false, "text/event-streams": false, "text/event": false,
	} {
		if got := isEventStream(ct); got != want {
			t.Errorf("isEventStream(%q) = %v, want %v", ct, got, want)
		}
	}
}
