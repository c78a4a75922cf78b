package runtime

import (
	"context"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/openprogram/mcpvisor/config"
)

// A huge text resource reaches the model cut to the server's text cap (the
// default 256 KiB), with a note; two prompts
// whose names sanitise alike give one registry prompt, the first.
func TestResourceCutAndPromptNameClash(t *testing.T) {
	big := strings.Repeat("x", 300<<10)
	transport := func(config.Server) mcp.Transport {
		srv := mcp.NewServer(&mcp.Implementation{Name: "mem", Version: "1"}, nil)
		srv.AddResource(&mcp.Resource{URI: "big://log", Name: "log", MIMEType: "text/plain"},
			func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
				return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: "big://log", MIMEType: "text/plain", Text: big}}}, nil
			})
		for _, name := range []string{"a.b", "a_b"} {
			srv.AddPrompt(&mcp.Prompt{Name: name, Description: name},
				func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
					return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: name}}}}, nil
				})
		}
		ct, st := mcp.NewInMemoryTransports()
		if _, err := srv.Connect(context.Background(), st, nil); err != nil {
			t.Error(err)
		}
		return ct
	}
	rt := start(t, Options{transport: transport}, memServer("mem"))
	rt.waitReady(t, "mem")
	res := mustCall(t, rt, "mem__read_resource", map[string]any{"uri": "big://log"})
	text := res.Content[0].Text
	if last := res.Content[len(res.Content)-1].Text; len(text) != 256<<10 || last != "[output truncated: 262144 of 307200 bytes of text shown; max_output_bytes=262144]" {
		t.Errorf("read_resource gave %d bytes, then %q", len(text), last)
	}
	rt.awaitCatalog(t, "ex", "the prompts", func() bool { return len(rt.Prompts()) > 0 })
	list := rt.Prompts()
	if len(list) != 1 || list[0].Name != "mem__a_b" {
		t.Fatalf("prompts = %+v, want one mem__a_b", list)
	}
	r, err := rt.GetPrompt(context.Background(), "mem__a_b", nil)
	if err != nil || r.Messages[0].Content.Text != list[0].OriginalName {
		t.Errorf("GetPrompt = %+v, %v; want the kept prompt's own text", r, err)
	}
}
