package mcpconn

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/openprogram/mcpvisor/config"
	"github.com/openprogram/mcpvisor/internal/exampleserver"
)

const (
	plantedToken  = "tok-remote-planted-5d1e9"
	plantedHeader = "hdr-remote-planted-77c0a"
)

// remoteServer serves the example server over a loopback listener, and
// refuses requests without the planted token and header.
func remoteServer(t *testing.T, sse bool) string {
	t.Helper()
	getServer := func(*http.Request) *mcp.Server {
		return exampleserver.NewServer(exampleserver.Options{Stderr: discard{}})
	}
	var h http.Handler = mcp.NewStreamableHTTPHandler(getServer, nil)
	if sse {
		h = mcp.NewSSEHandler(getServer, nil)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+plantedToken || r.Header.Get("X-Key") != plantedHeader {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

func remote(kind, url, token string) config.Server {
	return config.Server{
		Name: "remote", Type: kind, URL: url, Enabled: true, TimeoutSeconds: 5,
		Headers: map[string]string{"X-Key": plantedHeader},
		Auth:    &config.Auth{Kind: config.AuthBearer, Token: token},
	}
}

func TestRemoteTransportsWithBearerAndHeaders(t *testing.T) {
	for _, tc := range []struct {
		kind string
		sse  bool
	}{{config.TypeHTTP, false}, {config.TypeSSE, true}} {
		t.Run(tc.kind, func(t *testing.T) {
			url := remoteServer(t, tc.sse)
			if tc.sse {
				url += "/sse"
			}
			var work sync.WaitGroup
			c, err := testDial(context.Background(), Options{Server: remote(tc.kind, url, plantedToken), Go: work.Go})
			if err != nil {
				t.Fatal(err)
			}
			res, err := c.CallTool(context.Background(), "echo", map[string]any{"text": "over " + tc.kind})
			if err != nil || res.Content[0].(*mcp.TextContent).Text != "over "+tc.kind {
				t.Fatalf("echo: %v %+v", err, res)
			}
			if c.PID() != 0 {
				t.Errorf("a remote session has pid %d", c.PID())
			}
			c.Close()
			work.Wait()
		})
	}
}

func TestRemoteWrongTokenFailsWithoutLeakingIt(t *testing.T) {
	url := remoteServer(t, false)
	var work sync.WaitGroup
	wrong := "tok-wrong-planted-0a9f3c"
	_, err := testDial(context.Background(), Options{Server: remote(config.TypeHTTP, url, wrong), Go: work.Go})
	work.Wait()
	if err == nil {
		t.Fatal("connected with a wrong token")
	}
	for _, s := range []string{wrong, plantedHeader} {
		if strings.Contains(err.Error(), s) {
			t.Fatalf("the error quotes a secret")
		}
	}
}
