package exampleserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"math"
	"os"
	"strconv"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Values the tools return verbatim; tests compare against them.
const (
	failText         = "this tool always fails"
	resourceURI      = "demo://resource/1"
	resourceMIMEType = "text/plain"
	resourceText     = "the embedded resource text"
)

// echoArgs are the arguments of the echo tool.
type echoArgs struct {
	Text string `json:"text" jsonschema:"the text to return unchanged"`
}

// addArgs are the arguments of the add tool.
type addArgs struct {
	A float64 `json:"a" jsonschema:"the first addend"`
	B float64 `json:"b" jsonschema:"the second addend"`
}

// sleepArgs are the arguments of the sleep tool.
type sleepArgs struct {
	Ms int `json:"ms" jsonschema:"how long to sleep, in milliseconds (not negative)"`
}

// envArgs are the arguments of the env tool.
type envArgs struct {
	Name string `json:"name" jsonschema:"the name of the environment variable to read"`
}

// stderrArgs are the arguments of the stderr tool.
type stderrArgs struct {
	Text string `json:"text" jsonschema:"the line to write to the server's stderr"`
}

// noArgs are the (empty) arguments of the fail, image and resource tools.
type noArgs struct{}

// tools holds what the handlers share: built once per server so that no
// state lives at package level.
type tools struct {
	stderr *lockedWriter
	png    []byte // encoded once; every image call returns the same bytes
}

// newTools prepares the shared state of the tool handlers.
func newTools(stderr *lockedWriter) *tools {
	return &tools{stderr: stderr, png: tinyPNG()}
}

// addTools registers the tools in their documented order.
func addTools(srv *mcp.Server, t *tools) {
	mcp.AddTool(srv, &mcp.Tool{Name: "echo", Description: "Returns the given text unchanged."}, t.echo)
	mcp.AddTool(srv, &mcp.Tool{Name: "add", Description: "Returns the sum of a and b."}, t.add)
	mcp.AddTool(srv, &mcp.Tool{Name: "sleep", Description: "Sleeps for ms milliseconds; stops early when cancelled."}, t.sleep)
	mcp.AddTool(srv, &mcp.Tool{Name: "fail", Description: "Always returns a tool error."}, t.fail)
	mcp.AddTool(srv, &mcp.Tool{Name: "image", Description: "Returns a tiny PNG image."}, t.image)
	mcp.AddTool(srv, &mcp.Tool{Name: "resource", Description: "Returns an embedded text resource."}, t.resource)
	mcp.AddTool(srv, &mcp.Tool{Name: "env", Description: "Returns the value of an environment variable of the server process."}, t.env)
	mcp.AddTool(srv, &mcp.Tool{Name: "stderr", Description: "Writes the text as one line to the server's stderr."}, t.writeStderr)
	mcp.AddTool(srv, &mcp.Tool{Name: "future", Description: "Returns a text block, then (over stdio) a block of a content type no MCP version defines."}, t.future)
	srv.AddTool(&mcp.Tool{Name: "schema", Description: "Has a hand-written input schema whose key order and big numbers a client should keep.", InputSchema: json.RawMessage(RawSchema)}, t.schema)
	srv.AddTool(describedTool(), t.described)
}

// RawOutputSchema is the output schema of the described tool, byte for
// byte as the server sends it (keys out of alphabetical order).
const RawOutputSchema = `{"type":"object","required":["zeta"],"properties":{"zeta":{"type":"integer"},"alpha":{"type":"string"}}}`

// describedTool carries every piece of tool metadata: a title,
// annotations that send some hints and leave others out (on the wire the
// SDK always sends readOnlyHint and idempotentHint; destructiveHint is
// left out here), an output schema, an icon and a _meta with an MCP Apps
// UI resource.
func describedTool() *mcp.Tool {
	closed := false
	return &mcp.Tool{
		Name: "described", Title: "Described Tool", Description: "Carries a title, annotations, an output schema, an icon and _meta.",
		InputSchema:  json.RawMessage(`{"type":"object"}`),
		OutputSchema: json.RawMessage(RawOutputSchema),
		Annotations:  &mcp.ToolAnnotations{Title: "Described", ReadOnlyHint: true, OpenWorldHint: &closed},
		Icons:        []mcp.Icon{{Source: "data:image/png;base64,AA==", MIMEType: "image/png", Sizes: []string{"16x16"}, Theme: mcp.IconThemeDark}},
		Meta:         mcp.Meta{"ui": map[string]any{"resourceUri": AppResourceURI}},
	}
}

func (t *tools) described(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	return &mcp.CallToolResult{
		Content:           []mcp.Content{&mcp.TextContent{Text: `{"zeta":1,"alpha":"a"}`}},
		StructuredContent: json.RawMessage(`{"zeta":1,"alpha":"a"}`),
	}, nil
}

