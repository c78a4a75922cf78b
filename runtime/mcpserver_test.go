package runtime

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/openprogram/mcpvisor/internal/exampleserver"
	"github.com/openprogram/mcpvisor/internal/testutil"
	"github.com/openprogram/mcpvisor/status"
)

// gatewayClient is a go-sdk client connected in memory to a gateway
// server of rt, with what the gateway told it.
type gatewayClient struct {
	*mcp.ClientSession
	toolsChanged, promptsChanged, resourcesChanged chan struct{}

	mu       sync.Mutex
	progress []*mcp.ProgressNotificationParams
	logs     []*mcp.LoggingMessageParams
}

func connectGateway(t *testing.T, rt *testRuntime, opts MCPServerOptions) *gatewayClient {
	t.Helper()
	_, ct := serveInMemory(t, rt, opts)
	return dialGateway(t, ct)
}

// serveInMemory builds a gateway server of rt and connects one in-memory
// session to it; it returns the test's context and the client's end.
func serveInMemory(t *testing.T, rt *testRuntime, opts MCPServerOptions) (context.Context, mcp.Transport) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	srv, err := rt.MCPServer(ctx, opts)
	if err != nil {
		t.Fatalf("MCPServer: %v", err)
	}
	ct, st := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		t.Fatalf("server Connect: %v", err)
	}
	t.Cleanup(func() { _ = ss.Close() })
	return ctx, ct
}

// cancelSleep starts a long ex__sleep through cs, cancels it once the
// server sleeps, and waits until the server saw it cancelled.
func cancelSleep(t *testing.T, rt *testRuntime, cs *mcp.ClientSession) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "ex__sleep", Arguments: map[string]any{"ms": 600000}})
		errc <- err
	}()
	waitForStderr(t, rt, "sleeping 600000ms")
	cancel()
	if err := <-errc; err == nil {
		t.Errorf("a cancelled call succeeded")
	}
	waitForStderr(t, rt, "sleep of 600000ms cancelled")
}

// dialGateway connects a go-sdk client over transport.
func dialGateway(t *testing.T, transport mcp.Transport) *gatewayClient {
	t.Helper()
	g := &gatewayClient{toolsChanged: make(chan struct{}, 64), promptsChanged: make(chan struct{}, 64), resourcesChanged: make(chan struct{}, 64)}
	signal := func(c chan struct{}) {
		select {
		case c <- struct{}{}:
		default:
		}
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "gateway-test", Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler:     func(context.Context, *mcp.ToolListChangedRequest) { signal(g.toolsChanged) },
		PromptListChangedHandler:   func(context.Context, *mcp.PromptListChangedRequest) { signal(g.promptsChanged) },
		ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) { signal(g.resourcesChanged) },
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			g.mu.Lock()
			g.progress = append(g.progress, req.Params)
			g.mu.Unlock()
		},
		LoggingMessageHandler: func(_ context.Context, req *mcp.LoggingMessageRequest) {
			g.mu.Lock()
			g.logs = append(g.logs, req.Params)
			g.mu.Unlock()
		},
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, transport, nil)
	if err != nil {
		t.Fatalf("client Connect: %v", err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	g.ClientSession = cs
	return g
}

func (g *gatewayClient) toolNames(t *testing.T) []string {
	t.Helper()
	res, err := g.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatalf("ListTools: %v", err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
	}
	return names
}

func (g *gatewayClient) tool(t *testing.T, name string) *mcp.Tool {
	t.Helper()
	res, err := g.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatalf("ListTools: %v", err)
	}
	for _, tool := range res.Tools {
		if tool.Name == name {
			return tool
		}
	}
	t.Fatalf("the gateway lists no tool %q", name)
	return nil
}

func (g *gatewayClient) call(t *testing.T, name string, args any) *mcp.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := g.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("calling %s through the gateway: %v", name, err)
	}
	return res
}

// awaitTools waits for list_changed notifications until the tool list
// satisfies cond.
func (g *gatewayClient) awaitTools(t *testing.T, what string, cond func([]string) bool) {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for !cond(g.toolNames(t)) {
		select {
		case <-g.toolsChanged:
		case <-deadline:
			t.Fatalf("the gateway's tools never came to %s: %v", what, g.toolNames(t))
		}
	}
}

