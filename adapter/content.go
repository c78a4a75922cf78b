package adapter

import (
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/openprogram/mcpvisor/tools"
)

// maxLabelRunes bounds each server-supplied label (name, title, description)
// in a generated text line, so a verbose server cannot flood the chat with
// metadata.
const maxLabelRunes = 160

// ConvertContent turns one MCP content block into a host content block (S6).
//
//   - text becomes text;
//   - an image becomes an image with its MIME type and raw (decoded) bytes;
//     Data shares memory with the MCP block. A missing MIME type is sniffed
//     from the bytes, because model APIs refuse an image without one;
//   - an embedded resource becomes the text "[resource: <uri>]". Its text or
//     blob is never copied: it may be large or binary, and the model can ask
//     for it through the resource tools;
//   - a resource link becomes one line, for example
//     "[resource link: report file:///r.pdf (application/pdf, 1234 bytes) "Q3 report" - Sales by region]";
//   - audio becomes audio with its MIME type and raw (decoded) bytes; Data
//     shares memory with the MCP block;
//   - anything else, including nil and block types only valid in sampling
//     (tool_use, tool_result), becomes "[unsupported content: <type>]".
//
// The block's annotations (audience, priority, lastModified) are kept on
// every converted block, whatever its type. The SDK decodes priority as a
// plain number, so a priority of 0 cannot be told from none and is left
// out.
//
// Generated lines never contain a line break: server-supplied labels have
// their whitespace collapsed, and names, titles and descriptions are cut to a
// bounded length.
func ConvertContent(c mcp.Content) tools.Content {
	out := convertContent(c)
	if c != nil && !isNil(c) {
		out.Annotations = annotationsOf(c)
	}
	return out
}

func isNil(c mcp.Content) bool {
	v := reflect.ValueOf(c)
	return v.Kind() == reflect.Pointer && v.IsNil()
}

func convertContent(c mcp.Content) tools.Content {
	// A typed nil pointer would panic in the cases below; it says nothing
	// the model can use, so report it like a nil block.
	if c == nil {
		return text("[unsupported content: nil]")
	}
	if isNil(c) {
		return text(fmt.Sprintf("[unsupported content: nil %T]", c))
	}
	switch c := c.(type) {
	case *mcp.TextContent:
		return text(c.Text)
	case *mcp.ImageContent:
		mime := c.MIMEType
		if mime == "" {
			mime = http.DetectContentType(c.Data)
		}
		return tools.Content{Type: tools.ContentImage, MIMEType: mime, Data: c.Data}
	case *mcp.EmbeddedResource:
		return text(embeddedResourceLine(c))
	case *mcp.ResourceLink:
		return text(resourceLinkLine(c))
	case *mcp.AudioContent:
		return tools.Content{Type: tools.ContentAudio, MIMEType: c.MIMEType, Data: c.Data}
	case *mcp.ToolUseContent:
		return text("[unsupported content: tool_use]")
	case *mcp.ToolResultContent:
		return text("[unsupported content: tool_result]")
	default:
		return text("[unsupported content: " + wireType(c) + "]")
	}
}

func text(s string) tools.Content {
	return tools.Content{Type: tools.ContentText, Text: s}
}

func embeddedResourceLine(c *mcp.EmbeddedResource) string {
	uri := ""
	if c.Resource != nil {
		uri = oneLine(c.Resource.URI)
	}
	if uri == "" {
		uri = "(no uri)"
	}
	return "[resource: " + uri + "]"
}

func resourceLinkLine(c *mcp.ResourceLink) string {
	var b strings.Builder
	b.WriteString("[resource link:")
	if name := shorten(c.Name); name != "" {
		b.WriteString(" " + name)
	}
	if uri := oneLine(c.URI); uri != "" {
		b.WriteString(" " + uri)
	}
	var facts []string
	if mime := shorten(c.MIMEType); mime != "" {
		facts = append(facts, mime)
	}
	if c.Size != nil {
		facts = append(facts, strconv.FormatInt(*c.Size, 10)+" bytes")
	}
	if len(facts) > 0 {
		b.WriteString(" (" + strings.Join(facts, ", ") + ")")
	}
	if title := shorten(c.Title); title != "" && title != shorten(c.Name) {
		b.WriteString(" " + strconv.Quote(title))
	}
	if desc := shorten(c.Description); desc != "" {
		b.WriteString(" - " + desc)
	}
	b.WriteString("]")
	return b.String()
}

// annotationsOf copies the annotations of c, nil when it has none.
func annotationsOf(c mcp.Content) *tools.ContentAnnotations {
	var a *mcp.Annotations
	switch c := c.(type) {
	case *mcp.TextContent:
		a = c.Annotations
	case *mcp.ImageContent:
		a = c.Annotations
	case *mcp.AudioContent:
		a = c.Annotations
	case *mcp.ResourceLink:
		a = c.Annotations
	case *mcp.EmbeddedResource:
		a = c.Annotations
	}
	if a == nil || (len(a.Audience) == 0 && a.Priority == 0 && a.LastModified == "") {
		return nil
	}
	out := &tools.ContentAnnotations{LastModified: a.LastModified}
	for _, r := range a.Audience {
		out.Audience = append(out.Audience, string(r))
	}
	if a.Priority != 0 {
		p := a.Priority
		out.Priority = &p
	}
	return out
}

// wireType names a block type this package does not know. The MCP "type"
// field is what a reader of the protocol would recognise; the Go type is the
// fallback when the block cannot say.
func wireType(c mcp.Content) string {
	if b, err := c.MarshalJSON(); err == nil {
		var w struct {
			Type string `json:"type"`
		}
		if json.Unmarshal(b, &w) == nil {
			if t := shorten(w.Type); t != "" {
				return t
			}
		}
	}
	return fmt.Sprintf("%T", c)
}

// oneLine collapses every run of whitespace, line breaks included, into one
// space, so a server-supplied value cannot break a generated line apart.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// shorten is oneLine cut to maxLabelRunes runes, marking the cut with "…".
func shorten(s string) string {
	s = oneLine(s)
	if utf8.RuneCountInString(s) <= maxLabelRunes {
		return s
	}
	n := 0
	for i := range s {
		if n == maxLabelRunes-1 {
			return s[:i] + "…"
		}
		n++
	}
	return s
}
