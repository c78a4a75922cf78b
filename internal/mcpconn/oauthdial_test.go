package mcpconn

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/openprogram/mcpvisor/config"
	"github.com/openprogram/mcpvisor/internal/testutil"
)

// fakeResolver answers from a table; a name not in it does not resolve.
type fakeResolver map[string][]netip.Addr

func (f fakeResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	if ips, ok := f[host]; ok {
		return ips, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

// evilDNS is a hostile server's own DNS: a public address and a loopback
// or private one under the same name.
var evilDNS = fakeResolver{
	"mcp.evil.example": {netip.MustParseAddr("203.0.113.7"), netip.MustParseAddr("127.0.0.1"), netip.MustParseAddr("127.0.0.2"), netip.MustParseAddr("10.0.0.5")},
}

func TestOAuthDialGuard(t *testing.T) {
	for _, tc := range []struct {
		server, dial string
		ok           bool
	}{
		{"127.0.0.1", "127.0.0.1:443", true},   // the MCP server's own host
		{"localhost", "127.0.0.1:8080", true},  // localhost: any loopback address
		{"localhost", "127.0.0.2:8080", true},  // (the user chose the machine)
		{"localhost", "[::1]:8080", true},      //
		{"LocalHost.", "127.0.0.1:80", true},   //
		{"localhost", "10.0.0.5:80", false},    // but no private address
		{"127.0.0.1", "127.0.0.2:443", false},  // another loopback address
		{"127.0.0.1", "[::1]:443", false},      // the same machine, another address
		{"::1", "[::1]:443", true},             //
		{"127.0.0.1", "10.1.2.3:443", false},   // private
		{"127.0.0.1", "192.168.1.1:80", false}, // private
		{"127.0.0.1", "169.254.169.254:80", false},
		{"127.0.0.1", "100.64.0.1:80", false}, // shared address space
		{"127.0.0.1", "0.0.0.0:80", false},
		{"127.0.0.1", "[fe80::1]:80", false},
		{"127.0.0.1", "[::ffff:10.0.0.1]:80", false},
		{"127.0.0.1", "[64:ff9b::7f00:1]:80", false}, // NAT64 of 127.0.0.1
		{"127.0.0.1", "[2002:a00:5::1]:80", false},   // 6to4 of 10.0.0.5
		{"10.1.2.3", "10.1.2.3:443", true},
		{"10.1.2.3", "[::ffff:10.1.2.3]:443", true},
		{"mcp.example.com", "203.0.113.7:443", true}, // public: the SDK's rules and TLS apply
		{"127.0.0.1", "8.8.8.8:443", true},
		// A name is never resolved for the comparison: its owner's DNS
		// names a loopback and a private address among its own.
		{"mcp.evil.example", "127.0.0.1:7077", false},
		{"mcp.evil.example", "10.0.0.5:443", false},
		{"mcp.evil.example", "203.0.113.7:443", true},
	} {
		g := newDialGuard(tc.server, evilDNS)
		err := g.control(context.Background(), "tcp", tc.dial, nil)
		if (err == nil) != tc.ok || (err != nil && !errors.Is(err, ErrPrivateOAuthHost)) {
			t.Errorf("server %s, dial %s: %v, want allowed=%v", tc.server, tc.dial, err, tc.ok)
		}
	}
}

// An MCP server known by name whose DNS also answers 127.0.0.2: its
// OAuth endpoint on 127.0.0.2 gets no connection, whatever the name
// resolves to.
func TestOAuthTransportIgnoresTheServersDNS(t *testing.T) {
	target, conns := testutil.OtherLoopback(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	base := http.DefaultTransport.(*http.Transport).Clone()
	client := &http.Client{Transport: oauthTransport(base, "https://mcp.evil.example/mcp", false, evilDNS)}
	resp, err := client.Get(target + "/token")
	if err == nil {
		resp.Body.Close()
	}
	if !errors.Is(err, ErrPrivateOAuthHost) || !strings.Contains(err.Error(), "127.0.0.2") || conns.Load() != 0 {
		t.Fatalf("GET %s: %v, %d connections; want ErrPrivateOAuthHost naming 127.0.0.2 and none", target, err, conns.Load())
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
			auth := &config.Auth{Kind: config.AuthClientCredentials, ClientID: "c1", ClientSecret: "cs-planted-0b1d"}
			err := dialOAuthServer(t, auth, func(string) string { return tokenURL + "/token" }, nil, allow)
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

// With a proxy, the connection goes to the proxy, so the dial check
// cannot see the endpoint: its host is checked (resolved, every address)
// before the request is handed over, and a refused one never reaches
// the proxy. The proxy itself, on loopback, is not checked.
func TestOAuthTransportChecksTheHostBeforeAProxy(t *testing.T) {
	var proxied atomic.Int32
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		proxied.Add(1)
		io.WriteString(w, "via proxy "+r.URL.Host)
	}))
	defer proxy.Close()
	proxyURL, _ := url.Parse(proxy.URL)
	base := http.DefaultTransport.(*http.Transport).Clone()
	base.Proxy = http.ProxyURL(proxyURL) // injected: ProxyFromEnvironment reads the environment once per process
	dns := fakeResolver{
		"auth.internal.example": {netip.MustParseAddr("203.0.113.9"), netip.MustParseAddr("10.0.0.5")},
		"auth.nat64.example":    {netip.MustParseAddr("64:ff9b::7f00:1")},
		"auth.example.com":      {netip.MustParseAddr("203.0.113.9")},
	}
	client := &http.Client{Transport: oauthTransport(base, "https://mcp.example.com/mcp", false, dns)}
	for _, tc := range []struct {
		url     string
		refuse  string // what the error names; "" for a request the proxy gets
		private bool   // the error is ErrPrivateOAuthHost (else: not resolved)
	}{
		{"http://auth.internal.example/token", "10.0.0.5", true},
		{"http://auth.nat64.example/token", "64:ff9b::7f00:1", true},
		{"http://10.0.0.5/token", "10.0.0.5", true},
		{"http://169.254.169.254/latest/meta-data/", "169.254.169.254", true},
		{"http://auth.unknown.example/token", "auth.unknown.example", false},
		{"http://auth.example.com/token", "", false},
	} {
		before := proxied.Load()
		resp, err := client.Get(tc.url)
		got := proxied.Load() - before
		if tc.refuse == "" {
			if err != nil {
				t.Errorf("GET %s: %v, want it through the proxy", tc.url, err)
				continue
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if got != 1 || string(body) != "via proxy auth.example.com" {
				t.Errorf("GET %s: %q, %d requests at the proxy, want it through the proxy", tc.url, body, got)
			}
			continue
		}
		if err == nil {
			resp.Body.Close()
		}
		if err == nil || !strings.Contains(err.Error(), tc.refuse) || errors.Is(err, ErrPrivateOAuthHost) != tc.private || got != 0 {
			t.Errorf("GET %s: %v, %d requests at the proxy; want a refusal naming %s (private=%v) and none", tc.url, err, got, tc.refuse, tc.private)
		}
	}
}

// An oauth server whose discovery answers redirect to 127.0.0.2: the
// login's client follows redirected GETs (our redirect rule replaces the
// SDK's), so the redirect's connection is refused where it is made and
// 127.0.0.2 gets none, unless AllowPrivateOAuthHosts is set. (A refused
// protected-resource document is not fatal: the SDK falls back to the
// server's origin.)
func TestOAuthDiscoveryRedirectToAnotherPrivateHost(t *testing.T) {
	for _, code := range []int{http.StatusFound, http.StatusTemporaryRedirect} {
		for _, paths := range [][]string{
			{"/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"}, // the SDK tries both
			{"/.well-known/oauth-authorization-server"},
		} {
			for _, allow := range []bool{false, true} {
				t.Run(fmt.Sprint(code, paths[0], " allow=", allow), func(t *testing.T) {
					other, conns := testutil.OtherLoopback(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
						http.Error(w, "not found", http.StatusNotFound)
					}))
					var redirected atomic.Int32
					handlers := map[string]http.HandlerFunc{}
					for _, p := range paths {
						handlers[p] = func(w http.ResponseWriter, r *http.Request) {
							redirected.Add(1)
							http.Redirect(w, r, other+r.URL.Path, code)
						}
					}
					auth := &config.Auth{Kind: config.AuthOAuth, ClientID: "c1", ClientSecret: "cs-planted-0b1d"}
					err := dialOAuthServer(t, auth, func(self string) string { return self + "/token" }, handlers, allow)
					if err == nil || strings.Contains(err.Error(), "cs-planted-0b1d") {
						t.Fatalf("dial: %v, want an error that does not quote the secret", err)
					}
					if redirected.Load() == 0 {
						t.Fatalf("discovery never asked for %v: %v", paths, err)
					}
					if allow != (conns.Load() > 0) {
						t.Fatalf("allow=%v: %d connections to 127.0.0.2 after %d redirects (%v)", allow, conns.Load(), redirected.Load(), err)
					}
					if !allow && len(paths) == 1 && (!strings.Contains(err.Error(), "private address") || !strings.Contains(err.Error(), "127.0.0.2")) {
						t.Fatalf("dial: %v, want a refusal naming 127.0.0.2", err)
					}
				})
			}
		}
	}
}

// dialOAuthServer dials a server on 127.0.0.1 with auth whose metadata
// names tokenURL(its own URL), with handlers in place of its own for
// some paths, and returns the dial's error.
func dialOAuthServer(t *testing.T, auth *config.Auth, tokenURL func(self string) string, handlers map[string]http.HandlerFunc, allow bool) error {
	t.Helper()
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if h := handlers[r.URL.Path]; h != nil {
			h(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource":
			fmt.Fprintf(w, `{"resource":%q,"authorization_servers":[%q]}`, srv.URL+"/mcp", srv.URL)
		case "/.well-known/oauth-authorization-server":
			fmt.Fprintf(w, `{"issuer":%q,"token_endpoint":%q,"authorization_endpoint":%q,"code_challenge_methods_supported":["S256"]}`, srv.URL, tokenURL(srv.URL), srv.URL+"/authorize")
		default:
			w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer resource_metadata="%s/.well-known/oauth-protected-resource/mcp"`, srv.URL))
			http.Error(w, "unauthorized", http.StatusUnauthorized)
		}
	}))
	defer srv.Close()
	cfg := config.Server{Name: "cc", Type: config.TypeHTTP, URL: srv.URL + "/mcp", Enabled: true, TimeoutSeconds: 5, Auth: auth}
	var work sync.WaitGroup
	_, err := testDial(context.Background(), Options{Server: cfg, Go: work.Go, AllowPrivateOAuthHosts: allow})
	work.Wait()
	return err
}
