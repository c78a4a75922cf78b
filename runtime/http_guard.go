package runtime

import (
	"fmt"
	"net/http"

	"github.com/openprogram/mcpvisor/internal/mcpconn"
	"github.com/openprogram/mcpvisor/internal/netaddr"
)

// loopbackOnly refuses requests whose Host is not a loopback name or
// address. A web page that rebinds its own DNS name to 127.0.0.1 still
// sends that name as Host, so this keeps the API out of a browser's reach
// even though the socket is local (the check caddy's admin API makes).
func loopbackOnly(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if !loopbackHost(req.Host) {
			writeError(w, &apiError{Status: http.StatusForbidden,
				Message: fmt.Sprintf("host %s not allowed: the management API answers only to localhost and loopback addresses", quoteShort(req.Host))})
			return
		}
		next.ServeHTTP(w, req)
	})
}

// loopbackHost reports whether host (a Host header: name or address, with
// or without a port) names this machine's loopback interface: "localhost",
// 127.0.0.0/8 or ::1. An empty Host (HTTP/1.0) is accepted: it names
// nothing a browser could have been tricked into.
func loopbackHost(host string) bool {
	return host == "" || netaddr.Loopback(host)
}

// refuseOwnRequests refuses every request that carries the mark the
// runtime puts on all the HTTP requests it sends (to MCP servers and
// their authorization servers), whatever its value: a server that names
// this API as an OAuth endpoint, or redirects there, cannot drive it, and
// no mcpvisor runtime's servers can drive another's. Handler cannot know
// where a host mounted it, so the mark, not the address, decides.
func refuseOwnRequests(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if _, ok := req.Header[mcpconn.RequestMarkHeader]; ok {
			writeError(w, &apiError{Status: http.StatusForbidden,
				Message: "request refused: it carries " + mcpconn.RequestMarkHeader + ", so an mcpvisor runtime sent it on behalf of an MCP server"})
			return
		}
		next.ServeHTTP(w, req)
	})
}
