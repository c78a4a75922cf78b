package mcpconn

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

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

// Icons: at most MaxIcons, one whose src is over the bound dropped (not
// cut), secrets scrubbed, size lists bounded.
func TestBoundedIcons(t *testing.T) {
	const secret = "sk-icon-url-token-5521"
	huge := "data:image/png;base64," + strings.Repeat("A", MaxInfoLongBytes)
	from := []mcp.Icon{{Source: huge}, {Source: "https://x.example/i.png?token=" + secret, Sizes: make([]string, 50)}}
	for i := range 2 * MaxIcons {
		from = append(from, mcp.Icon{Source: fmt.Sprintf("https://x.example/%d.png", i)})
	}
	got := boundedIcons(redact.New(secret), from)
	if len(got) != MaxIcons {
		t.Fatalf("%d icons kept, want %d", len(got), MaxIcons)
	}
	if got[0].Src != "https://x.example/i.png?token="+redact.Marker || len(got[0].Sizes) != 0 || got[1].Src != "https://x.example/0.png" {
		t.Errorf("icons = %+v, want the huge data: URI dropped, the token scrubbed, empty sizes dropped", got[:2])
	}
}
