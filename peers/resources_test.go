//go:build unix

package peers_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// Runtime.ReadResource and POST /api/mcp/resources/read against
// server-everything on every transport: a static document, a dynamic text
// resource and a dynamic blob (base64 in JSON, no text), each with its URI
// and MIME type.
func TestEverythingReadResource(t *testing.T) {
	const (
		static = "demo://resource/static/document/instructions.md"
		text   = "demo://resource/dynamic/text/1"
		blob   = "demo://resource/dynamic/blob/2"
	)
	for _, transport := range []string{"stdio", "sse", "streamableHttp"} {
		t.Run(transport, func(t *testing.T) {
			srv, keep := everythingServer(t, transport)
			rt := startRuntime(t, keep, srv)
			rt.waitReady(t, "everything")
			ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
			defer cancel()

			res, err := rt.ReadResource(ctx, "everything", static)
			if err != nil || len(res.Contents) != 1 || res.Contents[0].URI != static || res.Contents[0].MIMEType != "text/markdown" ||
				res.Contents[0].IsBlob() || res.Contents[0].Text == "" {
				t.Errorf("ReadResource(%s) = %+v, %v", static, res, err)
			}
			res, err = rt.ReadResource(ctx, "everything", text)
			if err != nil || len(res.Contents) != 1 || res.Contents[0].MIMEType != "text/plain" || !strings.HasPrefix(res.Contents[0].Text, "Resource 1: ") {
				t.Errorf("ReadResource(%s) = %+v, %v", text, res, err)
			}
			res, err = rt.ReadResource(ctx, "everything", blob)
			if err != nil || len(res.Contents) != 1 || !res.Contents[0].IsBlob() || !strings.HasPrefix(string(res.Contents[0].Blob), "Resource 2: ") {
				t.Errorf("ReadResource(%s) = %+v, %v", blob, res, err)
			}

			rec := serveAPI(rt.Handler(), "POST", "/api/mcp/resources/read", `{"server": "everything", "uri": "`+blob+`"}`)
			var answer struct {
				Contents []map[string]json.RawMessage `json:"contents"`
			}
			if rec.Code != http.StatusOK || json.Unmarshal(rec.Body.Bytes(), &answer) != nil || len(answer.Contents) != 1 {
				t.Fatalf("POST /api/mcp/resources/read = %d %s", rec.Code, rec.Body)
			}
			c := answer.Contents[0]
			var encoded string
			_ = json.Unmarshal(c["blob"], &encoded)
			decoded, err := base64.StdEncoding.DecodeString(encoded)
			if _, hasText := c["text"]; hasText || err != nil || !strings.HasPrefix(string(decoded), "Resource 2: ") ||
				string(c["uri"]) != `"`+blob+`"` || string(c["mime_type"]) != `"text/plain"` {
				t.Errorf("read answer = %s", rec.Body)
			}
		})
	}
}
