package adapter_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/openprogram/mcpvisor/adapter"
	"github.com/openprogram/mcpvisor/tools"
)

// futureContent stands for a block type a newer SDK may add: it satisfies
// mcp.Content through the embedded interface and names its wire type.
type futureContent struct{ mcp.Content }

func (futureContent) MarshalJSON() ([]byte, error) { return []byte(`{"type":"hologram"}`), nil }

// brokenContent is an unknown block that cannot even say its wire type.
type brokenContent struct{ mcp.Content }

func (brokenContent) MarshalJSON() ([]byte, error) { return nil, errors.New("no wire form") }

var pngHeader = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")

func int64p(n int64) *int64 { return &n }

func TestConvertContent(t *testing.T) {
	half := 0.5
	tests := []struct {
		name string
		in   mcp.Content
		want tools.Content
	}{
		{"text", &mcp.TextContent{Text: "hello\nworld"}, text("hello\nworld")},
		{"empty text", &mcp.TextContent{}, text("")},
		{
			"image",
			&mcp.ImageContent{MIMEType: "image/png", Data: pngHeader},
			tools.Content{Type: tools.ContentImage, MIMEType: "image/png", Data: pngHeader},
		},
		{
			"image without MIME type is sniffed",
			&mcp.ImageContent{Data: pngHeader},
			tools.Content{Type: tools.ContentImage, MIMEType: "image/png", Data: pngHeader},
		},
		{
			"embedded text resource",
			&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "file:///notes.txt", MIMEType: "text/plain", Text: "secret body"}},
			text("[resource: file:///notes.txt]"),
		},
		{
			"embedded blob resource",
			&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "file:///a.bin", Blob: []byte{1, 2, 3}}},
			text("[resource: file:///a.bin]"),
		},
		{"embedded resource without contents", &mcp.EmbeddedResource{}, text("[resource: (no uri)]")},
		{
			"embedded resource uri with line break",
			&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "file:///a\nb"}},
			text("[resource: file:///a b]"),
		},
		{
			"resource link minimal",
			&mcp.ResourceLink{Name: "report", URI: "file:///r.pdf"},
			text("[resource link: report file:///r.pdf]"),
		},
		{
			"resource link full",
			&mcp.ResourceLink{
				Name: "report", URI: "file:///r.pdf", MIMEType: "application/pdf", Size: int64p(1234),
				Title: "Q3 report", Description: "Sales\nby   region",
			},
			text(`[resource link: report file:///r.pdf (application/pdf, 1234 bytes) "Q3 report" - Sales by region]`),
		},
		{
			"resource link title equal to name not repeated",
			&mcp.ResourceLink{Name: "r", Title: "r", URI: "u:1"},
			text("[resource link: r u:1]"),
		},
		{
			"resource link long description cut",
			&mcp.ResourceLink{Name: "n", URI: "u:1", Description: strings.Repeat("d", 500)},
			text("[resource link: n u:1 - " + strings.Repeat("d", 159) + "…]"),
		},
		{"audio", &mcp.AudioContent{MIMEType: "audio/wav", Data: []byte("RIFF")}, tools.Content{Type: tools.ContentAudio, MIMEType: "audio/wav", Data: []byte("RIFF")}},
		{"audio without MIME type", &mcp.AudioContent{Data: []byte{1}}, tools.Content{Type: tools.ContentAudio, Data: []byte{1}}},
		{"annotated text", &mcp.TextContent{Text: "t", Annotations: &mcp.Annotations{Audience: []mcp.Role{"user"}, Priority: 0.5, LastModified: "2026-12-01T00:00:00Z"}},
			tools.Content{Type: tools.ContentText, Text: "t", Annotations: &tools.ContentAnnotations{Audience: []string{"user"}, Priority: &half, LastModified: "2026-12-01T00:00:00Z"}}},
		{"annotated link", &mcp.ResourceLink{URI: "mem://a", Annotations: &mcp.Annotations{Audience: []mcp.Role{"assistant"}}},
			tools.Content{Type: tools.ContentText, Text: "[resource link: mem://a]", Annotations: &tools.ContentAnnotations{Audience: []string{"assistant"}}}},
		{"empty annotations", &mcp.ImageContent{MIMEType: "image/png", Data: []byte{1}, Annotations: &mcp.Annotations{}},
			tools.Content{Type: tools.ContentImage, MIMEType: "image/png", Data: []byte{1}}},
		{"tool use", &mcp.ToolUseContent{ID: "1", Name: "x"}, text("[unsupported content: tool_use]")},
		{
			"tool result",
			&mcp.ToolResultContent{ToolUseID: "1", Content: []mcp.Content{&mcp.TextContent{Text: "inner"}}},
			text("[unsupported content: tool_result]"),
		},
		{"nil", nil, text("[unsupported content: nil]")},
		{"typed nil", (*mcp.TextContent)(nil), text("[unsupported content: nil *mcp.TextContent]")},
		{"future type", futureContent{}, text("[unsupported content: hologram]")},
		{"future type without wire form", brokenContent{}, text("[unsupported content: adapter_test.brokenContent]")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := adapter.ConvertContent(tt.in)
			if got.Type != tt.want.Type || got.Text != tt.want.Text || got.MIMEType != tt.want.MIMEType || !bytes.Equal(got.Data, tt.want.Data) {
				t.Errorf("ConvertContent(%T) = %+v, want %+v", tt.in, got, tt.want)
			}
			if _, isText := tt.in.(*mcp.TextContent); !isText && strings.ContainsAny(got.Text, "\r\n") {
				t.Errorf("generated line %q contains a line break", got.Text)
			}
		})
	}
}

func text(s string) tools.Content { return tools.Content{Type: tools.ContentText, Text: s} }
