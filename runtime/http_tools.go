package runtime

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"

	"github.com/openprogram/mcpvisor/config"
	"github.com/openprogram/mcpvisor/tools"
)

// The routes of the tool registry.

// handleListTools answers GET /api/mcp/tools: the host's view, every
// registered tool with its visibility, those only for an MCP App included
// (Runtime.Tools is the model's view).
func (r *Runtime) handleListTools(w http.ResponseWriter, _ *http.Request) error {
	list := r.registry.List()
	if list == nil {
		list = []tools.Tool{}
	}
	return writeJSON(w, http.StatusOK, map[string][]tools.Tool{"tools": list})
}

// callResult is the answer of a tool call: tools.Result with "details"
// always an object, "text" always present on a text block, and
// "structured_content" (the tool's structured result, checked against its
// output schema) only when the tool returned one.
type callResult struct {
	Content           []callContent   `json:"content"`
	StructuredContent json.RawMessage `json:"structured_content,omitempty"`
	IsError           bool            `json:"is_error"`
	Details           map[string]any  `json:"details"`
}

type callContent struct {
	Type        string                    `json:"type"`
	Text        *string                   `json:"text,omitempty"`
	MIMEType    string                    `json:"mime_type,omitempty"`
	Data        []byte                    `json:"data,omitempty"` // base64
	Annotations *tools.ContentAnnotations `json:"annotations,omitempty"`
}

func resultOf(res tools.Result) callResult {
	out := callResult{Content: make([]callContent, 0, len(res.Content)), StructuredContent: res.StructuredContent,
		IsError: res.IsError, Details: res.Details}
	if out.Details == nil {
		out.Details = map[string]any{}
	}
	for _, c := range res.Content {
		cc := callContent{Type: c.Type, MIMEType: c.MIMEType, Data: c.Data, Annotations: c.Annotations}
		if c.Type == tools.ContentText || c.Text != "" {
			text := c.Text
			cc.Text = &text
		}
		out.Content = append(out.Content, cc)
	}
	return out
}

// handleCallTool calls a tool with {"arguments": {...}}; a tool that takes
// none is called with {} (the body itself is required, see readBody). The arguments
// reach the server as sent (numbers are not rounded through float64). A
// client that goes away cancels the call.
func (r *Runtime) handleCallTool(w http.ResponseWriter, req *http.Request) error {
	body, err := readBody(w, req)
	if err != nil {
		return err
	}
	args, err := decodeCallBody(body)
	if err != nil {
		return err
	}
	var callArgs any // nil: no arguments
	if args != nil {
		callArgs = args
	}
	res, err := r.CallTool(req.Context(), req.PathValue("name"), callArgs)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, resultOf(res))
}

// decodeCallBody returns the "arguments" object of a call body, or nil when
// the member is absent (or null). A key given twice anywhere in the body is
// refused, naming it: decoded, the last would win silently, while the
// server might read the first.
func decodeCallBody(body []byte) (json.RawMessage, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(body, &fields); err != nil {
		return nil, &apiError{Status: http.StatusBadRequest, Message: "request body must be a JSON object: " + jsonProblem(err)}
	}
	// body is valid JSON (just decoded), so DuplicateKey cannot fail.
	if path, _ := config.DuplicateKey(body); path != "" {
		e := &apiError{Status: http.StatusBadRequest, Message: "duplicate key " + quoteShort(path) + " in the request body"}
		if len(path) <= maxFieldPath { // a deeper one is named (cut) in the message only
			e.Field = path
		}
		return nil, e
	}
	for k := range fields {
		if k != "arguments" {
			return nil, &apiError{Status: http.StatusBadRequest, Field: k, Message: "unknown field " + quoteShort(k) + ` (the body is {"arguments": {...}})`}
		}
	}
	args := bytes.TrimSpace(fields["arguments"])
	switch {
	case len(args) == 0 || string(args) == "null":
		return nil, nil
	case args[0] != '{':
		return nil, &apiError{Status: http.StatusBadRequest, Field: "arguments", Message: "arguments must be a JSON object"}
	}
	return json.RawMessage(args), nil
}

// maxFieldPath bounds the path an error answer gives as its field, so that
// a deeply nested body is not echoed back.
const maxFieldPath = 128

// jsonProblem describes a decoding error without quoting the input (which
// may hold a secret argument).
func jsonProblem(err error) string {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		return "invalid JSON at offset " + strconv.FormatInt(syn.Offset, 10)
	case errors.As(err, &typ):
		return "found a JSON " + typ.Value + " where an object was expected"
	default:
		return "invalid JSON"
	}
}