// RawSchema is the input schema of the schema tool, byte for byte as the
// server sends it: keys out of alphabetical order and a number that a
// float64 cannot hold.
const RawSchema = `{"type":"object","properties":{"zeta":{"type":"integer","default":12345678901234567890},"alpha":{"type":"string"}}}`

// FutureBlock is the text of the block that Run turns into a content block
// of the unknown type "hologram" on its way out: the SDK has no way to
// build a block of a type it does not know.
const FutureBlock = "@@future-block@@"

func (t *tools) future(context.Context, *mcp.CallToolRequest, noArgs) (*mcp.CallToolResult, any, error) {
	return &mcp.CallToolResult{Content: []mcp.Content{
		&mcp.TextContent{Text: "before the future block"},
		&mcp.TextContent{Text: FutureBlock},
	}}, nil, nil
}

func (t *tools) schema(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	return textResult("ok"), nil
}

// textResult is a result holding a single text block.
func textResult(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

func (t *tools) echo(_ context.Context, _ *mcp.CallToolRequest, in echoArgs) (*mcp.CallToolResult, any, error) {
	return textResult(in.Text), nil, nil
}

func (t *tools) add(_ context.Context, _ *mcp.CallToolRequest, in addArgs) (*mcp.CallToolResult, any, error) {
	return textResult(strconv.FormatFloat(in.A+in.B, 'f', -1, 64)), nil, nil
}

func (t *tools) sleep(ctx context.Context, _ *mcp.CallToolRequest, in sleepArgs) (*mcp.CallToolResult, any, error) {
	// The upper bound keeps the Duration from overflowing into a negative,
	// which would end the sleep at once.
	if in.Ms < 0 || int64(in.Ms) > int64(math.MaxInt64/time.Millisecond) {
		return nil, nil, fmt.Errorf("ms must be between 0 and %d, got %d", math.MaxInt64/time.Millisecond, in.Ms)
	}
	// Tests wait for this line to know the call is really in flight.
	_ = t.stderr.writeLine(fmt.Sprintf("sleeping %dms", in.Ms))
	timer := time.NewTimer(time.Duration(in.Ms) * time.Millisecond)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		// Tests wait for this line to know a cancellation reached the
		// server (notifications/cancelled ends the handler's context).
		_ = t.stderr.writeLine(fmt.Sprintf("sleep of %dms cancelled", in.Ms))
		return nil, nil, ctx.Err()
	case <-timer.C:
		return textResult(fmt.Sprintf("slept %dms", in.Ms)), nil, nil
	}
}

func (t *tools) fail(context.Context, *mcp.CallToolRequest, noArgs) (*mcp.CallToolResult, any, error) {
	res := textResult(failText)
	res.IsError = true
	return res, nil, nil
}

func (t *tools) image(context.Context, *mcp.CallToolRequest, noArgs) (*mcp.CallToolResult, any, error) {
	return &mcp.CallToolResult{Content: []mcp.Content{
		&mcp.ImageContent{Data: t.png, MIMEType: "image/png"},
	}}, nil, nil
}

func (t *tools) resource(context.Context, *mcp.CallToolRequest, noArgs) (*mcp.CallToolResult, any, error) {
	return &mcp.CallToolResult{Content: []mcp.Content{
		&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{
			URI:      resourceURI,
			MIMEType: resourceMIMEType,
			Text:     resourceText,
		}},
	}}, nil, nil
}

func (t *tools) env(_ context.Context, _ *mcp.CallToolRequest, in envArgs) (*mcp.CallToolResult, any, error) {
	return textResult(os.Getenv(in.Name)), nil, nil
}

func (t *tools) writeStderr(_ context.Context, _ *mcp.CallToolRequest, in stderrArgs) (*mcp.CallToolResult, any, error) {
	if err := t.stderr.writeLine(in.Text); err != nil {
		return nil, nil, fmt.Errorf("writing to stderr: %w", err)
	}
	return textResult("ok"), nil, nil
}

// tinyPNG encodes a 2x2 image with four distinct colours, so a decoder that
// gets the pixels wrong can be caught by a test.
func tinyPNG() []byte {
	img := image.NewNRGBA(image.Rect(0, 0, 2, 2))
	img.Set(0, 0, color.NRGBA{R: 0xff, A: 0xff})
	img.Set(1, 0, color.NRGBA{G: 0xff, A: 0xff})
	img.Set(0, 1, color.NRGBA{B: 0xff, A: 0xff})
	img.Set(1, 1, color.NRGBA{R: 0xff, G: 0xff, B: 0xff, A: 0xff})
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		// Encoding an in-memory image to a bytes.Buffer cannot fail.
		panic("exampleserver: encoding PNG: " + err.Error())
	}
	return buf.Bytes()
}
