// Package netaddr holds the runtime's one answer to "is this address this
// machine's loopback interface?", which decides where plain http is
// allowed (OAuth endpoints, the login callback) and who may use the
// management API. It is a package of its own because those callers (the
// runtime's HTTP guard, oauthflow, the OAuth callback, the demo) share
// nothing else; the redaction package is about secrets, not addresses.
package netaddr

import (
	"net"
	"net/netip"
	"strings"
)

// Loopback reports whether host names this machine's loopback interface:
// "localhost" (any case, with or without the trailing dot of its fully
// qualified form), an address in 127.0.0.0/8, or ::1 (IPv4-mapped forms
// included). host may carry a port and IPv6 brackets, as a Host header or
// a listener's address does ("[::1]:8080"). An empty host is not loopback.
// "localhost." is accepted on purpose, everywhere Loopback decides (the
// API's Host check and oauthflow's plain-http exception alike): it is the
// same name, which resolvers answer with loopback (RFC 6761).
func Loopback(host string) bool {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	} else if strings.HasPrefix(host, "[") && strings.HasSuffix(host, "]") {
		host = host[1 : len(host)-1]
	}
	if strings.EqualFold(host, "localhost") || strings.EqualFold(host, "localhost.") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.Unmap().IsLoopback()
}
