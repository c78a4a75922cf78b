package runtime

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/openprogram/mcpvisor/config"
	"github.com/openprogram/mcpvisor/internal/exampleserver"
)

// seenMeta records the traceparent of each request the in-memory example
// server received, by method.
type seenMeta struct {
	mu   sync.Mutex
	seen map[string][]string
}

func (s *seenMeta) middleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if p, ok := req.GetParams().(interface{ GetMeta() map[string]any }); ok {
			if tp, ok := p.GetMeta()["traceparent"].(string); ok {
				s.mu.Lock()
				s.seen[method] = append(s.seen[method], tp)
				s.mu.Unlock()
			}
		}
		return next(ctx, method, req)
	}
}

func (s *seenMeta) get(method string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.seen[method])
}

// traceparent is the W3C traceparent of a sampled span.
func traceparent(sc trace.SpanContext) string {
	return fmt.Sprintf("00-%s-%s-01", sc.TraceID(), sc.SpanID())
}

// A span per tool call, resource read and prompt get, each a client span
// child of the caller's, with the MCP semconv attributes and ours, error
// spans for failures and isError, nothing of the arguments in any span;
// the server sees each span's traceparent in _meta; the metrics count
// the calls, errors by kind, servers by state and a restart.
func TestOTelSpansAndMetrics(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()); _ = mp.Shutdown(context.Background()) })

	seen := &seenMeta{seen: map[string][]string{}}
	transport := func(config.Server) mcp.Transport {
		srv := exampleserver.NewServer(exampleserver.Options{ProgressTools: true})
		srv.AddReceivingMiddleware(seen.middleware)
		ct, st := mcp.NewInMemoryTransports()
		if _, err := srv.Connect(context.Background(), st, nil); err != nil {
			t.Error(err)
		}
		return ct
	}
	rt := start(t, Options{transport: transport, TracerProvider: tp, MeterProvider: mp}, memServer("ex"))
	st := rt.waitReady(t, "ex")
	rt.awaitCatalog(t, "ex", "the prompts", func() bool { return len(rt.Prompts()) > 0 })

	ctx, parent := tp.Tracer("test").Start(context.Background(), "host")
	res, err := rt.CallTool(ctx, "ex__meta", map[string]any{})
	if err != nil {
		t.Fatal(err)
	}
	var meta map[string]any
	if err := json.Unmarshal([]byte(res.Content[0].Text), &meta); err != nil {
		t.Fatalf("meta tool answered %q: %v", res.Content[0].Text, err)
	}
	if res, err := rt.CallTool(ctx, "ex__fail", map[string]any{}); err != nil || !res.IsError {
		t.Fatalf("fail = %+v, %v; want a result with isError", res, err)
	}
	if _, err := rt.CallTool(ctx, "ex__echo", map[string]any{"text": marker}); err != nil {
		t.Fatal(err)
	}
	if _, err := rt.CallTool(ctx, "ex__nope", map[string]any{"text": marker}); err == nil {
		t.Fatal("an unknown tool was called")
	}
	if _, err := rt.ReadResource(ctx, "ex", "demo://readme?token="+marker); err == nil {
		t.Fatal("a read of an unknown resource worked")
	}
	if _, err := rt.ReadResource(ctx, "ex", "demo://readme"); err != nil {
		t.Fatal(err)
	}
	if _, err := rt.GetPrompt(ctx, "ex__greet", map[string]string{"name": marker}); err != nil {
		t.Fatal(err)
	}
	parent.End()

	spans := map[string][]sdktrace.ReadOnlySpan{}
	for _, s := range rec.Ended() {
		spans[s.Name()] = append(spans[s.Name()], s)
		if s.Name() == "host" {
			continue
		}
		if s.Parent().SpanID() != parent.SpanContext().SpanID() || s.SpanContext().TraceID() != parent.SpanContext().TraceID() {
			t.Errorf("span %q: parent %v, want the caller's span %v", s.Name(), s.Parent(), parent.SpanContext())
		}
		if s.SpanKind() != trace.SpanKindClient {
			t.Errorf("span %q: kind %v, want client", s.Name(), s.SpanKind())
		}
		for _, a := range s.Attributes() {
			if strings.Contains(a.Value.Emit(), marker) {
				t.Errorf("span %q: attribute %s holds the arguments' marker", s.Name(), a.Key)
			}
		}
	}
	one := func(name string) sdktrace.ReadOnlySpan {
		t.Helper()
		if len(spans[name]) != 1 {
			t.Fatalf("%d spans %q, want 1; all: %v", len(spans[name]), name, spanNames(rec.Ended()))
		}
		return spans[name][0]
	}
	call := one("tools/call meta")
	wantAttrs(t, call, map[string]string{
		"mcp.method.name": "tools/call", "gen_ai.tool.name": "meta", "gen_ai.operation.name": "execute_tool",
		"mcp.protocol.version": st.ProtocolVersion, "mcpvisor.server.name": "ex", "mcpvisor.registry.name": "ex__meta",
		"mcpvisor.outcome": "ok", "mcpvisor.tool.is_error": "false",
	})
	if meta["traceparent"] != traceparent(call.SpanContext()) {
		t.Errorf("the server saw traceparent %v, want the call span's %s", meta["traceparent"], traceparent(call.SpanContext()))
	}
	if call.Status().Code == codes.Error {
		t.Errorf("meta span status %v", call.Status())
	}
	fail := one("tools/call fail")
	wantAttrs(t, fail, map[string]string{"mcpvisor.outcome": "tool_error", "mcpvisor.tool.is_error": "true", "error.type": "tool_error"})
	if fail.Status().Code != codes.Error {
		t.Errorf("fail span status %v, want Error", fail.Status())
	}
	unknown := one("tools/call ex__nope")
	wantAttrs(t, unknown, map[string]string{"mcpvisor.outcome": "error", "mcpvisor.error.kind": "unknown_tool", "error.type": "unknown_tool"})
	if unknown.Status().Code != codes.Error || unknown.Status().Description != "unknown_tool" {
		t.Errorf("unknown tool span status %v, want Error unknown_tool", unknown.Status())
	}
	reads := spans["resources/read"]
	if len(reads) != 2 {
		t.Fatalf("%d read spans, want 2", len(reads))
	}
	wantAttrs(t, reads[0], map[string]string{"mcp.resource.uri": "demo://readme", "mcpvisor.outcome": "error", "mcpvisor.error.kind": "server_error"})
	wantAttrs(t, reads[1], map[string]string{"mcp.resource.uri": "demo://readme", "mcpvisor.outcome": "ok", "mcpvisor.server.name": "ex"})
	if got, want := seen.get("resources/read"), []string{traceparent(reads[0].SpanContext()), traceparent(reads[1].SpanContext())}; !slices.Equal(got, want) {
		t.Errorf("the server saw reads with traceparent %v, want %v", got, want)
	}
	prompt := one("prompts/get greet")
	wantAttrs(t, prompt, map[string]string{"gen_ai.prompt.name": "greet", "mcpvisor.registry.name": "ex__greet", "mcpvisor.outcome": "ok"})
	if got := seen.get("prompts/get"); !slices.Equal(got, []string{traceparent(prompt.SpanContext())}) {
		t.Errorf("the server saw prompts/get with traceparent %v, want the span's %s", got, traceparent(prompt.SpanContext()))
	}

	if _, err := rt.RestartServer(context.Background(), "ex"); err != nil {
		t.Fatal(err)
	}
	rt.waitReady(t, "ex")
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	sums := sumsByAttr(rm)
	for key, want := range map[string]int64{
		"mcpvisor.calls mcp.method.name=tools/call":                4,
		"mcpvisor.calls mcp.method.name=resources/read":            2,
		"mcpvisor.calls mcp.method.name=prompts/get":               1,
		"mcpvisor.call.errors error.type=tool_error":               1,
		"mcpvisor.call.errors error.type=unknown_tool":             1,
		"mcpvisor.call.errors error.type=server_error":             1,
		"mcpvisor.server.restarts mcpvisor.server.name=ex":         1,
		"mcpvisor.servers mcpvisor.server.state=ready":             1,
		"mcp.client.operation.duration mcp.method.name=tools/call": 4,
	} {
		if sums[key] != want {
			t.Errorf("%s = %d, want %d; all: %v", key, sums[key], want, sums)
		}
	}
	for key := range sums {
		if strings.Contains(key, marker) || strings.Contains(key, "ex__nope") {
			t.Errorf("a metric attribute holds the caller's input: %s", key)
		}
	}
}

