package mcpconn

import (
	"net/netip"
	"testing"
)

// IPv6 forms that carry an IPv4 address are as public as that address.
func TestNonPublicEmbeddedIPv4(t *testing.T) {
	for _, tc := range []struct {
		ip     string
		public bool
	}{
		{"8.8.8.8", true},
		{"2606:4700::1111", true},
		{"::ffff:127.0.0.1", false}, // IPv4-mapped
		{"::ffff:8.8.8.8", true},
		{"::127.0.0.1", false}, // IPv4-compatible
		{"::10.0.0.5", false},
		{"::8.8.8.8", true},
		{"64:ff9b::127.0.0.1", false}, // NAT64, well-known prefix
		{"64:ff9b::a00:5", false},
		{"64:ff9b::169.254.169.254", false},
		{"64:ff9b::8.8.8.8", true},
		{"64:ff9b:1::808:808", false}, // local-use NAT64: non-public as a whole
		{"2002:7f00:1::1", false},     // 6to4 of 127.0.0.1
		{"2002:c0a8:101::1", false},   // 6to4 of 192.168.1.1
		{"2002:808:808::1", true},     // 6to4 of 8.8.8.8
		// Teredo: server 65.54.227.120, client 10.0.0.5 (obfuscated f5ff:fffa).
		{"2001:0:4136:e378:8000:63bf:f5ff:fffa", false},
		// Teredo: server 10.0.0.1, client 8.8.8.8 (f7f7:f7f7).
		{"2001:0:a00:1:8000:63bf:f7f7:f7f7", false},
		// Teredo: server 65.54.227.120, client 8.8.8.8.
		{"2001:0:4136:e378:8000:63bf:f7f7:f7f7", true},
		{"0.1.2.3", false},         // this network
		{"240.0.0.1", false},       // reserved
		{"255.255.255.255", false}, // broadcast
		{"fec0::1", false},         // site-local
		{"fd00::1", false},         // unique local
	} {
		if got := !nonPublic(netip.MustParseAddr(tc.ip)); got != tc.public {
			t.Errorf("%s: public=%v, want %v", tc.ip, got, tc.public)
		}
	}
}
