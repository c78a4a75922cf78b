package mcpconn

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/openprogram/mcpvisor/config"
	"github.com/openprogram/mcpvisor/internal/testutil"
)

func TestOAuthDialGuard(t *testing.T) {
	for _, tc := range []struct {
		server, dial string
		ok           bool
	}{
		{"127.0.0.1", "127.0.0.1:443", true},   // the MCP server's own host
		{"localhost", "127.0.0.1:8080", true},  // its name resolves there
		{"127.0.0.1", "127.0.0.2:443", false},  // another loopback address
		{"127.0.0.1", "[::1]:443", false},      // the same machine, another address
		{"127.0.0.1", "10.1.2.3:443", false},   // private
		{"127.0.0.1", "192.168.1.1:80", false}, // private
		{"127.0.0.1", "169.254.169.254:80", false},
		{"127.0.0.1", "100.64.0.1:80", false}, // shared address space
		{"127.0.0.1", "0.0.0.0:80", false},
		{"127.0.0.1", "[fe80::1]:80", false},
		{"127.0.0.1", "[::ffff:10.0.0.1]:80", false},
		{"10.1.2.3", "10.1.2.3:443", true},
		{"mcp.example.com", "203.0.113.7:443", true}, // public: the SDK's rules and TLS apply
		{"127.0.0.1", "8.8.8.8:443", true},
	} {
		g := &dialGuard{serverHost: tc.server}
		err := g.control(context.Background(), "tcp", tc.dial, nil)
		if (err == nil) != tc.ok || (err != nil && !errors.Is(err, ErrPrivateOAuthHost)) {
			t.Errorf("server %s, dial %s: %v, want allowed=%v", tc.server, tc.dial, err, tc.ok)
		}
	}
}

// A client_credentials server whose metadata puts the token endpoint on
// 127.0.0.2 (another address than the server's 127.0.0.1): the token
// request is refused at dial time and never arrives, unless
// AllowPrivateOAuthHosts is set.
func TestClientCredentialsTokenEndpointOnAnotherPrivateHost(t *testing.T) {
	for _, allow := range []bool{false, true} {
		t.Run(fmt.Sprintf("allow=%v", allow), func(t *testing.T) {
			tokenURL, conns := testutil.OtherLoopback(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				http.Error(w, `{"error":"invalid_client"}`, http.StatusUnauthorized)
			}))
			var srv *httptest.Server
			srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				switch r.URL.Path {
				case "/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource":
					fmt.Fprintf(w, `{"resource":%q,"authorization_servers":[%q]}`, srv.URL+"/mcp", srv.URL)
				case "/.well-known/oauth-authorization-server":
					fmt.Fprintf(w, `{"issuer":%q,"token_endpoint":%q,"code_challenge_methods_supported":["S256"]}`, srv.URL, tokenURL+"/token")
				default:
					w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer resource_metadata="%s/.well-known/oauth-protected-resource/mcp"`, srv.URL))
					http.Error(w, "unauthorized", http.StatusUnauthorized)
				}
			}))
			defer srv.Close()
			cfg := config.Server{Name: "cc", Type: config.TypeHTTP, URL: srv.URL + "/mcp", Enabled: true, TimeoutSeconds: 5,
				Auth: &config.Auth{Kind: config.AuthClientCredentials, ClientID: "c1", ClientSecret: "cs-planted-0b1d"}}
			var work sync.WaitGroup
			_, err := Dial(context.Background(), Options{Server: cfg, Go: work.Go, AllowPrivateOAuthHosts: allow})
			work.Wait()
			if err == nil {
				t.Fatal("connected without a token")
			}
			if allow {
				if conns.Load() == 0 {
					t.Fatalf("allowed, but the token endpoint got no connection: %v", err)
				}
				return
			}
			if strings.Contains(err.Error(), "cs-planted-0b1d") {
				t.Fatal("the error quotes the client secret")
			}
			if !strings.Contains(err.Error(), "127.0.0.2") || !strings.Contains(err.Error(), "private address") || conns.Load() != 0 {
				t.Fatalf("dial error %v with %d connections to the token endpoint, want a refusal naming 127.0.0.2 and none", err, conns.Load())
			}
		})
	}
}
