package exampleserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"image"
	"image/color"
	_ "image/png" // registers the decoder image.Decode needs
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestTextTools(t *testing.T) {
	t.Setenv("EXAMPLESERVER_TEST_ENV", "value from the test")
	stderr := &syncBuffer{}
	cs := connectInMemory(t, Options{Stderr: stderr})

	tests := []struct {
		tool string
		args map[string]any
		want string
	}{
		{"echo", map[string]any{"text": "héllo, world  "}, "héllo, world  "},
		{"echo", map[string]any{"text": ""}, ""},
		{"add", map[string]any{"a": 2, "b": 3}, "5"},
		{"add", map[string]any{"a": 0.1, "b": 0.2}, "0.30000000000000004"},
		{"add", map[string]any{"a": -1.5, "b": 0.25}, "-1.25"},
		{"add", map[string]any{"a": 1e21, "b": 0}, "1000000000000000000000"},
		{"sleep", map[string]any{"ms": 1}, "slept 1ms"},
		{"sleep", map[string]any{"ms": 0}, "slept 0ms"},
		{"env", map[string]any{"name": "EXAMPLESERVER_TEST_ENV"}, "value from the test"},
		{"env", map[string]any{"name": "EXAMPLESERVER_TEST_ENV_THAT_IS_NOT_SET"}, ""},
		{"stderr", map[string]any{"text": "a line for stderr"}, "ok"},
	}
	for _, tt := range tests {
		res := callTool(t, cs, tt.tool, tt.args)
		if res.IsError {
			t.Errorf("%s(%v): IsError, content %+v", tt.tool, tt.args, res.Content)
			continue
		}
		if got := onlyText(t, res); got != tt.want {
			t.Errorf("%s(%v) = %q, want %q", tt.tool, tt.args, got, tt.want)
		}
	}
	if got, want := stderr.String(), "sleeping 1ms\nsleeping 0ms\na line for stderr\n"; got != want {
		t.Errorf("stderr = %q, want %q", got, want)
	}
}

func TestInvalidArgumentsAreToolErrors(t *testing.T) {
	cs := connectInMemory(t, Options{Stderr: &syncBuffer{}})
	tests := []struct {
		tool string
		args map[string]any
	}{
		{"echo", map[string]any{}},                            // text is required
		{"add", map[string]any{"a": "2", "b": 3}},             // a must be a number
		{"sleep", map[string]any{"ms": -1}},                   // rejected by the handler
		{"sleep", map[string]any{"ms": int64(math.MaxInt64)}}, // would overflow a Duration
		{"env", map[string]any{"name": 7}},                    // name must be a string
		{"stderr", map[string]any{"txt": "typo'd"}},           // text is required
	}
	for _, tt := range tests {
		if res := callTool(t, cs, tt.tool, tt.args); !res.IsError {
			t.Errorf("%s(%v): IsError = false, content %+v", tt.tool, tt.args, res.Content)
		}
	}
}

func TestFail(t *testing.T) {
	cs := connectInMemory(t, Options{})
	res := callTool(t, cs, "fail", map[string]any{})
	if !res.IsError {
		t.Error("IsError = false, want true")
	}
	if got, want := onlyText(t, res), "this tool always fails"; got != want {
		t.Errorf("text = %q, want %q", got, want)
	}
}

func TestImage(t *testing.T) {
	cs := connectInMemory(t, Options{})
	res := callTool(t, cs, "image", nil)
	if res.IsError || len(res.Content) != 1 {
		t.Fatalf("got IsError=%v with %d blocks, want one image block", res.IsError, len(res.Content))
	}
	ic, ok := res.Content[0].(*mcp.ImageContent)
	if !ok {
		t.Fatalf("got %T, want *mcp.ImageContent", res.Content[0])
	}
	if ic.MIMEType != "image/png" {
		t.Errorf("MIMEType = %q, want image/png", ic.MIMEType)
	}
	img, format, err := image.Decode(bytes.NewReader(ic.Data))
	if err != nil {
		t.Fatalf("decoding image: %v", err)
	}
	if format != "png" {
		t.Errorf("format = %q, want png", format)
	}
	if got := img.Bounds().Size(); got != image.Pt(2, 2) {
		t.Errorf("size = %v, want 2x2", got)
	}
	wantRed := color.NRGBAModel.Convert(color.NRGBA{R: 0xff, A: 0xff})
	if got := color.NRGBAModel.Convert(img.At(0, 0)); got != wantRed {
		t.Errorf("pixel (0,0) = %v, want %v", got, wantRed)
	}
}