// awaitPrompt waits for list_changed notifications until the gateway
// lists the prompt name (the runtime's registry has it then too).
func (g *gatewayClient) awaitPrompt(t *testing.T, name string) {
	t.Helper()
	has := func() bool {
		res, err := g.ListPrompts(context.Background(), nil)
		if err != nil {
			t.Fatalf("ListPrompts: %v", err)
		}
		return slices.ContainsFunc(res.Prompts, func(p *mcp.Prompt) bool { return p.Name == name })
	}
	deadline := time.After(30 * time.Second)
	for !has() {
		select {
		case <-g.promptsChanged:
		case <-deadline:
			t.Fatalf("the gateway never listed the prompt %s", name)
		}
	}
}

// awaitTool waits until the gateway lists the tool name.
func (g *gatewayClient) awaitTool(t *testing.T, name string) {
	t.Helper()
	g.awaitTools(t, "holding "+name, func(names []string) bool { return slices.Contains(names, name) })
}

func mcpText(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// The gateway lists the registry's tools under their registry names with
// every piece of metadata, and calls them with their results whole.
func TestGatewayToolsAndResults(t *testing.T) {
	rt := start(t, Options{}, exampleServer("ex", "-result-tools"))
	if st := rt.waitSettled(t, "ex"); st.State != status.Ready {
		t.Fatalf("ex = %+v", st)
	}
	g := connectGateway(t, rt, MCPServerOptions{Tools: GatewayFilter{Deny: []string{"*__env"}}})

	var want []string
	for _, tool := range rt.Registry().List() {
		if tool.Name != "ex__env" {
			want = append(want, tool.Name)
		}
	}
	got := g.toolNames(t)
	slices.Sort(got)
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("gateway tools = %v, want the registry's less ex__env: %v", got, want)
	}

	d := g.tool(t, "ex__described")
	schema, _ := json.Marshal(d.OutputSchema)
	meta, _ := json.Marshal(d.Meta)
	if d.Title != "Described Tool" || d.Annotations == nil || !d.Annotations.ReadOnlyHint || d.Annotations.OpenWorldHint == nil || *d.Annotations.OpenWorldHint ||
		d.Annotations.Title != "Described" || len(d.Icons) != 1 || d.Icons[0].Theme != mcp.IconThemeDark || d.Icons[0].Sizes[0] != "16x16" ||
		!testutil.JSONEqual(string(schema), exampleserver.RawOutputSchema) || !strings.Contains(string(meta), exampleserver.AppResourceURI) {
		t.Errorf("described through the gateway = %+v (output schema %s, _meta %s), want its title, annotations, icon, schema and _meta", d, schema, meta)
	}

	if res := g.call(t, "ex__echo", map[string]any{"text": "hi"}); res.IsError || mcpText(res) != "hi" {
		t.Errorf("echo = %+v", res)
	}
	if res := g.call(t, "ex__fail", map[string]any{}); !res.IsError {
		t.Errorf("fail = %+v, want isError", res)
	}
	res := g.call(t, "ex__structured", map[string]any{"text": "s"})
	sc, _ := json.Marshal(res.StructuredContent)
	if res.IsError || !strings.Contains(string(sc), `"text":"s"`) {
		t.Errorf("structured = %+v (structured %s)", res, sc)
	}
	if res := g.call(t, "ex__structured_broken", map[string]any{"text": "s"}); !res.IsError || res.StructuredContent != nil ||
		!strings.Contains(mcpText(res), "does not match its output schema") {
		t.Errorf("structured_broken = %+v, want the runtime's mismatch error", res)
	}
	kinds := map[string]bool{}
	for name, args := range map[string]map[string]any{"ex__image": {}, "ex__audio": {}, "ex__annotated": {"text": "n"}, "ex__resource": {}} {
		for _, c := range g.call(t, name, args).Content {
			switch c := c.(type) {
			case *mcp.ImageContent:
				kinds["image"] = len(c.Data) > 0
			case *mcp.AudioContent:
				kinds["audio"] = len(c.Data) > 0
			case *mcp.ResourceLink:
				kinds["link"] = strings.HasPrefix(c.URI, exampleserver.LinkURIPrefix)
			case *mcp.EmbeddedResource:
				kinds["embedded"] = c.Resource != nil
			case *mcp.TextContent:
				kinds["text"] = true
			}
		}
	}
	for _, k := range []string{"image", "audio", "link", "embedded", "text"} {
		if !kinds[k] {
			t.Errorf("no %s block came through the gateway (saw %v)", k, kinds)
		}
	}

	// The filtered tool is not callable either.
	if _, err := g.CallTool(context.Background(), &mcp.CallToolParams{Name: "ex__env", Arguments: map[string]any{"name": "PATH"}}); err == nil {
		t.Errorf("calling the filtered ex__env succeeded")
	}
	if _, err := g.CallTool(context.Background(), &mcp.CallToolParams{Name: "nope__x", Arguments: map[string]any{}}); err == nil {
		t.Errorf("calling an unknown tool succeeded")
	}
}

