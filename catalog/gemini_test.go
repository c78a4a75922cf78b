package catalog

import (
	"slices"
	"testing"

	"github.com/openprogram/mcpvisor/config"
)

// geminiBareURL is the warning of a Gemini CLI url with no type.
const geminiBareURL = `url with no type: mapped as Streamable HTTP, which Gemini CLI tries first; Gemini CLI falls back to SSE when the server has no Streamable HTTP endpoint, mcpvisor does not: for such a server set type "sse"`

// Gemini CLI's remote forms: a url is Streamable HTTP unless its type
// says "sse"; a bare one is Streamable HTTP with a warning (Gemini CLI
// would fall back to SSE); httpUrl is Streamable HTTP and wins over url.
func TestGeminiRemoteTypes(t *testing.T) {
	for _, tc := range []struct {
		entry, typ string
		warned     bool
	}{
		{`{"url": "https://x.example/mcp"}`, config.TypeHTTP, true},
		{`{"type": "sse", "url": "https://x.example/sse"}`, config.TypeSSE, false},
		{`{"type": "http", "url": "https://x.example/mcp"}`, config.TypeHTTP, false},
		{`{"type": "streamable-http", "url": "https://x.example/mcp"}`, config.TypeHTTP, false},
		{`{"httpUrl": "https://x.example/mcp"}`, config.TypeHTTP, false},
	} {
		f, ok := newFields([]byte(tc.entry))
		if !ok {
			t.Fatal(tc.entry)
		}
		m := mapGemini("s", f)
		if m.cfg.Type != tc.typ || slices.Contains(m.warnings, geminiBareURL) != tc.warned {
			t.Errorf("%s: type %q, warnings %q; want type %q, bare-url warning %v", tc.entry, m.cfg.Type, m.warnings, tc.typ, tc.warned)
		}
	}
}
