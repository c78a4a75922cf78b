package adapter

import (
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/openprogram/mcpvisor/tools"
)

// Keys of tools.Result.Details set by ConvertResult.
const (
	// DetailIsError is true when the tool reported a failure (MCP isError).
	DetailIsError = "is_error"
	// DetailOutputSchemaMismatch is true when the result is an error
	// because its structured content did not match the tool's output
	// schema (the runtime's check), rather than the tool's own isError;
	// DetailIsError is true as well.
	DetailOutputSchemaMismatch = "output_schema_mismatch"
	// DetailOutputSchemaUnchecked is a short reason, naming the bound,
	// when the runtime passed the structured content on without checking
	// it against the output schema because the check would cost too much
	// memory (see tools.Result.StructuredContent); it is not a mismatch.
	DetailOutputSchemaUnchecked = "output_schema_unchecked"
	// DetailResourceLinks holds the result's resource link blocks as
	// []tools.ResourceLink, in the server's order: each also became a text
	// line for the model.
	DetailResourceLinks = "resource_links"
	// DetailEmbeddedResources holds the URI and MIME type of each embedded
	// resource block as []tools.ResourceLink (no name, no contents), in the
	// server's order: each also became a text line for the model.
	DetailEmbeddedResources = "embedded_resources"
	// DetailTruncated holds a tools.Truncation when the runtime cut the
	// result to its server's output caps (max_output_bytes,
	// max_media_bytes); ConvertResult never sets it.
	DetailTruncated = "truncated"
)

// ConvertResult turns the result of an MCP tools/call into the host's Result
// (S6). Each content block is converted with [ConvertContent], in order, and
// none is dropped.
//
// isError sets Result.IsError and Details["is_error"]=true; resource links
// and embedded resources are listed under DetailResourceLinks and
// DetailEmbeddedResources. Details is nil when none of these applies. A
// non-nil StructuredContent becomes Result.StructuredContent, re-encoded
// from the SDK's decoded form (see StructuredJSON). A nil result gives an
// empty Result whose Content is an empty, non-nil slice, so it marshals as
// [] rather than null.
func ConvertResult(r *mcp.CallToolResult) tools.Result {
	return ConvertResultJSON(r, nil)
}

// ConvertResultJSON is ConvertResult for a caller that has the result's
// structured content as the server sent it: structured, when not nil, is
// Result.StructuredContent instead of a re-encoding of r's.
func ConvertResultJSON(r *mcp.CallToolResult, structured json.RawMessage) tools.Result {
	if r == nil {
		return tools.Result{Content: []tools.Content{}}
	}
	res := tools.Result{
		Content: make([]tools.Content, 0, len(r.Content)),
		IsError: r.IsError,
	}
	var links, embedded []tools.ResourceLink
	for _, c := range r.Content {
		res.Content = append(res.Content, ConvertContent(c))
		switch c := c.(type) {
		case *mcp.ResourceLink:
			if c != nil {
				links = append(links, tools.ResourceLink{URI: c.URI, Name: c.Name, Title: c.Title,
					Description: c.Description, MIMEType: c.MIMEType, Size: c.Size})
			}
		case *mcp.EmbeddedResource:
			if c != nil && c.Resource != nil {
				embedded = append(embedded, tools.ResourceLink{URI: c.Resource.URI, MIMEType: c.Resource.MIMEType})
			}
		}
	}
	detail := func(key string, v any) {
		if res.Details == nil {
			res.Details = map[string]any{}
		}
		res.Details[key] = v
	}
	if r.IsError {
		detail(DetailIsError, true)
	}
	if links != nil {
		detail(DetailResourceLinks, links)
	}
	if embedded != nil {
		detail(DetailEmbeddedResources, embedded)
	}
	res.StructuredContent = structured
	if structured == nil {
		res.StructuredContent = StructuredJSON(r.StructuredContent)
	}
	return res
}

// StructuredJSON is a tool's structured content as JSON, nil for none.
// The go-sdk client decodes structuredContent into an `any` (numbers as
// float64), so this re-encodes it: key order and number spelling are the
// encoder's, and an integer beyond 2^53 comes back rounded.
func StructuredJSON(v any) json.RawMessage {
	if v == nil {
		return nil
	}
	if raw, ok := v.(json.RawMessage); ok { // set by hand, not decoded
		return raw
	}
	b, err := json.Marshal(v)
	if err != nil || string(b) == "null" {
		return nil
	}
	return b
}
