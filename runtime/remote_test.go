package runtime

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/openprogram/mcpvisor/config"
	"github.com/openprogram/mcpvisor/internal/exampleserver"
	"github.com/openprogram/mcpvisor/status"
)

// Remote servers (Streamable HTTP and legacy SSE) with a bearer token and
// a header: namespaced tools, calls, and neither secret in status or logs.
func TestRemoteServersThroughTheRuntime(t *testing.T) {
	const token, header = "tok-runtime-remote-3b7f1", "hdr-runtime-remote-91ce0"
	getServer := func(*http.Request) *mcp.Server { return exampleserver.NewServer(exampleserver.Options{}) }
	guard := func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("Authorization") != "Bearer "+token || r.Header.Get("X-Key") != header {
				http.Error(w, "unauthorized", http.StatusUnauthorized)
				return
			}
			h.ServeHTTP(w, r)
		})
	}
	streamable := httptest.NewServer(guard(mcp.NewStreamableHTTPHandler(getServer, nil)))
	t.Cleanup(streamable.Close) // after the runtime's shutdown (LIFO), which ends the streams
	sse := httptest.NewServer(guard(mcp.NewSSEHandler(getServer, nil)))
	t.Cleanup(sse.Close)
	remote := func(name, kind, url string) config.Server {
		return config.Server{Name: name, Type: kind, URL: url, Enabled: true,
			Headers: map[string]string{"X-Key": header}, Auth: &config.Auth{Kind: config.AuthBearer, Token: token}}
	}
	rt := start(t, Options{}, remote("web", config.TypeHTTP, streamable.URL), remote("old", config.TypeSSE, sse.URL))
	for _, name := range []string{"web", "old"} {
		if st := rt.waitSettled(t, name); st.State != status.Ready {
			t.Fatalf("%s = %+v", name, st)
		}
		res := mustCall(t, rt, name+"__echo", map[string]any{"text": "via " + name})
		if res.Content[0].Text != "via "+name {
			t.Fatalf("%s echo = %+v", name, res)
		}
	}
	entries, _ := json.Marshal(rt.Servers())
	for _, secret := range []string{token, header} {
		if strings.Contains(string(entries), secret) || strings.Contains(rt.logs.String(), secret) {
			t.Fatal("a remote server's secret appears in the entries or logs")
		}
	}
}
