package mcpconn

import (
	"fmt"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/openprogram/mcpvisor/internal/redact"
)

// Icons: at most MaxIcons, one whose src is over the bound dropped (not
// cut), secrets scrubbed, size lists bounded.
func TestBoundedIcons(t *testing.T) {
	const secret = "sk-icon-url-token-5521"
	huge := "data:image/png;base64," + strings.Repeat("A", MaxIconSrcBytes)
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
