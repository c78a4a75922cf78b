package runtime

import (
	"crypto/sha256"
	"crypto/subtle"
	"net/http"
	"net/url"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MCPHTTPOptions configure MCPHandler.
type MCPHTTPOptions struct {
	// Token, when set, is the bearer token every request must carry
	// ("Authorization: Bearer TOKEN"); a request without it, or with
	// another, is 401. Compared in constant time.
	Token string
	// MaxRequestBytes bounds a request body (default 4 MiB; 413 above).
	MaxRequestBytes int64
}

// MCPHandler serves srv (from MCPServer) over Streamable HTTP, one
// session per client. Before the SDK sees a request it is refused (403)
// when its Origin header names another origin than its Host (the spec
// asks servers to validate Origin: a web page cannot drive the gateway
// from a browser), when it carries the mark of the runtime's own outgoing
// requests (an MCP server cannot make the runtime call itself), and (401)
// when a Token is set and the request does not carry it. The SDK itself
// refuses a request that reached a loopback socket under a Host that is
// not loopback (DNS rebinding).
func MCPHandler(srv *mcp.Server, opts MCPHTTPOptions) http.Handler {
	if opts.MaxRequestBytes <= 0 {
		opts.MaxRequestBytes = 4 << 20
	}
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv },
		&mcp.StreamableHTTPOptions{MaxRequestBodyBytes: opts.MaxRequestBytes})
	var want [sha256.Size]byte
	if opts.Token != "" {
		want = sha256.Sum256([]byte(opts.Token))
	}
	return refuseOwnRequests(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if !sameOrigin(req) {
			http.Error(w, "Forbidden: the Origin header names another origin", http.StatusForbidden)
			return
		}
		if opts.Token != "" {
			got, ok := strings.CutPrefix(req.Header.Get("Authorization"), "Bearer ")
			// Hashes first, so the comparison takes as long whatever the
			// length of what was sent.
			sum := sha256.Sum256([]byte(got))
			if subtle.ConstantTimeCompare(sum[:], want[:]) != 1 || !ok {
				w.Header().Set("WWW-Authenticate", `Bearer realm="mcpvisor"`)
				http.Error(w, "Unauthorized: a bearer token is required", http.StatusUnauthorized)
				return
			}
		}
		h.ServeHTTP(w, req)
	}))
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
