package mcpconn

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"sync"
	"syscall"
	"time"
)

// ErrPrivateOAuthHost: an OAuth endpoint (discovery, registration, token,
// refresh) resolved to a loopback, private, link-local, shared or
// unspecified address that is not the MCP server's own host. A server's
// metadata names these endpoints, so it could otherwise point the runtime
// at a service on the user's machine or network.
var ErrPrivateOAuthHost = errors.New("refused an OAuth endpoint on a private address")

// cgnat is the shared address space of RFC 6598, private in practice.
var cgnat = netip.MustParsePrefix("100.64.0.0/10")

// nonPublic reports whether ip is one the rule applies to.
func nonPublic(ip netip.Addr) bool {
	ip = ip.Unmap()
	return !ip.IsValid() || ip.IsLoopback() || ip.IsPrivate() || ip.IsLinkLocalUnicast() ||
		ip.IsLinkLocalMulticast() || ip.IsInterfaceLocalMulticast() || ip.IsMulticast() ||
		ip.IsUnspecified() || cgnat.Contains(ip)
}

// oauthTransport returns the transport of a server's OAuth requests. Its
// dialer checks the address each connection is actually made to (after
// DNS and after any redirect): a non-public address is refused unless it
// is one of the MCP server's own addresses (its literal IP, or what its
// host name resolves to) or allowPrivate is set.
//
// The SDK has a dial check of its own, but applies it only to a bare
// *http.Transport and refuses every loopback redirect; this one replaces
// it, with the exception that a server on loopback (a local server, a
// test) may keep its authorization server on its own host.
//
// A proxy (from the environment) is the user's choice, so the connection
// to it is not checked; the proxy makes the onward connection.
//
// Keep-alives are off: OAuth requests are few, and so no socket outlives
// the connection.
func oauthTransport(base *http.Transport, serverURL string, allowPrivate bool) *http.Transport {
	t := base.Clone()
	t.DisableKeepAlives = true
	if allowPrivate {
		return t
	}
	host := ""
	if u, err := url.Parse(serverURL); err == nil {
		host = u.Hostname()
	}
	g := &dialGuard{serverHost: host, proxies: map[string]bool{}}
	if proxy := t.Proxy; proxy != nil {
		t.Proxy = func(req *http.Request) (*url.URL, error) {
			u, err := proxy(req)
			if err == nil && u != nil {
				g.proxy(u)
			}
			return u, err
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
	serverHost string

	mu      sync.Mutex
	proxies map[string]bool // host:port of the proxies used so far
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
func (g *dialGuard) control(ctx context.Context, _, address string, _ syscall.RawConn) error {
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		host = address
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return fmt.Errorf("%w: %q is not an IP address", ErrPrivateOAuthHost, host)
	}
	ip = ip.Unmap()
	if !nonPublic(ip) {
		return nil
	}
	if slices.Contains(g.serverIPs(ctx), ip) {
		return nil
	}
	return fmt.Errorf("%w: %s is not the MCP server's host %q (set the runtime's AllowPrivateOAuthHosts option to allow it)", ErrPrivateOAuthHost, ip, g.serverHost)
}

// serverIPs are the MCP server's addresses, resolved now: a name that
// moved is compared with where it points at the time of the dial.
func (g *dialGuard) serverIPs(ctx context.Context) []netip.Addr {
	if ip, err := netip.ParseAddr(g.serverHost); err == nil {
		return []netip.Addr{ip.Unmap()}
	}
	if g.serverHost == "" {
		return nil
	}
	ips, err := net.DefaultResolver.LookupNetIP(ctx, "ip", g.serverHost)
	if err != nil {
		return nil
	}
	for i := range ips {
		ips[i] = ips[i].Unmap()
	}
	return ips
}
