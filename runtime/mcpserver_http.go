package runtime

import (
	"crypto/sha256"
	"crypto/subtle"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MCPHTTPOptions configure MCPHandler.
type MCPHTTPOptions struct {
	// Token, when set, is the bearer token every request must carry
	// ("Authorization: Bearer TOKEN", the scheme in any case); a request
	// without it, or with another, is 401. Compared in constant time.
	Token string
	// MaxRequestBytes bounds a request body (default 4 MiB; 413 above).
	MaxRequestBytes int64
	// SessionTimeout closes a client's session after it sent no request
	// for this long, which ends its subscriptions (default 30 minutes;
	// negative: never).
	SessionTimeout time.Duration
	// MaxSessions bounds the sessions of srv at once (on every transport
	// srv serves), exactly under concurrent initializes: a request that
	// would open one more is 503 (default 1000; negative: no bound). A
	// client gone without DELETE holds its session until SessionTimeout.
	MaxSessions int
	// AllowedOrigins are origins ("https://app.example", scheme, host
	// and port as a browser sends them) a browser client may use besides
	// the gateway's own.
	AllowedOrigins []string
}

// Defaults of MCPHTTPOptions.
const (
	defaultGatewaySessionTimeout = 30 * time.Minute
	defaultGatewayMaxSessions    = 1000
)

// MCPHandler serves srv (from MCPServer) over Streamable HTTP, one
// session per client. Before the SDK sees a request it is refused (403)
// when its Origin header names another origin than its Host and is not
// one of AllowedOrigins (the spec asks servers to validate Origin: a web
// page cannot drive the gateway from a browser), when it carries the mark
// of the runtime's own outgoing requests (an MCP server cannot make the
// runtime call itself), (401) when a Token is set and the request does
// not carry it, and (503) when it would open a session beyond
// MaxSessions. The SDK itself refuses a request that reached a loopback
// socket under a Host that is not loopback (DNS rebinding), and closes a
// session idle for SessionTimeout.
func MCPHandler(srv *mcp.Server, opts MCPHTTPOptions) http.Handler {
	if opts.MaxRequestBytes <= 0 {
		opts.MaxRequestBytes = 4 << 20
	}
	switch {
	case opts.SessionTimeout == 0:
		opts.SessionTimeout = defaultGatewaySessionTimeout
	case opts.SessionTimeout < 0:
		opts.SessionTimeout = 0 // the SDK's never
	}
	if opts.MaxSessions == 0 {
		opts.MaxSessions = defaultGatewayMaxSessions
	}
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv },
		// Stateful: the SDK (v1.8.0) refuses protocol 2026-07-28 here, so
		// HTTP clients negotiate 2025-11-25 at most and cancel a call with
		// notifications/cancelled (TestGatewayHTTPCancelNotification);
		// PropagateRequestCancellation would have no effect.
		&mcp.StreamableHTTPOptions{MaxRequestBodyBytes: opts.MaxRequestBytes, SessionTimeout: opts.SessionTimeout})
	var want [sha256.Size]byte
	if opts.Token != "" {
		want = sha256.Sum256([]byte(opts.Token))
	}
	adm := &admission{}
	return refuseOwnRequests(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if !sameOrigin(req) && !slices.Contains(opts.AllowedOrigins, req.Header.Get("Origin")) {
			http.Error(w, "Forbidden: the Origin header names another origin", http.StatusForbidden)
			return
		}
		if opts.Token != "" {
			got, ok := bearerToken(req)
			// Hashes first, so the comparison takes as long whatever the
			// length of what was sent.
			sum := sha256.Sum256([]byte(got))
			if subtle.ConstantTimeCompare(sum[:], want[:]) != 1 || !ok {
				w.Header().Set("WWW-Authenticate", `Bearer realm="mcpvisor"`)
				http.Error(w, "Unauthorized: a bearer token is required", http.StatusUnauthorized)
				return
			}
		}
		if opts.MaxSessions > 0 && req.Method == http.MethodPost && req.Header.Get("Mcp-Session-Id") == "" {
			if !adm.admit(srv, opts.MaxSessions) {
				http.Error(w, "Service Unavailable: too many client sessions", http.StatusServiceUnavailable)
				return
			}
			defer adm.done()
		}
		h.ServeHTTP(w, req)
	}))
}

// bearerToken is the token of req's "Authorization: Bearer TOKEN" header;
// the scheme is case-insensitive (RFC 7235 §2.1).
func bearerToken(req *http.Request) (string, bool) {
	scheme, token, ok := strings.Cut(req.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	return strings.TrimLeft(token, " "), true
}

// admission makes MaxSessions exact under concurrent initializes: a
// request that may open a session counts from its admission until it
// returns (by then its session is among srv's), so two at once cannot
// both take the last place. (A session counts twice for that moment:
// the bound errs on refusing.)
type admission struct {
	mu      sync.Mutex
	opening int // admitted requests that may open a session, not returned
}

// admit reports whether one more session fits under max, counting it
// then (done uncounts it).
func (a *admission) admit(srv *mcp.Server, max int) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if sessionCount(srv)+a.opening >= max {
		return false
	}
	a.opening++
	return true
}

func (a *admission) done() {
	a.mu.Lock()
	a.opening--
	a.mu.Unlock()
}

// sessionCount is how many sessions srv has.
func sessionCount(srv *mcp.Server) int {
	n := 0
	for range srv.Sessions() {
		n++
	}
	return n
}

// sameOrigin reports whether req has no Origin header (not a browser) or
// one whose host and port are req's Host.
func sameOrigin(req *http.Request) bool {
	origin := req.Header.Get("Origin")
	if origin == "" {
		return true
	}
	u, err := url.Parse(origin)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" && strings.EqualFold(u.Host, req.Host)
}
