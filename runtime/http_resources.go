package runtime

import (
	"encoding/json"
	"errors"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/openprogram/mcpvisor/config"
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
// An unknown server is 404, one not ready 503, one without resources 409,
// a URI the server does not know 404, any other refusal of the server 502.
func (r *Runtime) handleReadResource(w http.ResponseWriter, req *http.Request) error {
	body, err := readBody(w, req)
	if err != nil {
		return err
	}
	server, uri, err := decodeResourceBody(body)
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

// decodeResourceBody reads {"server": NAME, "uri": URI}, both strings and
// both required, no other field and no key twice; an error names the
// field to blame.
func decodeResourceBody(body []byte) (server, uri string, err error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(body, &fields); err != nil {
		return "", "", &apiError{Status: http.StatusBadRequest, Message: "request body must be a JSON object: " + jsonProblem(err)}
	}
	if path, _ := config.DuplicateKey(body); path != "" {
		return "", "", &apiError{Status: http.StatusBadRequest, Message: "duplicate key " + quoteShort(path) + " in the request body"}
	}
	for k := range fields {
		if k != "server" && k != "uri" {
			return "", "", &apiError{Status: http.StatusBadRequest, Field: k, Message: "unknown field " + quoteShort(k) + ` (the body is {"server": NAME, "uri": URI})`}
		}
	}
	for _, f := range []struct {
		name string
		to   *string
	}{{"server", &server}, {"uri", &uri}} {
		raw, ok := fields[f.name]
		if !ok {
			return "", "", &apiError{Status: http.StatusBadRequest, Field: f.name, Message: f.name + ` is required (the body is {"server": NAME, "uri": URI})`}
		}
		if err := json.Unmarshal(raw, f.to); err != nil || *f.to == "" {
			return "", "", &apiError{Status: http.StatusBadRequest, Field: f.name, Message: f.name + " must be a non-empty string"}
		}
	}
	if err := checkResourceURI(uri); err != nil {
		return "", "", &apiError{Status: http.StatusBadRequest, Field: "uri", Message: err.Error()}
	}
	return server, uri, nil
}
