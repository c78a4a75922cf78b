package mcpconn

import (
	"net/netip"
)

// The ranges nonPublic adds to netip's own classification.
var (
	thisNetwork = netip.MustParsePrefix("0.0.0.0/8")      // Linux routes 0.0.0.0 to the host itself
	cgnat       = netip.MustParsePrefix("100.64.0.0/10")  // RFC 6598 shared address space
	reserved4   = netip.MustParsePrefix("240.0.0.0/4")    // reserved, and the broadcast address
	siteLocal   = netip.MustParsePrefix("fec0::/10")      // deprecated, still routed where configured
	nat64Local  = netip.MustParsePrefix("64:ff9b:1::/48") // RFC 8215: local-use NAT64, embedding unknown
)

// Prefixes of IPv6 addresses that carry an IPv4 address the packet may
// end up at (a NAT64 translator, a 6to4 or Teredo relay, a SIT tunnel).
var (
	v4Compatible = netip.MustParsePrefix("::/96")        // ::a.b.c.d, deprecated (RFC 4291)
	nat64        = netip.MustParsePrefix("64:ff9b::/96") // 64:ff9b::a.b.c.d (RFC 6052)
	sixToFour    = netip.MustParsePrefix("2002::/16")    // 2002:AABB:CCDD::/48 (RFC 3056)
	teredo       = netip.MustParsePrefix("2001::/32")    // server and obfuscated client IPv4 (RFC 4380)
)

// nonPublic reports whether ip is one the OAuth address rule applies to:
// loopback, private, link-local, shared, multicast, unspecified or
// reserved, or an IPv6 address that carries such an IPv4 address (see
// embeddedIPv4). The local-use NAT64 prefix is non-public as a whole: its
// operator chooses where the IPv4 address sits in it.
func nonPublic(ip netip.Addr) bool {
	ip = ip.Unmap()
	if !ip.IsValid() || ip.IsLoopback() || ip.IsPrivate() || ip.IsLinkLocalUnicast() ||
		ip.IsLinkLocalMulticast() || ip.IsInterfaceLocalMulticast() || ip.IsMulticast() ||
		ip.IsUnspecified() {
		return true
	}
	for _, p := range []netip.Prefix{thisNetwork, cgnat, reserved4, siteLocal, nat64Local} {
		if p.Contains(ip) {
			return true
		}
	}
	for _, v4 := range embeddedIPv4(ip) {
		if nonPublic(v4) {
			return true
		}
	}
	return false
}

// embeddedIPv4 returns the IPv4 addresses an IPv6 address carries, by
// the prefixes above (IPv4-mapped addresses are unmapped before).
func embeddedIPv4(ip netip.Addr) []netip.Addr {
	if !ip.Is6() {
		return nil
	}
	b := ip.As16()
	switch {
	case v4Compatible.Contains(ip), nat64.Contains(ip):
		return []netip.Addr{netip.AddrFrom4([4]byte(b[12:16]))}
	case sixToFour.Contains(ip):
		return []netip.Addr{netip.AddrFrom4([4]byte(b[2:6]))}
	case teredo.Contains(ip):
		client := [4]byte{^b[12], ^b[13], ^b[14], ^b[15]}
		return []netip.Addr{netip.AddrFrom4([4]byte(b[4:8])), netip.AddrFrom4(client)}
	}
	return nil
}