// A server added to the runtime shows up at the client after a
// tools/list_changed, and goes again when it is removed; so do its
// prompts.
func TestGatewayFollowsTheRegistry(t *testing.T) {
	rt := start(t, Options{}, exampleServer("ex"))
	rt.waitSettled(t, "ex")
	g := connectGateway(t, rt, MCPServerOptions{})
	has := func(name string) func([]string) bool {
		return func(names []string) bool { return slices.Contains(names, name) }
	}
	g.awaitTools(t, "holding ex__echo", has("ex__echo"))

	if _, err := rt.AddServer(context.Background(), exampleServer("b")); err != nil {
		t.Fatal(err)
	}
	g.awaitTools(t, "holding b__echo", has("b__echo"))
	if res := g.call(t, "b__echo", map[string]any{"text": "from b"}); mcpText(res) != "from b" {
		t.Errorf("b__echo = %+v", res)
	}
	prompts, err := g.ListPrompts(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range prompts.Prompts {
		names = append(names, p.Name)
	}
	if !slices.Contains(names, "ex__greet") {
		t.Errorf("prompts = %v, want ex__greet", names)
	}
	got, err := g.GetPrompt(context.Background(), &mcp.GetPromptParams{Name: "ex__greet", Arguments: map[string]string{"name": "Ada"}})
	if err != nil || len(got.Messages) == 0 || !strings.Contains(got.Messages[0].Content.(*mcp.TextContent).Text, "Ada") {
		t.Errorf("greet = %+v, %v", got, err)
	}

	if err := rt.RemoveServer(context.Background(), "b"); err != nil {
		t.Fatal(err)
	}
	g.awaitTools(t, "without b__echo", func(names []string) bool {
		return !slices.Contains(names, "b__echo") && slices.Contains(names, "ex__echo")
	})
}

// Resources keep their URIs while one server offers them, and are
// prefixed (mcpvisor:{server}/{uri}) for each server when two do; reads
// go to the right server either way.
func TestGatewayResources(t *testing.T) {
	rt := start(t, Options{}, exampleServer("ex"))
	rt.waitSettled(t, "ex")
	g := connectGateway(t, rt, MCPServerOptions{})
	uris := func() []string {
		res, err := g.ListResources(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, r := range res.Resources {
			out = append(out, r.URI)
		}
		slices.Sort(out)
		return out
	}
	testutil.Eventually(t, 30*time.Second, "the readme listed", func() bool { return len(uris()) == 1 })
	readme := uris()[0]
	if strings.HasPrefix(readme, GatewayURIScheme) {
		t.Fatalf("a URI one server offers is prefixed: %s", readme)
	}
	read, err := g.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: readme})
	if err != nil || len(read.Contents) != 1 || read.Contents[0].Text == "" || read.Contents[0].URI != readme {
		t.Fatalf("reading %s: %+v, %v", readme, read, err)
	}
	note, err := g.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "demo://notes/7"})
	if err != nil || note.Contents[0].Text != "note 7" {
		t.Fatalf("reading a note through the template: %+v, %v", note, err)
	}

	if _, err := rt.AddServer(context.Background(), exampleServer("b")); err != nil {
		t.Fatal(err)
	}
	want := []string{GatewayURI("b", readme), GatewayURI("ex", readme)}
	testutil.Eventually(t, 30*time.Second, "both readmes prefixed", func() bool { return slices.Equal(uris(), want) })
	for _, uri := range want {
		read, err := g.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: uri})
		if err != nil || len(read.Contents) != 1 || read.Contents[0].URI != uri || read.Contents[0].Text == "" {
			t.Errorf("reading %s: %+v, %v", uri, read, err)
		}
	}
	templates, err := g.ListResourceTemplates(context.Background(), nil)
	if err != nil || len(templates.ResourceTemplates) != 2 {
		t.Fatalf("templates = %+v, %v", templates, err)
	}
	note, err = g.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: GatewayURI("b", "demo://notes/8")})
	if err != nil || note.Contents[0].Text != "note 8" || note.Contents[0].URI != GatewayURI("b", "demo://notes/8") {
		t.Errorf("reading b's note through its prefixed template: %+v, %v", note, err)
	}

	if err := rt.RemoveServer(context.Background(), "b"); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, 30*time.Second, "the readme unprefixed again", func() bool { return slices.Equal(uris(), []string{readme}) })
}

