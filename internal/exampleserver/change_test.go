package exampleserver

import (
	"context"
	"io"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// newProtocol is the first protocol version whose sessions receive
// list_changed notifications only on a subscriptions/listen stream.
const newProtocol = "2026-07-28"

// listWatcher records the list_changed notifications a client receives.
type listWatcher struct {
	changed map[string]chan struct{} // by list: one value per notification
	acked   chan struct{}            // closed when the server acknowledged subscriptions/listen
}

// newWatchingClient returns a client whose list_changed handlers report to
// the returned watcher.
func newWatchingClient() (*mcp.Client, *listWatcher) {
	w := &listWatcher{
		changed: map[string]chan struct{}{
			listTools: make(chan struct{}, 16), listPrompts: make(chan struct{}, 16), listResources: make(chan struct{}, 16),
		},
		acked: make(chan struct{}),
	}
	// The handlers run on the client's read loop and must not block.
	note := func(list string) {
		select {
		case w.changed[list] <- struct{}{}:
		default:
		}
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "exampleserver-test", Version: "0"}, &mcp.ClientOptions{
		ToolListChangedHandler:     func(context.Context, *mcp.ToolListChangedRequest) { note(listTools) },
		PromptListChangedHandler:   func(context.Context, *mcp.PromptListChangedRequest) { note(listPrompts) },
		ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) { note(listResources) },
	})
	var once sync.Once
	client.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "notifications/subscriptions/acknowledged" {
				once.Do(func() { close(w.acked) })
			}
			return next(ctx, method, req)
		}
	})
	return client, w
}

