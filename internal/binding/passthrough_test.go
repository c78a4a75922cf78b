package binding

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The Passthrough's copy of an answer carries no secret of the server's
// config in any _meta: the result's, and each block's (text, image,
// audio, resource link, embedded resource).
func TestPassthroughScrubsEveryMeta(t *testing.T) {
	const secret = "passthrough-marker-secret-4b1d"
	conn := dialServer(t, mcp.NewServer(&mcp.Implementation{Name: "m", Version: "1"}, nil), map[string]string{"API_KEY": secret})
	meta := mcp.Meta{"leak": "key=" + secret}
	res := &mcp.CallToolResult{Meta: meta, Content: []mcp.Content{
		&mcp.TextContent{Text: "ok", Meta: meta},
		&mcp.ImageContent{Data: []byte{1}, MIMEType: "image/png", Meta: meta},
		&mcp.AudioContent{Data: []byte{1}, MIMEType: "audio/wav", Meta: meta},
		&mcp.ResourceLink{URI: "a://b", Name: "b", Meta: meta},
		&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "a://b", Text: "t", Meta: meta}, Meta: meta},
	}}
	ctx, pass := WithPassthrough(t.Context())
	keep(ctx, conn, res)
	if pass.Result == nil || len(pass.Result.Content) != len(res.Content) {
		t.Fatalf("passthrough = %+v, want all %d blocks", pass.Result, len(res.Content))
	}
	out, err := json.Marshal(pass.Result)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(out), secret) {
		t.Errorf("the passthrough result holds the secret: %s", strings.ReplaceAll(string(out), secret, "<SECRET>"))
	}
	if !strings.Contains(string(out), `"leak"`) {
		t.Errorf("the passthrough result lost the _meta keys: %s", out)
	}
	if res.Content[0].(*mcp.TextContent).Meta["leak"] != "key="+secret {
		t.Errorf("keep changed the server's own result")
	}
}