func TestGatewayURIRoundTrip(t *testing.T) {
	for _, c := range []struct{ server, uri string }{{"ex", "file:///a/b.txt"}, {"a-b_c", "demo://notes/{id}"}, {"s", "mcpvisor:x/y"}, {"s", ""}} {
		server, uri, ok := SplitGatewayURI(GatewayURI(c.server, c.uri))
		if !ok || server != c.server || uri != c.uri {
			t.Errorf("SplitGatewayURI(GatewayURI(%q, %q)) = %q, %q, %v", c.server, c.uri, server, uri, ok)
		}
	}
	for _, uri := range []string{"file:///x", "mcpvisor:", "mcpvisor:/x", "mcpvisor:nox"} {
		if s, u, ok := SplitGatewayURI(uri); ok {
			t.Errorf("SplitGatewayURI(%q) = %q, %q, true", uri, s, u)
		}
	}
}

// Progress reaches the client under its own token; a client's cancel
// cancels the call on the upstream server.
func TestGatewayProgressAndCancel(t *testing.T) {
	rt := start(t, Options{}, exampleServer("ex", "-progress-tools"))
	rt.waitSettled(t, "ex")
	g := connectGateway(t, rt, MCPServerOptions{})
	g.awaitTool(t, "ex__progress")
	g.awaitTool(t, "ex__sleep")

	params := &mcp.CallToolParams{Name: "ex__progress", Arguments: map[string]any{"period_ms": 5, "total_ms": 200}}
	params.SetProgressToken("client-token-1")
	if _, err := g.CallTool(context.Background(), params); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, 10*time.Second, "a progress report", func() bool {
		g.mu.Lock()
		defer g.mu.Unlock()
		return len(g.progress) > 0
	})
	g.mu.Lock()
	for _, p := range g.progress {
		if p.ProgressToken != "client-token-1" || p.Progress <= 0 {
			t.Errorf("progress %+v, want the client's token", p)
		}
	}
	g.mu.Unlock()

	cancelSleep(t, rt, g.ClientSession)
}

// tokenTransport adds a bearer token (and an Origin, when set) to every
// request.
type tokenTransport struct {
	token, origin string
}

func (tr tokenTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	if tr.token != "" {
		req.Header.Set("Authorization", "Bearer "+tr.token)
	}
	if tr.origin != "" {
		req.Header.Set("Origin", tr.origin)
	}
	return http.DefaultTransport.RoundTrip(req)
}

