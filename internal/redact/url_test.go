package redact

import "testing"

func TestURL(t *testing.T) {
	for _, tt := range []struct {
		raw       string
		keepQuery bool
		want      string
	}{
		{"https://example.com/mcp?x=1", true, "https://example.com/mcp?x=1"},
		{"https://user:MARKER-pw@example.com/mcp?x=1", true, "https://user:" + Marker + "@example.com/mcp?x=1"},
		{"https://user:MARKER-pw@as.example.com/token?code=MARKER-code#MARKER-frag", false, "https://user:" + Marker + "@as.example.com/token"},
		{"https://user@as.example.com/token?", false, "https://user@as.example.com/token"},
		{"https://user:@example.com/mcp", true, "https://user:@example.com/mcp"},
		{"http://[::1]:8080/a b%zz", false, Unparsable},
	} {
		if got := URL(tt.raw, tt.keepQuery); got != tt.want {
			t.Errorf("URL(%q, %v) = %q, want %q", tt.raw, tt.keepQuery, got, tt.want)
		}
	}
}
