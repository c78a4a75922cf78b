package binding

import (
	"fmt"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A listing shows at most maxListedIcons icons of an item, in the
// server's order, leaving out those whose src is over maxListedIconSrc.
func TestListedIconsBounded(t *testing.T) {
	var from []mcp.Icon
	for i := range 8 {
		src := fmt.Sprintf("https://example.test/%d.png", i)
		if i == 1 {
			src = "data:image/png;base64," + strings.Repeat("A", maxListedIconSrc)
		}
		from = append(from, mcp.Icon{Source: src})
	}
	got := listedIcons(connTo(t, "x"), from)
	if len(got) != maxListedIcons {
		t.Fatalf("%d icons listed, want %d", len(got), maxListedIcons)
	}
	for i, want := range []int{0, 2, 3, 4} {
		if got[i].Src != fmt.Sprintf("https://example.test/%d.png", want) {
			t.Errorf("icon %d = %q, want the server's icon %d", i, got[i].Src, want)
		}
	}
}

// Annotations that say nothing are left out; those sent are kept.
func TestAnnotationsOf(t *testing.T) {
	if a := annotationsOf(&mcp.Annotations{}); a != nil {
		t.Errorf("empty annotations listed as %+v", a)
	}
	a := annotationsOf(&mcp.Annotations{Audience: []mcp.Role{"user"}, LastModified: "2026-01-01T00:00:00Z"})
	if a == nil || len(a.Audience) != 1 || a.Audience[0] != "user" || a.LastModified != "2026-01-01T00:00:00Z" || a.Priority != 0 {
		t.Errorf("annotations listed as %+v", a)
	}
}
