package mcpconn

import (
	"context"
	"errors"
	"testing"
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
