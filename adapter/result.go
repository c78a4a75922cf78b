package adapter

import (
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/openprogram/mcpvisor/tools"
)

// Keys of tools.Result.Details set by ConvertResult.
const (
	// DetailIsError is true when the tool reported a failure (MCP isError).
	DetailIsError = "is_error"
	// DetailStructuredContent holds the tool's structured result, as the
	// SDK decoded it.
	DetailStructuredContent = "structured_content"
)

// ConvertResult turns the result of an MCP tools/call into the host's Result
// (S6). Each content block is converted with [ConvertContent], in order, and
// none is dropped.
//
// isError sets Result.IsError and Details["is_error"]=true; a non-nil
// StructuredContent is kept as Details["structured_content"]. Details is nil
// when neither applies. A nil result gives an empty Result whose Content is an
// empty, non-nil slice, so it marshals as [] rather than null.
func ConvertResult(r *mcp.CallToolResult) tools.Result {
	if r == nil {
		return tools.Result{Content: []tools.Content{}}
	}
	res := tools.Result{
		Content: make([]tools.Content, 0, len(r.Content)),
		IsError: r.IsError,
	}
	for _, c := range r.Content {
		res.Content = append(res.Content, ConvertContent(c))
	}
	if r.IsError {
		res.Details = map[string]any{DetailIsError: true}
	}
	if r.StructuredContent != nil {
		if res.Details == nil {
			res.Details = map[string]any{}
		}
		res.Details[DetailStructuredContent] = r.StructuredContent
	}
	return res
}
