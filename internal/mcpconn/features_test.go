package mcpconn

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/openprogram/mcpvisor/config"
	"github.com/openprogram/mcpvisor/events"
	"github.com/openprogram/mcpvisor/internal/redact"
	"github.com/openprogram/mcpvisor/tools"
)

// featureServer is an in-memory server (protocol 2025-11-25, where a
// server may send requests while serving one) with tools that use the
// client's features: sample, log, progress and roots.
//
// progress sends three reports and, when the call asked for progress,
// waits until delivered is closed (the test's callback got the last), so
// that the test sees reports delivered while the call runs.
func featureServer(t *testing.T, delivered <-chan struct{}) mcp.Transport {
	t.Helper()
	srv := mcp.NewServer(&mcp.Implementation{Name: "features", Version: "1"},
		&mcp.ServerOptions{SupportedProtocolVersions: []string{"2025-11-25"}, Capabilities: &mcp.ServerCapabilities{Logging: &mcp.LoggingCapabilities{}}})
	text := func(s string) *mcp.CallToolResult {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
	}
	schema := json.RawMessage(`{"type":"object"}`)
	srv.AddTool(&mcp.Tool{Name: "sample", InputSchema: schema}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		res, err := req.Session.CreateMessage(ctx, &mcp.CreateMessageParams{MaxTokens: 10,
			Messages: []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: "hello?"}}}})
		if err != nil {
			return text("error: " + err.Error()), nil
		}
		declared := "without"
		if c := req.Session.InitializeParams().Capabilities; c != nil && c.Sampling != nil && c.Sampling.Tools != nil {
			declared = "with"
		}
		return text("model: " + res.Content.(*mcp.TextContent).Text + " (sampling declared " + declared + " tools)"), nil
	})
	srv.AddTool(&mcp.Tool{Name: "log", InputSchema: schema}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		err := req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "warning", Logger: "disk", Data: "almost full"})
		return text("logged"), err
	})
	srv.AddTool(&mcp.Tool{Name: "progress", InputSchema: schema}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		for i := range 3 {
			if err := req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: req.Params.GetProgressToken(),
				Progress: float64(i + 1), Total: 3, Message: "step"}); err != nil {
				return nil, err
			}
		}
		if req.Params.GetProgressToken() != nil && delivered != nil {
			select {
			case <-delivered:
			case <-time.After(10 * time.Second):
				return text("progress not delivered"), nil
			}
		}
		return text("done"), nil
	})
	srv.AddTool(&mcp.Tool{Name: "roots", InputSchema: schema}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		res, err := req.Session.ListRoots(ctx, nil)
		if err != nil {
			return nil, err
		}
		var uris []string
		for _, r := range res.Roots {
			uris = append(uris, r.URI)
		}
		return text(strings.Join(uris, ",")), nil
	})
	return serveInMemory(t, srv)
}

// serveInMemory connects srv to an in-memory transport and returns the
// client's end; the server's session closes when the test ends.
func serveInMemory(t *testing.T, srv *mcp.Server) mcp.Transport {
	t.Helper()
	ct, st := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(context.Background(), st, nil)
	if err != nil {
		t.Fatalf("server connect: %v", err)
	}
	t.Cleanup(func() { _ = ss.Close() })
	return ct
}

// records is a slog handler that keeps every record.
type records struct {
	mu   sync.Mutex
	list []slog.Record
}

func (r *records) Enabled(context.Context, slog.Level) bool { return true }
func (r *records) Handle(_ context.Context, rec slog.Record) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.list = append(r.list, rec)
	return nil
}
func (r *records) WithAttrs([]slog.Attr) slog.Handler { return r }
func (r *records) WithGroup(string) slog.Handler      { return r }

func (r *records) find(msg string) (slog.Record, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, rec := range r.list {
		if rec.Message == msg {
			return rec, true
		}
	}
	return slog.Record{}, false
}

func dialFeatures(t *testing.T, f Features, logger *slog.Logger, delivered ...chan struct{}) *Conn {
	t.Helper()
	var d chan struct{}
	if len(delivered) > 0 {
		d = delivered[0]
	}
	conn, err := testDial(t.Context(), Options{
		Server:    config.Server{Name: "f", Type: config.TypeLocal, Command: []string{"unused"}, Enabled: true},
		Transport: featureServer(t, d),
		Features:  f,
		Logger:    logger,
	})
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	t.Cleanup(conn.Close)
	return conn
}

func callText(t *testing.T, conn *Conn, ctx context.Context, name string) string {
	t.Helper()
	res, err := conn.CallTool(ctx, name, map[string]any{})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return res.Content[0].(*mcp.TextContent).Text
}

func TestSampling(t *testing.T) {
	// Without a host model the server gets an answer at once: an error
	// saying sampling is not configured.
	conn := dialFeatures(t, Features{}, nil)
	if got := callText(t, conn, t.Context(), "sample"); !strings.Contains(got, "sampling is not configured") {
		t.Errorf("without a sampler the server saw %q", got)
	}
	// The plain request of an older server reaches the sampler as one
	// with a single block, and the tools capability is declared (the SDK
	// does so for CreateMessageWithToolsHandler).
	conn = dialFeatures(t, Features{Sample: func(_ context.Context, req *mcp.CreateMessageWithToolsRequest) (*mcp.CreateMessageWithToolsResult, error) {
		if len(req.Params.Messages) != 1 || len(req.Params.Messages[0].Content) != 1 {
			return nil, fmt.Errorf("request %+v", req.Params)
		}
		return &mcp.CreateMessageWithToolsResult{Role: "assistant", Model: "fake", Content: []mcp.Content{&mcp.TextContent{Text: "hi there"}}}, nil
	}}, nil)
	if got := callText(t, conn, t.Context(), "sample"); got != "model: hi there (sampling declared with tools)" {
		t.Errorf("with a sampler the server saw %q", got)
	}
}

