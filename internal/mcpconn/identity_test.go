package mcpconn

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/openprogram/mcpvisor/internal/redact"
)

// A secret that crosses the cut of long instructions leaves no part of
// itself behind; the cut text is valid UTF-8 and marked.
func TestBoundedInstructions(t *testing.T) {
	const secret = "sk-crossing-the-cut-4410"
	scrub := redact.New(secret)
	text := strings.Repeat("ü", (MaxInstructionsBytes-10)/2) + secret + strings.Repeat("x", 100)
	got := bounded(scrub, text, MaxInstructionsBytes, InstructionsTruncated)
	body, ok := strings.CutSuffix(got, InstructionsTruncated)
	if !ok || len(body) > MaxInstructionsBytes || !utf8.ValidString(got) {
		t.Fatalf("bounded: %d bytes, marked %v, valid %v", len(got), ok, utf8.ValidString(got))
	}
	if strings.Contains(body, secret[:6]) {
		t.Errorf("the cut kept the start of the secret: …%q", body[len(body)-20:])
	}
	if short := bounded(scrub, "uses "+secret, MaxInstructionsBytes, InstructionsTruncated); short != "uses "+redact.Marker {
		t.Errorf("short text = %q, want the secret replaced and no marker", short)
	}
}
