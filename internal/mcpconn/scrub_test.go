package mcpconn

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/openprogram/mcpvisor/config"
	"github.com/openprogram/mcpvisor/internal/exampleserver"
)

const chainUser, chainPass = "alice", "pw-CHAIN-planted-3e8b"

// chainLinks is every error reachable from err: each link of its chain
// (errors.Unwrap, single and multiple) and what errors.As finds for the
// error types that carry a server's or a request's text.
func chainLinks(err error) []error {
	var out []error
	var walk func(error)
	walk = func(e error) {
		if e == nil {
			return
		}
		out = append(out, e)
		switch u := e.(type) {
		case interface{ Unwrap() error }:
			walk(u.Unwrap())
		case interface{ Unwrap() []error }:
			for _, c := range u.Unwrap() {
				walk(c)
			}
		}
	}
	walk(err)
	if rpc := (*jsonrpc.Error)(nil); errors.As(err, &rpc) {
		out = append(out, rpc)
	}
	if ue := (*url.Error)(nil); errors.As(err, &ue) {
		out = append(out, ue)
	}
	return out
}

// assertChainClean fails if any link of err's chain, printed in any way,
// shows one of secrets.
func assertChainClean(t *testing.T, what string, err error, secrets ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("%s: no error", what)
	}
	for i, link := range chainLinks(err) {
		for _, verb := range []string{"%v", "%+v", "%#v"} {
			text := fmt.Sprintf(verb, link)
			if rpc, ok := link.(*jsonrpc.Error); ok {
				text += fmt.Sprintf(" %s %s", rpc.Message, rpc.Data)
			}
			for j, s := range secrets {
				if strings.Contains(text, s) {
					t.Errorf("%s: link %d (%T) printed with %s shows secret %d", what, i, link, verb, j)
				}
			}
		}
	}
}

// chainSecrets are the forms of the userinfo credential a server sees:
// the password and the Basic header's base64 pair.
var chainSecrets = []string{chainPass, base64.StdEncoding.EncodeToString([]byte(chainUser + ":" + chainPass))}

// echoingServer serves the example server (with its leak tool) over
// Streamable HTTP; while refuse is set it answers every POST with HTTP 400
// and a JSON-RPC error quoting the Authorization header, in its message
// and its data, as a careless server might.
func echoingServer(t *testing.T, refuse *atomic.Bool) string {
	t.Helper()
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server {
		return exampleserver.NewServer(exampleserver.Options{LeakTool: true, Stderr: io.Discard})
	}, nil)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !refuse.Load() || r.Method != http.MethodPost {
			h.ServeHTTP(w, r)
			return
		}
		var req struct {
			ID json.RawMessage `json:"id"`
		}
		_ = json.NewDecoder(r.Body).Decode(&req)
		auth := r.Header.Get("Authorization")
		data, _ := json.Marshal(map[string]string{"authorization": auth})
		body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": req.ID,
			"error": map[string]any{"code": -32001, "message": "refused " + auth, "data": json.RawMessage(data)}})
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write(body)
	}))
	t.Cleanup(srv.Close)
	u, _ := url.Parse(srv.URL)
	u.User = url.UserPassword(chainUser, chainPass)
	return u.String()
}

// The errors of a dial, of a call and of a lost session hold no secret
// anywhere in their chain, yet a server's JSON-RPC error is still one.
func TestScrubbedErrorChainHoldsNoSecret(t *testing.T) {
	t.Run("dial refused with a JSON-RPC error", func(t *testing.T) {
		var refuse atomic.Bool
		refuse.Store(true)
		srv := config.Server{Name: "web", Type: config.TypeHTTP, URL: echoingServer(t, &refuse), Enabled: true, TimeoutSeconds: 5}
		var work sync.WaitGroup
		_, err := testDial(context.Background(), Options{Server: srv, Go: work.Go})
		work.Wait()
		assertChainClean(t, "dial", err, chainSecrets...)
		if rpc := (*jsonrpc.Error)(nil); !errors.As(err, &rpc) || rpc.Code != -32001 {
			t.Errorf("the dial error is not the server's JSON-RPC error: %v", err)
		}
	})
	t.Run("calls", func(t *testing.T) {
		var refuse atomic.Bool
		srv := config.Server{Name: "web", Type: config.TypeHTTP, URL: echoingServer(t, &refuse), Enabled: true, TimeoutSeconds: 5}
		var work sync.WaitGroup
		defer work.Wait()
		c, err := testDial(context.Background(), Options{Server: srv, Go: work.Go})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		_, err = c.CallTool(context.Background(), exampleserver.LeakToolName, map[string]any{"headers": []string{"Authorization"}})
		assertChainClean(t, "leak call", err, chainSecrets...)
		if rpc := (*jsonrpc.Error)(nil); !errors.As(err, &rpc) || !strings.Contains(rpc.Message, "Basic [redacted]") {
			t.Errorf("the leak error is not the server's JSON-RPC error, scrubbed: %v", err)
		}
		refuse.Store(true)
		_, err = c.CallTool(context.Background(), "echo", map[string]any{"text": "x"})
		assertChainClean(t, "refused call", err, chainSecrets...)
		if rpc := (*jsonrpc.Error)(nil); !errors.As(err, &rpc) || rpc.Code != -32001 || rpc.Data != nil {
			t.Errorf("the refused call's error is not the server's JSON-RPC error without its data: %v", err)
		}
	})
	t.Run("lost session", func(t *testing.T) {
		const planted = "tok-LOST-planted-61f0d"
		clientT, serverT := mcp.NewInMemoryTransports()
		ss, err := exampleserver.NewServer(exampleserver.Options{Stderr: io.Discard}).Connect(context.Background(), serverT, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer ss.Close()
		broken := &breakingTransport{inner: clientT, err: &url.Error{Op: "Post", URL: "http://u:" + planted + "@127.0.0.1/",
			Err: fmt.Errorf("reading the answer: %w", &jsonrpc.Error{Code: 7, Message: "echo " + planted, Data: json.RawMessage(`"` + planted + `"`)})}}
		srv := config.Server{Name: "mem", Type: config.TypeLocal, Enabled: true, TimeoutSeconds: 5, Env: map[string]string{"TOKEN": planted}}
		var work sync.WaitGroup
		defer work.Wait()
		c, err := testDial(context.Background(), Options{Server: srv, Transport: broken, Go: work.Go})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		broken.broken.Store(true)
		_, callErr := c.CallTool(context.Background(), "echo", map[string]any{"text": "x"})
		select {
		case <-c.Done():
		case <-time.After(10 * time.Second):
			t.Fatal("the broken session was not noticed")
		}
		assertChainClean(t, "lost session", c.Err(), planted)
		if callErr != nil {
			assertChainClean(t, "call on the broken session", callErr, planted)
		}
	})
}

// breakingTransport is an in-memory transport whose reads fail with err
// once broken is set.
type breakingTransport struct {
	inner  mcp.Transport
	err    error
	broken atomic.Bool
}

func (b *breakingTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := b.inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return breakingConn{Connection: c, t: b}, nil
}

type breakingConn struct {
	mcp.Connection
	t *breakingTransport
}

func (c breakingConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	m, err := c.Connection.Read(ctx)
	if err == nil && c.t.broken.Load() {
		return nil, c.t.err
	}
	return m, err
}
