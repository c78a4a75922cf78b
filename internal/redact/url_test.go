package redact

import (
	"strings"
	"testing"
)

func TestURL(t *testing.T) {
	for _, tt := range []struct {
		raw       string
		keepQuery bool
		want      string
	}{
		{"https://example.com/mcp?x=1", true, "https://example.com/mcp?x=1"},
		{"https://MARKER-user:MARKER-pw@example.com/mcp?x=1", true, "https://" + Marker + "@example.com/mcp?x=1"},
		{"https://MARKER-user:MARKER-pw@as.example.com/token?code=MARKER-code#MARKER-frag", false, "https://" + Marker + "@as.example.com/token"},
		{"https://MARKER-user@as.example.com/token?", false, "https://" + Marker + "@as.example.com/token"},
		{"https://MARKER-user:@example.com/mcp", true, "https://" + Marker + "@example.com/mcp"},
		{"https://:MARKER-pw@example.com/mcp", true, "https://" + Marker + "@example.com/mcp"},
		{"http://[::1]:8080/a b%zz", false, Unparsable},
	} {
		got := URL(tt.raw, tt.keepQuery)
		if got != tt.want {
			t.Errorf("URL(%q, %v) = %q, want %q", tt.raw, tt.keepQuery, got, tt.want)
		}
		if strings.Contains(got, "MARKER") {
			t.Errorf("URL(%q, %v) = %q keeps a secret", tt.raw, tt.keepQuery, got)
		}
	}
}
