package exampleserver

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The result tools (Options.ResultTools) return what a client must check
// or keep beyond text and images: structured content that matches its
// output schema and some that does not, an output schema no client can
// resolve, audio, annotations and resource links. Several echo their text
// argument into the parts a client passes on, so that a test can plant a
// secret there.

// StructuredSchema is the output schema of the structured tools.
const StructuredSchema = `{"type":"object","required":["n","text"],"properties":{"n":{"type":"integer"},"text":{"type":"string"},"id":{"type":"integer"}},"additionalProperties":false}`

// StructuredID is the id the structured tool returns: an integer a
// float64 cannot hold, written after the other keys, so that a client
// that re-encodes the result shows it (rounded, keys sorted).
const StructuredID = "12345678901234567891"

// RemoteRefSchema is the output schema of the remote_ref tool: its one
// property refers to a document on another host, which a client must not
// fetch (port 9 is discard; nothing answers there).
const RemoteRefSchema = `{"type":"object","properties":{"x":{"$ref":"http://127.0.0.1:9/schema.json"}}}`

// Values the result tools return; tests compare against them.
const (
	AudioMIMEType    = "audio/wav"
	AudioData        = "RIFF\x24\x00\x00\x00WAVE"
	LinkURIPrefix    = "demo://notes/"
	LinkMIMEType     = "text/plain"
	LinkSize         = int64(42)
	AnnotatedPrio    = 0.7
	AnnotatedWhen    = "2026-12-01T12:00:00Z"
	AnnotatedText    = "annotated for the user"
	EmbeddedURI      = "demo://readme"
	EmbeddedMIMEType = "text/markdown"
)

// textArgs are the arguments of the result tools that echo a text.
type textArgs struct {
	Text string `json:"text" jsonschema:"a text the tool puts into its result"`
}

// addResultTools registers the result tools.
func addResultTools(srv *mcp.Server) {
	schema := json.RawMessage(StructuredSchema)
	srv.AddTool(&mcp.Tool{Name: "structured", Description: `Returns {"text":text,"n":1,"id":` + StructuredID + `} as structured content, matching its output schema.`,
		InputSchema: textSchema, OutputSchema: schema}, structured(false))
	srv.AddTool(&mcp.Tool{Name: "structured_broken", Description: `Returns {"text":text,"n":text,"id":` + StructuredID + `}, which breaks its output schema (n must be an integer).`,
		InputSchema: textSchema, OutputSchema: schema}, structured(true))
	srv.AddTool(&mcp.Tool{Name: "structured_missing", Description: "Declares an output schema and returns text only, no structured content.",
		InputSchema: noSchema, OutputSchema: schema}, structuredMissing)
	srv.AddTool(&mcp.Tool{Name: "structured_failing", Description: `Returns isError with {"n":"x"}, which breaks its output schema.`,
		InputSchema: noSchema, OutputSchema: schema}, structuredFailing)
	srv.AddTool(&mcp.Tool{Name: "remote_ref", Description: `Returns {"x":1}; its output schema refers to a remote document.`,
		InputSchema: noSchema, OutputSchema: json.RawMessage(RemoteRefSchema)}, remoteRef)
	mcp.AddTool(srv, &mcp.Tool{Name: "audio", Description: "Returns a short audio block."}, audio)
	mcp.AddTool(srv, &mcp.Tool{Name: "annotated", Description: "Returns an annotated text block, a resource link to demo://notes/<text> named after text, and an embedded resource."}, annotated)
}

var (
	textSchema = json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`)
	noSchema   = json.RawMessage(`{"type":"object"}`)
)

func structured(broken bool) mcp.ToolHandler {
	return func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var in textArgs
		if err := json.Unmarshal(req.Params.Arguments, &in); err != nil {
			return nil, fmt.Errorf("decoding the arguments: %w", err)
		}
		text, _ := json.Marshal(in.Text)
		n := "1"
		if broken {
			n = string(text)
		}
		b := `{"text":` + string(text) + `,"n":` + n + `,"id":` + StructuredID + `}`
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: b}}, StructuredContent: json.RawMessage(b)}, nil
	}
}

func structuredMissing(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "no structured content here"}}}, nil
}

func structuredFailing(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: failText}},
		StructuredContent: json.RawMessage(`{"n":"x"}`)}, nil
}

func remoteRef(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: `{"x":1}`}}, StructuredContent: json.RawMessage(`{"x":1}`)}, nil
}

func audio(context.Context, *mcp.CallToolRequest, noArgs) (*mcp.CallToolResult, any, error) {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.AudioContent{MIMEType: AudioMIMEType, Data: []byte(AudioData)}}}, nil, nil
}

func annotated(_ context.Context, _ *mcp.CallToolRequest, in textArgs) (*mcp.CallToolResult, any, error) {
	size := LinkSize
	return &mcp.CallToolResult{Content: []mcp.Content{
		&mcp.TextContent{Text: AnnotatedText, Annotations: &mcp.Annotations{Audience: []mcp.Role{"user"}, Priority: AnnotatedPrio, LastModified: AnnotatedWhen}},
		&mcp.ResourceLink{URI: LinkURIPrefix + in.Text, Name: "note " + in.Text, Title: "Note", Description: "the note " + in.Text,
			MIMEType: LinkMIMEType, Size: &size},
		&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: EmbeddedURI, MIMEType: EmbeddedMIMEType, Text: "# readme"}},
	}}, nil, nil
}
