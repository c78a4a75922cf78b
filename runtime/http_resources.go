package runtime

import (
	"encoding/json"
	"errors"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// resourceAnswer is the answer of POST /api/mcp/resources/read.
type resourceAnswer struct {
	Contents []resourceItem `json:"contents"`
}

// resourceItem is one ResourceContents: "text" present on a text item,
// "blob" (base64) on a binary one, "meta" the item's _meta.
type resourceItem struct {
	URI      string          `json:"uri"`
	MIMEType string          `json:"mime_type,omitempty"`
	Text     *string         `json:"text,omitempty"`
	Blob     []byte          `json:"blob,omitempty"`
	Meta     json.RawMessage `json:"meta,omitempty"`
}

// handleReadResource answers POST /api/mcp/resources/read with
// {"server": NAME, "uri": URI}: the resource's contents (ReadResource).
// A body field missing, of the wrong type, unknown or given twice is 400
// naming it, and so is an overlong uri; an unknown server is 404, one not
// ready 503, one without resources 409, a URI the server does not know
// 404, any other refusal of the server 502.
func (r *Runtime) handleReadResource(w http.ResponseWriter, req *http.Request) error {
	body, err := readBody(w, req)
	if err != nil {
		return err
	}
	server, uri, err := decodeServerURI(body, "the resource to read")
	if err != nil {
		return err
	}
	res, err := r.ReadResource(req.Context(), server, uri)
	if rpc := (*jsonrpc.Error)(nil); errors.As(err, &rpc) && rpc.Code == mcp.CodeResourceNotFound {
		return &apiError{Status: http.StatusNotFound, Message: err.Error()}
	}
	if err != nil {
		return err
	}
	out := resourceAnswer{Contents: make([]resourceItem, 0, len(res.Contents))}
	for _, c := range res.Contents {
		item := resourceItem{URI: c.URI, MIMEType: c.MIMEType, Blob: c.Blob, Meta: c.Meta}
		if !c.IsBlob() {
			item.Text = &c.Text
		}
		out.Contents = append(out.Contents, item)
	}
	return writeJSON(w, http.StatusOK, out)
}