func TestResource(t *testing.T) {
	cs := connectInMemory(t, Options{})
	res := callTool(t, cs, "resource", nil)
	if res.IsError || len(res.Content) != 1 {
		t.Fatalf("got IsError=%v with %d blocks, want one resource block", res.IsError, len(res.Content))
	}
	er, ok := res.Content[0].(*mcp.EmbeddedResource)
	if !ok {
		t.Fatalf("got %T, want *mcp.EmbeddedResource", res.Content[0])
	}
	want := mcp.ResourceContents{URI: "demo://resource/1", MIMEType: "text/plain", Text: "the embedded resource text"}
	if er.Resource == nil || er.Resource.URI != want.URI || er.Resource.MIMEType != want.MIMEType || er.Resource.Text != want.Text {
		t.Errorf("resource = %+v, want %+v", er.Resource, want)
	}
}

func TestSleepStopsWhenCancelled(t *testing.T) {
	// The middleware tells the test when the call is running and what the
	// handler answered, so cancellation is known to reach the handler.
	started := make(chan struct{})
	answered := make(chan *mcp.CallToolResult, 1)
	srv := NewServer(Options{})
	srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method != "tools/call" {
				return next(ctx, method, req)
			}
			close(started)
			res, err := next(ctx, method, req)
			answered <- res.(*mcp.CallToolResult)
			return res, err
		}
	})
	cs := connectServer(t, srv)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	callErr := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(ctx, sleepParams(time.Hour.Milliseconds()))
		callErr <- err
	}()
	select {
	case <-started:
	case <-time.After(testTimeout):
		t.Fatal("the sleep call never reached the server")
	}
	cancel()

	select {
	case err := <-callErr:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("CallTool error = %v, want context.Canceled", err)
		}
	case <-time.After(testTimeout):
		t.Fatal("a cancelled sleep call did not return")
	}
	select {
	case res := <-answered:
		if !res.IsError || onlyText(t, res) != context.Canceled.Error() {
			t.Errorf("handler answered IsError=%v %+v, want the context error", res.IsError, res.Content)
		}
	case <-time.After(testTimeout):
		t.Fatal("the cancelled sleep handler never returned")
	}
}

func TestSleepHandlerReturnsContextError(t *testing.T) {
	// Calling the handler directly checks what the protocol test above
	// cannot see: the handler itself returns the context's error.
	tl := newTools(&lockedWriter{w: &syncBuffer{}})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, _, err := tl.sleep(ctx, nil, sleepArgs{Ms: int(time.Hour.Milliseconds())})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
}

func TestListTools(t *testing.T) {
	cs := connectInMemory(t, Options{Name: "custom-name"})
	if got := cs.InitializeResult().ServerInfo.Name; got != "custom-name" {
		t.Errorf("server name = %q, want custom-name", got)
	}
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	res, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	schemas := map[string]map[string]any{}
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
		raw, err := json.Marshal(tool.InputSchema)
		if err != nil {
			t.Fatal(err)
		}
		var schema map[string]any
		if err := json.Unmarshal(raw, &schema); err != nil {
			t.Fatal(err)
		}
		schemas[tool.Name] = schema
	}
	slices.Sort(names)
	want := []string{"add", "consult", "described", "echo", "env", "fail", "future", "image", "resource", "schema", "sleep", "stderr"}
	if !slices.Equal(names, want) {
		t.Fatalf("tools = %v, want %v", names, want)
	}

	// Each argument is required and described, so a model can call the tool
	// from its schema alone.
	wantArgs := map[string][]string{
		"echo": {"text"}, "add": {"a", "b"}, "sleep": {"ms"}, "env": {"name"}, "stderr": {"text"},
		"fail": nil, "image": nil, "resource": nil,
	}
	for tool, args := range wantArgs {
		schema := schemas[tool]
		props, _ := schema["properties"].(map[string]any)
		if len(props) != len(args) {
			t.Errorf("%s: %d properties, want %d: %v", tool, len(props), len(args), props)
		}
		var required []string
		if r, ok := schema["required"].([]any); ok {
			for _, name := range r {
				required = append(required, name.(string))
			}
		}
		slices.Sort(required)
		if !slices.Equal(required, args) {
			t.Errorf("%s: required = %v, want %v", tool, required, args)
		}
		for _, arg := range args {
			p, _ := props[arg].(map[string]any)
			if d, _ := p["description"].(string); strings.TrimSpace(d) == "" {
				t.Errorf("%s.%s has no description", tool, arg)
			}
		}
	}
}

func TestPanicOnToolPanicsInHandler(t *testing.T) {
	// The in-process check of the middleware; that the panic crashes the
	// process is checked by TestProcessPanicOnTool.
	mw := panicOnTool("boom")
	next := func(context.Context, string, mcp.Request) (mcp.Result, error) { return &mcp.CallToolResult{}, nil }
	h := mw(next)

	if _, err := h(context.Background(), "tools/call", &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Name: "echo"}}); err != nil {
		t.Fatalf("another tool: %v", err)
	}
	defer func() {
		if r := recover(); r == nil || !strings.Contains(r.(string), "boom") {
			t.Errorf("recovered %v, want a panic naming the tool", r)
		}
	}()
	h(context.Background(), "tools/call", &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Name: "boom"}})
	t.Error("calling the tool did not panic")
}
