package mcpconn

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"sync"
	"syscall"
	"time"

	"github.com/openprogram/mcpvisor/internal/netaddr"
	"github.com/openprogram/mcpvisor/internal/oauthflow"
)

// ErrPrivateOAuthHost: an OAuth endpoint (discovery, registration, token,
// refresh) resolved to a loopback, private, link-local, shared or
// unspecified address that is not the MCP server's own host. A server's
// metadata names these endpoints, so it could otherwise point the runtime
// at a service on the user's machine or network.
var ErrPrivateOAuthHost = oauthflow.ErrPrivateOAuthHost

// hostResolver looks up a host name: net.DefaultResolver, or a test's.
type hostResolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// oauthTransport returns the transport of a server's OAuth requests. Its
// dialer checks the address each connection is actually made to (after
// DNS and after any redirect): a non-public address (see nonPublic) is
// refused unless it is the MCP server's own host as the user configured
// it, or allowPrivate is set. The server's own host is an IP literal in
// its URL (that address only) or localhost (any loopback address). A host
// name is never resolved for the comparison: its owner controls the
// answer (two A records, one of them 127.0.0.1, or a rebinding between
// requests), so an OAuth endpoint of a server known by name may not be on
// a non-public address at all without allowPrivate.
//
// The SDK has a dial check of its own, but applies it only to a bare
// *http.Transport and refuses every loopback redirect; this one replaces
// it, with the exception that a server on loopback (a local server, a
// test) may keep its authorization server on its own host.
//
// A proxy (from the environment) makes the onward connection itself, so
// the connection to the proxy is not checked; instead, before a request
// is handed to a proxy, its host is resolved (with resolver; nil means
// net.DefaultResolver) and checked by the same rule, every address of
// the answer. The proxy resolves the name again, which this cannot see.
//
// Keep-alives are off: OAuth requests are few, and so no socket outlives
// the connection.
func oauthTransport(base *http.Transport, serverURL string, allowPrivate bool, resolver hostResolver) *http.Transport {
	t := base.Clone()
	t.DisableKeepAlives = true
	if allowPrivate {
		return t
	}
	host := ""
	if u, err := url.Parse(serverURL); err == nil {
		host = u.Hostname()
	}
	g := newDialGuard(host, resolver)
	if proxy := t.Proxy; proxy != nil {
		t.Proxy = func(req *http.Request) (*url.URL, error) {
			u, err := proxy(req)
			if err != nil || u == nil {
				return u, err
			}
			if err := g.checkHost(req.Context(), req.URL.Hostname()); err != nil {
				return nil, err
			}
			g.proxy(u)
			return u, nil
		}
	}
	checked := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second, ControlContext: g.control}
	plain := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}
	t.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		if g.isProxy(addr) {
			return plain.DialContext(ctx, network, addr)
		}
		return checked.DialContext(ctx, network, addr)
	}
	return t
}

// dialGuard is the state of one OAuth transport's dial check.
type dialGuard struct {
	serverHost     string     // as configured, for errors
	serverIP       netip.Addr // the configured host, if an IP literal
	serverLoopback bool       // the configured host is localhost
	resolver       hostResolver

	mu      sync.Mutex
	proxies map[string]bool // host:port of the proxies used so far
}

// newDialGuard returns the guard of a server whose URL names
// serverHost; a nil resolver means net.DefaultResolver.
func newDialGuard(serverHost string, resolver hostResolver) *dialGuard {
	if resolver == nil {
		resolver = net.DefaultResolver
	}
	g := &dialGuard{serverHost: serverHost, resolver: resolver, proxies: map[string]bool{}}
	if ip, err := netip.ParseAddr(serverHost); err == nil {
		g.serverIP = ip.Unmap().WithZone("")
	}
	// By name only: an IP literal allows just itself (serverIP).
	g.serverLoopback = !g.serverIP.IsValid() && netaddr.Loopback(serverHost)
	return g
}

func (g *dialGuard) proxy(u *url.URL) {
	port := u.Port()
	if port == "" {
		port = map[string]string{"https": "443", "http": "80", "socks5": "1080"}[u.Scheme]
	}
	g.mu.Lock()
	g.proxies[net.JoinHostPort(u.Hostname(), port)] = true
	g.mu.Unlock()
}

func (g *dialGuard) isProxy(addr string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.proxies[addr]
}

// control runs on every connection attempt with the resolved address.
func (g *dialGuard) control(_ context.Context, _, address string, _ syscall.RawConn) error {
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		host = address
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return fmt.Errorf("%w: %q is not an IP address", ErrPrivateOAuthHost, host)
	}
	return g.check(ip, "")
}

// checkHost checks every address host resolves to, for a request that a
// proxy will make.
func (g *dialGuard) checkHost(ctx context.Context, host string) error {
	if ip, err := netip.ParseAddr(host); err == nil {
		return g.check(ip, "")
	}
	ips, err := g.resolver.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return fmt.Errorf("resolving OAuth host %q to check it before the proxy: %w", host, err)
	}
	for _, ip := range ips {
		if err := g.check(ip, host); err != nil {
			return err
		}
	}
	return nil
}

// check refuses a non-public ip that is not the MCP server's own host;
// name, if set, is the host name it was resolved from.
func (g *dialGuard) check(ip netip.Addr, name string) error {
	ip = ip.Unmap().WithZone("")
	if !nonPublic(ip) || ip == g.serverIP || (g.serverLoopback && ip.IsLoopback()) {
		return nil
	}
	what := ip.String()
	if name != "" {
		what = fmt.Sprintf("%s (%s, checked before the proxy)", ip, name)
	}
	return fmt.Errorf("%w: %s is not the MCP server's host %q (set the runtime's AllowPrivateOAuthHosts option to allow it)", ErrPrivateOAuthHost, what, g.serverHost)
}
