package adapter_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/openprogram/mcpvisor/adapter"
	"github.com/openprogram/mcpvisor/tools"
)

func TestConvertResult(t *testing.T) {
	structured := map[string]any{"temp": 21.5, "unit": "C"}
	tests := []struct {
		name string
		in   *mcp.CallToolResult
		want tools.Result
	}{
		{"nil", nil, tools.Result{Content: []tools.Content{}}},
		{"empty", &mcp.CallToolResult{}, tools.Result{Content: []tools.Content{}}},
		{
			"every kind in order",
			&mcp.CallToolResult{Content: []mcp.Content{
				&mcp.TextContent{Text: "a"},
				&mcp.ImageContent{MIMEType: "image/jpeg", Data: []byte{0xff, 0xd8}},
				&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "mem://x", Text: "body"}},
				&mcp.ResourceLink{Name: "l", URI: "mem://y"},
				&mcp.AudioContent{MIMEType: "audio/ogg", Data: []byte{1, 2}},
				&mcp.ToolUseContent{Name: "t"},
				nil,
				&mcp.TextContent{Text: "z"},
			}},
			tools.Result{Content: []tools.Content{
				text("a"),
				{Type: tools.ContentImage, MIMEType: "image/jpeg", Data: []byte{0xff, 0xd8}},
				text("[resource: mem://x]"),
				text("[resource link: l mem://y]"),
				{Type: tools.ContentAudio, MIMEType: "audio/ogg", Data: []byte{1, 2}},
				text("[unsupported content: tool_use]"),
				text("[unsupported content: nil]"),
				text("z"),
			}, Details: map[string]any{
				"embedded_resources": []tools.ResourceLink{{URI: "mem://x"}},
				"resource_links":     []tools.ResourceLink{{URI: "mem://y", Name: "l"}},
			}},
		},
		{
			"isError",
			&mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "boom"}}},
			tools.Result{
				Content: []tools.Content{text("boom")},
				IsError: true,
				Details: map[string]any{"is_error": true},
			},
		},
		{
			"structured content",
			&mcp.CallToolResult{StructuredContent: structured, Content: []mcp.Content{&mcp.TextContent{Text: "{}"}}},
			tools.Result{
				Content:           []tools.Content{text("{}")},
				StructuredContent: json.RawMessage(`{"temp":21.5,"unit":"C"}`),
			},
		},
		{
			"structured primitive",
			&mcp.CallToolResult{StructuredContent: 42.0},
			tools.Result{Content: []tools.Content{}, StructuredContent: json.RawMessage(`42`)},
		},
		{
			"isError and structured content",
			&mcp.CallToolResult{IsError: true, StructuredContent: structured},
			tools.Result{
				Content:           []tools.Content{},
				StructuredContent: json.RawMessage(`{"temp":21.5,"unit":"C"}`),
				IsError:           true,
				Details:           map[string]any{"is_error": true},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := adapter.ConvertResult(tt.in)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("ConvertResult =\n%#v\nwant\n%#v", got, tt.want)
			}
		})
	}
}

// A host serialises results; an empty one must show "content":[] and no
// details, not null.
func TestConvertResultEmptyJSON(t *testing.T) {
	for _, in := range []*mcp.CallToolResult{nil, {}} {
		b, err := json.Marshal(adapter.ConvertResult(in))
		if err != nil {
			t.Fatal(err)
		}
		if want := `{"content":[],"is_error":false}`; string(b) != want {
			t.Errorf("ConvertResult(%v) marshals to %s, want %s", in, b, want)
		}
	}
}

// S6: an embedded resource's payload never reaches the chat, in any form.
func TestConvertResultDoesNotLeakResource(t *testing.T) {
	const secretText = "TOP-SECRET-RESOURCE-TEXT"
	secretBlob := []byte("BINARY\x00PAYLOAD\x01\x02BYTES")
	res := adapter.ConvertResult(&mcp.CallToolResult{Content: []mcp.Content{
		&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "file:///t.txt", MIMEType: "text/plain", Text: secretText}},
		&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "file:///b.bin", MIMEType: "application/octet-stream", Blob: secretBlob}},
	}})
	if len(res.Content) != 2 {
		t.Fatalf("got %d blocks, want 2", len(res.Content))
	}
	for i, c := range res.Content {
		if c.Type != tools.ContentText || len(c.Data) != 0 {
			t.Errorf("block %d = %+v, want a text block without data", i, c)
		}
		if strings.Contains(c.Text, secretText) || strings.Contains(c.Text, "PAYLOAD") {
			t.Errorf("block %d leaks the resource: %q", i, c.Text)
		}
	}
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	for _, leak := range [][]byte{[]byte(secretText), secretBlob, []byte(base64.StdEncoding.EncodeToString(secretBlob)), []byte("PAYLOAD")} {
		if bytes.Contains(b, leak) {
			t.Errorf("result JSON %s contains %q", b, leak)
		}
	}
}

// The result as the SDK client really hands it over: decoded from the wire.
func TestConvertResultFromWire(t *testing.T) {
	const wire = `{
		"content": [
			{"type": "text", "text": "hi"},
			{"type": "image", "mimeType": "image/png", "data": "iVBORw0KGgo="},
			{"type": "resource", "resource": {"uri": "file:///x", "blob": "c2VjcmV0"}},
			{"type": "resource_link", "uri": "file:///y", "name": "y"},
			{"type": "audio", "mimeType": "audio/wav", "data": "AAAA"}
		],
		"structuredContent": {"n": 1},
		"isError": true
	}`
	var r mcp.CallToolResult
	if err := json.Unmarshal([]byte(wire), &r); err != nil {
		t.Fatalf("decoding wire result: %v", err)
	}
	want := tools.Result{
		Content: []tools.Content{
			text("hi"),
			{Type: tools.ContentImage, MIMEType: "image/png", Data: []byte("\x89PNG\r\n\x1a\n")},
			text("[resource: file:///x]"),
			text("[resource link: y file:///y]"),
			{Type: tools.ContentAudio, MIMEType: "audio/wav", Data: []byte{0, 0, 0}},
		},
		StructuredContent: json.RawMessage(`{"n":1}`),
		IsError:           true,
		Details: map[string]any{"is_error": true,
			"embedded_resources": []tools.ResourceLink{{URI: "file:///x"}},
			"resource_links":     []tools.ResourceLink{{URI: "file:///y", Name: "y"}}},
	}
	if got := adapter.ConvertResult(&r); !reflect.DeepEqual(got, want) {
		t.Errorf("ConvertResult =\n%#v\nwant\n%#v", got, want)
	}
}