// serverLogs collects the events a connection emits, for a test to wait on.
type serverLogs chan events.Event

func (c serverLogs) emit(e events.Event) { c <- e } // the buffer outlasts any test's events

// next waits for the next event, which must be a ServerLog.
func (c serverLogs) next(t *testing.T) events.ServerLog {
	t.Helper()
	select {
	case e := <-c:
		l, ok := e.(events.ServerLog)
		if !ok {
			t.Fatalf("event %v, want a server log", e)
		}
		return l
	case <-time.After(10 * time.Second):
		t.Fatal("no server log event")
	}
	return events.ServerLog{}
}

// A server's log message becomes one events.ServerLog with its MCP level,
// logger and text, and is not also logged: the runtime's log renders the
// event.
func TestServerLogsBecomeEvents(t *testing.T) {
	recs := &records{}
	got := make(serverLogs, 16)
	conn, err := testDial(t.Context(), Options{
		Server:    config.Server{Name: "f", Type: config.TypeLocal, Command: []string{"unused"}, Enabled: true},
		Transport: featureServer(t, nil),
		Logger:    slog.New(recs),
		Emit:      got.emit,
	})
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	t.Cleanup(conn.Close)
	callText(t, conn, t.Context(), "log")
	// Notifications are handled apart from the result: wait for it.
	e := got.next(t)
	if e.Server != "f" || e.Level != "warning" || e.Logger != "disk" || e.Text != "almost full" {
		t.Errorf("event %+v, want f's warning from disk: almost full", e)
	}
	if rec, ok := recs.find("server log"); ok {
		t.Errorf("the server's log message was logged as well as emitted: %v", rec)
	}
}

// A call's reports reach its callback while it runs, in order, up to the
// last one (reports that arrive while the callback is busy are coalesced
// to the newest, so the first two may be one).
func TestProgressReachesTheCall(t *testing.T) {
	delivered := make(chan struct{})
	conn := dialFeatures(t, Features{}, nil, delivered)
	var mu sync.Mutex
	var got []tools.Progress
	ctx := tools.WithProgress(t.Context(), func(p tools.Progress) {
		mu.Lock()
		got = append(got, p)
		if p.Progress == 3 {
			close(delivered)
		}
		mu.Unlock()
	})
	if res := callText(t, conn, ctx, "progress"); res != "done" {
		t.Fatalf("progress call: %s", res)
	}
	mu.Lock()
	defer mu.Unlock()
	n := len(got)
	if n == 0 || got[n-1].Progress != 3 || got[n-1].Total != 3 || got[0].Message != "step" {
		t.Fatalf("progress = %+v, want reports up to 3/3", got)
	}
	for i := 1; i < n; i++ {
		if got[i].Progress <= got[i-1].Progress {
			t.Errorf("progress = %+v, want it in the order sent", got)
		}
	}
	// A call without a callback carries a token of its own too: its
	// reports reach no other call's callback.
	callText(t, conn, t.Context(), "progress")
	if len(got) != n {
		t.Errorf("a call without a callback delivered progress")
	}
}

func TestRoots(t *testing.T) {
	conn := dialFeatures(t, Features{Roots: []*mcp.Root{{URI: "file:///work/a", Name: "a"}, {URI: "file:///work/b"}}}, nil)
	if got := callText(t, conn, t.Context(), "roots"); got != "file:///work/a,file:///work/b" {
		t.Errorf("roots = %q", got)
	}
}

// A server's log messages are scrubbed of its secrets, like its stderr,
// before they become events.
func TestServerLogsAreRedacted(t *testing.T) {
	got := make(serverLogs, 16)
	conn, err := testDial(t.Context(), Options{
		// The log tool logs "almost full": make that a secret of the server.
		Server: config.Server{Name: "f", Type: config.TypeLocal, Command: []string{"unused"}, Enabled: true,
			Env: map[string]string{"DISK_TOKEN": "almost full"}},
		Transport: featureServer(t, nil),
		Emit:      got.emit,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(conn.Close)
	callText(t, conn, t.Context(), "log")
	e := got.next(t)
	if strings.Contains(e.String(), "almost full") {
		t.Errorf("a secret reached the event: %+v", e)
	}
	if e.Text != redact.Marker {
		t.Errorf("event text %q, want the marker %q", e.Text, redact.Marker)
	}
}

// From protocol 2026-07-28 on a server takes the log level of a request
// from the request: the calls carry it, so its logs still arrive.
func TestServerLogsOnLatestProtocol(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "latest", Version: "1"},
		&mcp.ServerOptions{Capabilities: &mcp.ServerCapabilities{Logging: &mcp.LoggingCapabilities{}}})
	srv.AddTool(&mcp.Tool{Name: "log", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		err := req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "info", Data: "hello from the latest"})
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "logged"}}}, err
	})
	ct := serveInMemory(t, srv)
	got := make(serverLogs, 16)
	conn, err := testDial(t.Context(), Options{
		Server:    config.Server{Name: "l", Type: config.TypeLocal, Command: []string{"unused"}, Enabled: true},
		Transport: ct, Emit: got.emit,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(conn.Close)
	callText(t, conn, t.Context(), "log")
	if e := got.next(t); e.Text != "hello from the latest" {
		t.Errorf("on protocol %s the event says %q", conn.cs.InitializeResult().ProtocolVersion, e.Text)
	}
}
