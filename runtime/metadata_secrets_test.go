package runtime

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/openprogram/mcpvisor/config"
	"github.com/openprogram/mcpvisor/status"
)

// A server echoes the secret its config sends it (a header) into a tool's
// title, annotations' title, output schema and _meta, a resource's and a
// prompt's title, and a resource read's uri, MIME type and _meta: none of
// it shows in GET /api/mcp/tools, the server detail, the meta tools'
// listings or ReadResource. (Icons are bounded and scrubbed by their own
// function, tested with it.)
func TestToolMetadataHidesSecrets(t *testing.T) {
	const secret = "sk-toolmeta-planted-6d21"
	getServer := func(r *http.Request) *mcp.Server {
		key := r.Header.Get("X-Api-Key")
		s := mcp.NewServer(&mcp.Implementation{Name: "echoer"}, nil)
		s.AddTool(&mcp.Tool{Name: "t", Title: "T " + key, InputSchema: map[string]any{"type": "object"},
			Annotations:  &mcp.ToolAnnotations{Title: "A " + key},
			OutputSchema: map[string]any{"type": "object", "description": key},
			Meta:         mcp.Meta{"k": key}},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{StructuredContent: map[string]any{}}, nil
			})
		// The listed URI is the address the model reads it by, and stays
		// as sent; the read's own description of it is the runtime's.
		s.AddResource(&mcp.Resource{URI: "file:///r", Name: "r", Title: "R " + key},
			func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
				return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: "file:///r/" + key, MIMEType: "text/x-" + key, Text: "hello",
					Meta: mcp.Meta{"ui": map[string]any{"domain": "https://" + key + ".invalid"}}}}}, nil
			})
		s.AddPrompt(&mcp.Prompt{Name: "p", Title: "P " + key},
			func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
				return &mcp.GetPromptResult{}, nil
			})
		return s
	}
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(getServer, nil))
	t.Cleanup(hs.Close)
	rt := start(t, Options{}, config.Server{Name: "web", Type: config.TypeHTTP, URL: hs.URL, Enabled: true,
		Headers: map[string]string{"X-Api-Key": secret}})
	if st := rt.waitSettled(t, "web"); st.State != status.Ready {
		t.Fatalf("web = %+v", st)
	}
	api := newAPI(t, rt)
	for _, path := range []string{"/api/mcp/tools", "/api/mcp/servers/web"} {
		body := string(api.do("GET", path, "").want(t, http.StatusOK).body)
		if strings.Contains(body, secret) || !strings.Contains(body, `"title":"T [redacted]"`) {
			t.Errorf("%s shows the planted secret, or no scrubbed title: %s", path, body)
		}
	}
	tool, _ := rt.Registry().Get("web__t")
	if !json.Valid(tool.OutputSchema) || !json.Valid(tool.Meta) || tool.Annotations == nil || tool.Annotations.Title != "A [redacted]" {
		t.Errorf("web__t = %+v: want valid JSON and a scrubbed annotations title", tool)
	}
	for _, name := range []string{"web__list_resources", "web__list_prompts"} {
		res := mustCall(t, rt, name, map[string]any{})
		if text := fmt.Sprint(res.Content); strings.Contains(text, secret) || !strings.Contains(text, "[redacted]") {
			t.Errorf("%s = %s: want the title scrubbed", name, text)
		}
	}
	read, err := rt.ReadResource(context.Background(), "web", "file:///r")
	if err != nil || len(read.Contents) != 1 {
		t.Fatalf("ReadResource = %+v, %v", read, err)
	}
	c := read.Contents[0]
	if got := fmt.Sprintf("%s %s %s", c.URI, c.MIMEType, c.Meta); strings.Contains(got, secret) || !json.Valid(c.Meta) || c.Text != "hello" {
		t.Errorf("ReadResource contents = %s (text %q): want uri, MIME type and _meta scrubbed, the text as sent", got, c.Text)
	}
}