func spanNames(spans []sdktrace.ReadOnlySpan) []string {
	var out []string
	for _, s := range spans {
		out = append(out, s.Name())
	}
	return out
}

// wantAttrs checks that span has each attribute with its value.
func wantAttrs(t *testing.T, span sdktrace.ReadOnlySpan, want map[string]string) {
	t.Helper()
	got := map[string]string{}
	for _, a := range span.Attributes() {
		got[string(a.Key)] = a.Value.Emit()
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("span %q: %s = %q, want %q (all: %v)", span.Name(), k, got[k], v, got)
		}
	}
}

// sumsByAttr adds up, for each metric and each of its data points'
// attributes "key=value", the points' sums (counters, gauges) or counts
// (histograms): "mcpvisor.calls mcp.method.name=tools/call" → 4.
func sumsByAttr(rm metricdata.ResourceMetrics) map[string]int64 {
	out := map[string]int64{}
	add := func(name string, attrs attribute.Set, n int64) {
		for _, kv := range attrs.ToSlice() {
			out[name+" "+string(kv.Key)+"="+kv.Value.Emit()] += n
		}
	}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			switch d := m.Data.(type) {
			case metricdata.Sum[int64]:
				for _, p := range d.DataPoints {
					add(m.Name, p.Attributes, p.Value)
				}
			case metricdata.Gauge[int64]:
				for _, p := range d.DataPoints {
					add(m.Name, p.Attributes, p.Value)
				}
			case metricdata.Histogram[float64]:
				for _, p := range d.DataPoints {
					add(m.Name, p.Attributes, int64(p.Count))
				}
			}
		}
	}
	return out
}