// connectWatching connects a watching client over clientT and closes the
// session when the test ends. Under the new protocol it returns only once
// the server has acknowledged the client's subscriptions/listen stream: the
// client opens it without waiting, and a change made before the server
// registered it would not be announced to this session.
func connectWatching(t *testing.T, clientT mcp.Transport) (*mcp.ClientSession, *listWatcher) {
	t.Helper()
	client, w := newWatchingClient()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	cs, err := client.Connect(ctx, clientT, nil)
	if err != nil {
		t.Fatalf("client Connect: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	if cs.InitializeResult().ProtocolVersion >= newProtocol {
		select {
		case <-w.acked:
		case <-time.After(testTimeout):
			t.Fatal("the server never acknowledged subscriptions/listen")
		}
	}
	return cs, w
}

// wait waits for a notification that list changed.
func (w *listWatcher) wait(t *testing.T, list string) {
	t.Helper()
	select {
	case <-w.changed[list]:
	case <-time.After(testTimeout):
		t.Fatalf("no notifications/%s/list_changed", list)
	}
}

// connectInMemoryWatching connects a watching client to NewServer(opts) over
// in-memory transports.
func connectInMemoryWatching(t *testing.T, opts Options) (*mcp.ClientSession, *listWatcher) {
	t.Helper()
	serverT, clientT := mcp.NewInMemoryTransports()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	ss, err := NewServer(opts).Connect(ctx, serverT, nil)
	if err != nil {
		t.Fatalf("server Connect: %v", err)
	}
	t.Cleanup(func() { ss.Wait() }) // runs after connectWatching's Close
	return connectWatching(t, clientT)
}

func TestChangeTools(t *testing.T) {
	cs, w := connectInMemoryWatching(t, Options{ChangeTool: true})
	if got := onlyText(t, callTool(t, cs, "change", map[string]any{"list": "tools"})); got != "added tool extra_1" {
		t.Errorf("change = %q, want %q", got, "added tool extra_1")
	}
	w.wait(t, listTools)
	if names := toolNames(t, cs); !slices.Contains(names, "extra_1") || !slices.Contains(names, "echo") {
		t.Errorf("tools after the change = %v, want extra_1 added", names)
	}
	if got := onlyText(t, callTool(t, cs, "extra_1", map[string]any{"text": "added at runtime"})); got != "added at runtime" {
		t.Errorf("extra_1 = %q, want the text echoed", got)
	}

	// Each call adds one more, counting per list.
	if got := onlyText(t, callTool(t, cs, "change", map[string]any{"list": "tools"})); got != "added tool extra_2" {
		t.Errorf("second change = %q, want %q", got, "added tool extra_2")
	}
	w.wait(t, listTools)
	if names := toolNames(t, cs); !slices.Contains(names, "extra_2") {
		t.Errorf("tools after the second change = %v, want extra_2 added", names)
	}
	w.assertQuiet(t, listPrompts, listResources)
}

func TestChangePrompts(t *testing.T) {
	cs, w := connectInMemoryWatching(t, Options{ChangeTool: true})
	if got := onlyText(t, callTool(t, cs, "change", map[string]any{"list": "prompts"})); got != "added prompt extra_1" {
		t.Errorf("change = %q, want %q", got, "added prompt extra_1")
	}
	w.wait(t, listPrompts)
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	res, err := cs.ListPrompts(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range res.Prompts {
		names = append(names, p.Name)
	}
	slices.Sort(names)
	if want := []string{"extra_1", "greet"}; !slices.Equal(names, want) {
		t.Errorf("prompts after the change = %v, want %v", names, want)
	}
	if got := promptText(t, cs, "extra_1", nil); got != "extra prompt 1" {
		t.Errorf("extra_1 = %q, want %q", got, "extra prompt 1")
	}
	w.assertQuiet(t, listTools, listResources)
}

func TestChangeResources(t *testing.T) {
	cs, w := connectInMemoryWatching(t, Options{ChangeTool: true})
	if got := onlyText(t, callTool(t, cs, "change", map[string]any{"list": "resources"})); got != "added resource demo://extra/1" {
		t.Errorf("change = %q, want %q", got, "added resource demo://extra/1")
	}
	w.wait(t, listResources)
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	res, err := cs.ListResources(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var uris []string
	for _, r := range res.Resources {
		uris = append(uris, r.URI)
	}
	slices.Sort(uris)
	if want := []string{"demo://extra/1", "demo://readme"}; !slices.Equal(uris, want) {
		t.Errorf("resources after the change = %v, want %v", uris, want)
	}
	if got := readResource(t, cs, "demo://extra/1"); got.Text != "extra resource 1" || got.MIMEType != "text/plain" {
		t.Errorf("read demo://extra/1 = %+v, want text/plain %q", got, "extra resource 1")
	}
	w.assertQuiet(t, listTools, listPrompts)
}

func TestChangeRejectsUnknownList(t *testing.T) {
	cs, _ := connectInMemoryWatching(t, Options{ChangeTool: true})
	for _, args := range []map[string]any{{}, {"list": "widgets"}, {"list": "Tools"}, {"list": 1}} {
		if res := callTool(t, cs, "change", args); !res.IsError {
			t.Errorf("change(%v): IsError = false, content %+v", args, res.Content)
		}
	}
	if names := toolNames(t, cs); slices.Contains(names, "extra_1") {
		t.Errorf("a rejected change added a tool: %v", names)
	}
}

func TestChangeToolIsOptional(t *testing.T) {
	for _, tt := range []struct {
		opts Options
		want bool
	}{{Options{}, false}, {Options{ChangeTool: true}, true}} {
		cs := connectInMemory(t, tt.opts)
		if got := slices.Contains(toolNames(t, cs), "change"); got != tt.want {
			t.Errorf("ChangeTool=%v: change listed = %v, want %v", tt.opts.ChangeTool, got, tt.want)
		}
	}
}

// TestMainChangeTool checks the flag and that the notification crosses the
// stdio transport demo serve uses; the session's open listen stream must not
// keep the server from exiting with status 0 when stdin closes.
func TestMainChangeTool(t *testing.T) {
	h := startMain("-change-tool")
	h.transport.Reader = drainOnClose{h.transport.Reader}
	cs, w := connectWatching(t, h.transport)
	if got := onlyText(t, callTool(t, cs, "change", map[string]any{"list": "tools"})); got != "added tool extra_1" {
		t.Errorf("change = %q, want %q", got, "added tool extra_1")
	}
	w.wait(t, listTools)
	if names := toolNames(t, cs); !slices.Contains(names, "extra_1") {
		t.Errorf("tools after the change = %v, want extra_1 added", names)
	}
	cs.Close()
	if got := h.wait(t); got != ExitCodeOK {
		t.Errorf("exit code = %d, want %d; stderr:\n%s", got, ExitCodeOK, h.stderr.String())
	}
}

// drainOnClose is the client's end of a server's stdout that, like a
// process's stdout, stays open after the client closed the session, until
// the server closes it (exec.Cmd closes its end in Wait). Closing both pipes
// at once instead would fail the server's answer to the abandoned
// subscriptions/listen with io.ErrClosedPipe.
type drainOnClose struct{ io.ReadCloser }

func (r drainOnClose) Close() error {
	go io.Copy(io.Discard, r.ReadCloser) // ends when the server closes its out
	return nil
}

// assertQuiet fails the test if a notification is pending for any of lists.
func (w *listWatcher) assertQuiet(t *testing.T, lists ...string) {
	t.Helper()
	for _, list := range lists {
		select {
		case <-w.changed[list]:
			t.Errorf("unexpected notifications/%s/list_changed", list)
		default:
		}
	}
}

// toolNames lists the server's tools.
func toolNames(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	res, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatalf("ListTools: %v", err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
	}
	return names
}
