package mcpconn

import (
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A call carries the log level in its _meta only where the server takes
// it from there: protocol 2026-07-28 (or later) and a server that
// declares logging. A 2025-11-25 server that logs and a 2026-07-28 one
// that does not get no log level (bytes they would decode on every call
// for nothing); every call keeps its progress token.
func TestLogLevelInMetaOnlyWhereTheServerReadsIt(t *testing.T) {
	for _, tc := range []struct {
		name     string
		flags    []string
		protocol string
		logging  bool
		want     bool
	}{
		{"2026-07-28 with logging", nil, "2026-07-28", true, true},
		{"2025-11-25 with logging", []string{"-protocol", "2025-11-25"}, "2025-11-25", true, false},
		{"2026-07-28 without logging", []string{"-no-logging"}, "2026-07-28", false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := dialProgress(t, 0, tc.flags...)
			if got := c.ProtocolVersion(); got != tc.protocol {
				t.Fatalf("negotiated %q, want %q", got, tc.protocol)
			}
			if got := c.Capabilities().Logging != nil; got != tc.logging {
				t.Fatalf("server declares logging: %v, want %v", got, tc.logging)
			}
			res, err := c.CallTool(t.Context(), "meta", map[string]any{})
			if err != nil {
				t.Fatalf("meta: %v", err)
			}
			var meta map[string]any
			if err := json.Unmarshal([]byte(res.Content[0].(*mcp.TextContent).Text), &meta); err != nil {
				t.Fatalf("meta %q: %v", res.Content[0].(*mcp.TextContent).Text, err)
			}
			level, sent := meta[mcp.MetaKeyLogLevel]
			if sent != tc.want || (sent && level != serverLogLevel) {
				t.Fatalf("_meta = %v: log level sent %v (%v), want sent %v", meta, sent, level, tc.want)
			}
			if token, ok := meta["progressToken"].(string); !ok || token == "" {
				t.Fatalf("_meta = %v: no progress token", meta)
			}
		})
	}
}