// Over Streamable HTTP the gateway wants its token and a same-origin
// Origin, and then serves like in memory.
func TestGatewayHTTP(t *testing.T) {
	rt := start(t, Options{}, exampleServer("ex"))
	rt.waitSettled(t, "ex")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv, err := rt.MCPServer(ctx, MCPServerOptions{Tools: GatewayFilter{Allow: []string{"ex__e*"}}})
	if err != nil {
		t.Fatal(err)
	}
	const token = "gateway-test-token"
	hs := httptest.NewServer(MCPHandler(srv, MCPHTTPOptions{Token: token}))
	defer hs.Close()
	defer hs.CloseClientConnections()

	initialize := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`
	for _, c := range []struct {
		what          string
		token, origin string
		want          int
	}{
		{"no token", "", "", http.StatusUnauthorized},
		{"a wrong token", "gateway-test-tokeN", "", http.StatusUnauthorized},
		{"another origin", token, "http://evil.example", http.StatusForbidden},
		{"a null origin", token, "null", http.StatusForbidden},
	} {
		req, _ := http.NewRequest("POST", hs.URL+"/mcp", strings.NewReader(initialize))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := (&http.Client{Transport: tokenTransport{c.token, c.origin}}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != c.want {
			t.Errorf("%s: %d, want %d", c.what, resp.StatusCode, c.want)
		}
	}

	g := dialGateway(t, &mcp.StreamableClientTransport{Endpoint: hs.URL + "/mcp",
		HTTPClient: &http.Client{Transport: tokenTransport{token, hs.URL}}})
	defer g.Close() // before the server closes: the DELETE ends the server's session
	names := g.toolNames(t)
	slices.Sort(names)
	if strings.Join(names, ",") != "ex__echo,ex__env" {
		t.Errorf("tools over HTTP with allow ex__e* = %v", names)
	}
	if res := g.call(t, "ex__echo", map[string]any{"text": "over http"}); mcpText(res) != "over http" {
		t.Errorf("echo over HTTP = %+v", res)
	}
	if _, err := g.CallTool(context.Background(), &mcp.CallToolParams{Name: "ex__add", Arguments: map[string]any{"a": 1, "b": 2}}); err == nil {
		t.Errorf("calling ex__add, which the filter leaves out, succeeded")
	}
}

// Completions go to the prompt's or the template's server; server logs
// reach a client that asked for them.
func TestGatewayCompletionsAndLogs(t *testing.T) {
	rt := start(t, Options{}, exampleServer("ex"))
	rt.waitSettled(t, "ex")
	g := connectGateway(t, rt, MCPServerOptions{})
	g.awaitPrompt(t, "ex__greet")
	g.awaitTool(t, "ex__stderr")
	ctx := context.Background()
	res, err := g.Complete(ctx, &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/prompt", Name: "ex__greet"},
		Argument: mcp.CompleteParamsArgument{Name: "name", Value: "A"}, Context: &mcp.CompleteContext{Arguments: map[string]string{"style": "formally"}}})
	if err != nil || strings.Join(res.Completion.Values, ",") != "Ada Lovelace,Alan Turing,Alice Ball" {
		t.Errorf("completing greet's name: %+v, %v", res, err)
	}
	testutil.Eventually(t, 30*time.Second, "the notes template served", func() bool {
		res, err := g.ListResourceTemplates(ctx, nil)
		return err == nil && len(res.ResourceTemplates) == 1
	})
	res, err = g.Complete(ctx, &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/resource", URI: "demo://notes/{id}"},
		Argument: mcp.CompleteParamsArgument{Name: "id", Value: "1"}})
	if err != nil || strings.Join(res.Completion.Values, ",") != "1,10,12" {
		t.Errorf("completing a note id: %+v, %v", res, err)
	}
	if _, err := g.Complete(ctx, &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/prompt", Name: "ex__nope"},
		Argument: mcp.CompleteParamsArgument{Name: "x"}}); err == nil {
		t.Errorf("completing an unknown prompt succeeded")
	}

	if err := g.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "info"}); err != nil {
		t.Fatal(err)
	}
	g.call(t, "ex__stderr", map[string]any{"text": "gateway-log-line"})
	testutil.Eventually(t, 10*time.Second, "the stderr line as a log notification", func() bool {
		g.mu.Lock()
		defer g.mu.Unlock()
		for _, l := range g.logs {
			if l.Logger == "ex" && l.Level == "info" && strings.Contains(l.Data.(string), "gateway-log-line") {
				return true
			}
		}
		return false
	})
}

// A server's resources/list_changed makes the gateway list its resources
// again, and tell its clients.
func TestGatewayFollowsResourceChanges(t *testing.T) {
	rt := start(t, Options{}, exampleServer("ex", "-change-tool"))
	rt.waitSettled(t, "ex")
	g := connectGateway(t, rt, MCPServerOptions{})
	has := func(uri string) bool {
		res, err := g.ListResources(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		return slices.ContainsFunc(res.Resources, func(r *mcp.Resource) bool { return r.URI == uri })
	}
	testutil.Eventually(t, 30*time.Second, "the readme listed", func() bool { return has("demo://readme") })
	g.awaitTool(t, "ex__change")
	if res := g.call(t, "ex__change", map[string]any{"list": "resources"}); !strings.Contains(mcpText(res), "demo://extra/1") {
		t.Fatalf("change = %+v", res)
	}
	select {
	case <-g.resourcesChanged:
	case <-time.After(30 * time.Second):
		t.Fatal("no resources/list_changed from the gateway")
	}
	testutil.Eventually(t, 30*time.Second, "the added resource listed", func() bool { return has("demo://extra/1") })
	read, err := g.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "demo://extra/1"})
	if err != nil || len(read.Contents) != 1 {
		t.Errorf("reading the added resource: %+v, %v", read, err)
	}
}

// A server's secret it quotes in an error or on stderr reaches a gateway
// client only scrubbed: the call's isError text and the log notification.
func TestGatewayScrubsSecrets(t *testing.T) {
	const secret = "sk-gateway-planted-4e1b9c"
	srv := exampleServer("ex", "-leak-tool")
	srv.Env["API_KEY"] = secret
	rt := start(t, Options{}, srv)
	rt.waitSettled(t, "ex")
	g := connectGateway(t, rt, MCPServerOptions{})
	g.awaitTool(t, "ex__leak")
	g.awaitTool(t, "ex__stderr")
	if err := g.SetLoggingLevel(context.Background(), &mcp.SetLoggingLevelParams{Level: "debug"}); err != nil {
		t.Fatal(err)
	}
	res, err := g.CallTool(context.Background(), &mcp.CallToolParams{Name: "ex__leak", Arguments: map[string]any{"env": []string{"API_KEY"}}})
	answer, _ := json.Marshal(res)
	if err != nil {
		answer = append(answer, err.Error()...)
	}
	if strings.Contains(string(answer), secret) {
		t.Errorf("the leak tool's answer through the gateway shows the secret")
	}
	if !strings.Contains(string(answer), "[redacted]") {
		t.Errorf("the leak tool's answer through the gateway = %s, want its quote redacted", strings.ReplaceAll(string(answer), secret, "<SECRET>"))
	}
	g.call(t, "ex__stderr", map[string]any{"text": "gateway-key-line " + secret})
	var line string
	testutil.Eventually(t, 10*time.Second, "the stderr line as a log notification", func() bool {
		g.mu.Lock()
		defer g.mu.Unlock()
		for _, l := range g.logs {
			data, _ := json.Marshal(l)
			if strings.Contains(string(data), secret) {
				t.Errorf("a log notification shows the secret")
			}
			if s, _ := l.Data.(string); strings.Contains(s, "gateway-key-line") {
				line = s
			}
		}
		return line != ""
	})
	if !strings.Contains(line, "[redacted]") {
		t.Errorf("log line = %q, want the secret redacted", strings.ReplaceAll(line, secret, "<SECRET>"))
	}
}

// Many clients of one gateway server share the upstream session and each
// follows a change.
func TestGatewayManyClients(t *testing.T) {
	rt := start(t, Options{}, exampleServer("ex"))
	rt.waitSettled(t, "ex")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv, err := rt.MCPServer(ctx, MCPServerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var clients []*gatewayClient
	for range 10 {
		ct, st := mcp.NewInMemoryTransports()
		ss, err := srv.Connect(ctx, st, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = ss.Close() })
		clients = append(clients, dialGateway(t, ct))
	}
	var wg sync.WaitGroup
	for i, g := range clients {
		wg.Go(func() {
			// Not g.call: Fatal is for the test's goroutine.
			res, err := g.CallTool(context.Background(), &mcp.CallToolParams{Name: "ex__echo", Arguments: map[string]any{"text": fmt.Sprint("client ", i)}})
			if err != nil || mcpText(res) != fmt.Sprint("client ", i) {
				t.Errorf("client %d: echo = %+v, %v", i, res, err)
			}
		})
	}
	wg.Wait()
	if _, err := rt.AddServer(context.Background(), exampleServer("b")); err != nil {
		t.Fatal(err)
	}
	for _, g := range clients {
		g.awaitTools(t, "holding b__echo", func(names []string) bool { return slices.Contains(names, "b__echo") })
	}
}
