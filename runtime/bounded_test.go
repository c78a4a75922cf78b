package runtime

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/openprogram/mcpvisor/config"
	"github.com/openprogram/mcpvisor/internal/exampleserver"
	"github.com/openprogram/mcpvisor/internal/mcpconn"
	"github.com/openprogram/mcpvisor/status"
	"github.com/openprogram/mcpvisor/tools"
)

// floodLimit is how much a flooding server would write if nobody stopped
// reading: far more than any bound, never built in memory.
const floodLimit = 256 << 20

// flooder serves the example server over Streamable HTTP, except that the
// first tools/call gets an endless answer: a JSON-RPC result (200,
// application/json) or an error status, written chunk by chunk until the
// client stops reading. written is how much of it went out.
type flooder struct {
	status int
	// only, if set, floods only the first tools/call whose body holds it;
	// the others are served, and started is closed when one of them
	// arrives.
	only    string
	started chan struct{}
	armed   atomic.Bool
	written atomic.Int64
	done    chan struct{} // closed when the flood ended
}

func (f *flooder) serve(t *testing.T) *httptest.Server {
	t.Helper()
	f.done = make(chan struct{})
	f.started = make(chan struct{})
	var startedOnce sync.Once
	f.armed.Store(true)
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server {
		return exampleserver.NewServer(exampleserver.Options{})
	}, &mcp.StreamableHTTPOptions{JSONResponse: true})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		call := bytes.Contains(body, []byte(`"tools/call"`))
		if call && f.only != "" && !bytes.Contains(body, []byte(f.only)) {
			startedOnce.Do(func() { close(f.started) })
			h.ServeHTTP(w, r)
			return
		}
		if !call || !f.armed.CompareAndSwap(true, false) {
			h.ServeHTTP(w, r)
			return
		}
		defer close(f.done)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(f.status)
		chunk := bytes.Repeat([]byte("a"), 64<<10)
		if _, err := io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"`); err != nil {
			return
		}
		for f.written.Load() < floodLimit {
			n, err := w.Write(chunk)
			f.written.Add(int64(n))
			if err != nil {
				return
			}
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// A remote server's endless answer (a result, an error body) is read only
// up to its bound: the call fails, the session ends with
// ErrResponseTooLarge, the server stopped being read early, and the
// usual backoff brings the server back ready.
func TestRemoteAnswerOverItsBound(t *testing.T) {
	for _, tc := range []struct {
		name   string
		status int
		bound  int64
	}{
		{"result", http.StatusOK, mcpconn.MaxResponseBody},
		{"error body", http.StatusBadRequest, mcpconn.MaxErrorBody},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &flooder{status: tc.status}
			srv := f.serve(t)
			rt := start(t, Options{Restart: RestartPolicy{Initial: 10 * time.Millisecond}},
				config.Server{Name: "big", Type: config.TypeHTTP, URL: srv.URL, Enabled: true})
			if st := rt.waitSettled(t, "big"); st.State != status.Ready {
				t.Fatalf("big = %+v", st)
			}
			_, err := rt.CallTool(context.Background(), "big__echo", map[string]any{"text": "hi"})
			if err == nil {
				t.Fatal("the endless answer was taken")
			}
			<-f.done
			// The client stopped reading at the bound; what went out beyond it
			// sat in socket buffers (a few MiB on loopback), not the runtime.
			if w := f.written.Load(); w >= tc.bound+16<<20 || w >= floodLimit {
				t.Errorf("the server wrote %d bytes before the client hung up (bound %d)", w, tc.bound)
			}
			if !errors.Is(err, tools.ErrResponseTooLarge) {
				t.Errorf("call error %v, want ErrResponseTooLarge", err)
			}
			back := rt.waitBack(t, "big")
			if !strings.Contains(back.LastError, tools.ErrResponseTooLarge.Error()) {
				t.Errorf("last_error %q, want it to say the answer was too large", back.LastError)
			}
			res := mustCall(t, rt, "big__echo", map[string]any{"text": "back"})
			if res.Content[0].Text != "back" {
				t.Fatalf("after recovery echo = %+v", res)
			}
		})
	}
}

// A call in flight when another call's answer ends the session for being
// too large says why it failed too (review of issue 10: it said only
// "session closed").
func TestRemoteAnswerOverItsBoundFailsCallsInFlight(t *testing.T) {
	f := &flooder{status: http.StatusOK, only: `"echo"`}
	srv := f.serve(t)
	rt := start(t, Options{Restart: RestartPolicy{Initial: 10 * time.Millisecond}},
		config.Server{Name: "big", Type: config.TypeHTTP, URL: srv.URL, Enabled: true})
	if st := rt.waitSettled(t, "big"); st.State != status.Ready {
		t.Fatalf("big = %+v", st)
	}
	slow := make(chan error, 1)
	go func() {
		_, err := rt.CallTool(context.Background(), "big__sleep", map[string]any{"ms": 20_000})
		slow <- err
	}()
	<-f.started
	if _, err := rt.CallTool(context.Background(), "big__echo", map[string]any{"text": "hi"}); !errors.Is(err, ErrResponseTooLarge) {
		t.Fatalf("flooded call: %v, want ErrResponseTooLarge", err)
	}
	select {
	case err := <-slow:
		if !errors.Is(err, ErrResponseTooLarge) || !errors.Is(err, ErrSessionClosed) {
			t.Errorf("call in flight: %v, want ErrSessionClosed naming ErrResponseTooLarge", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("the call in flight did not end with its session")
	}
	<-f.done
	rt.waitBack(t, "big")
}
