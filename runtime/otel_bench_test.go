package runtime

import (
	"context"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/openprogram/mcpvisor/config"
	"github.com/openprogram/mcpvisor/internal/exampleserver"
)

// BenchmarkCallToolOTel is what OpenTelemetry costs a call, on the
// in-memory example server: direct (a go-sdk ClientSession) against
// runtime (no provider: the figure BenchmarkCallTool's pair gives, one nil
// check more than before OpenTelemetry), then runtime against noop (the
// API's no-op providers: the instrumentation's own work, a span started
// and ended, the trace context injected into _meta, the metrics' attribute
// set) and against sdk (the SDK recording every span and metric, as a
// host that exports does). The four sides run by turns,
// MCPVISOR_BENCH_ROUNDS rounds (interleave), as BenchmarkCallTool's do.
// `make bench` prints the three ratios.
func BenchmarkCallToolOTel(b *testing.B) {
	args := map[string]any{"text": "hello"}
	server := exampleserver.NewServer(exampleserver.Options{})
	inMemory := func(config.Server) mcp.Transport {
		ct, st := mcp.NewInMemoryTransports()
		if _, err := server.Connect(context.Background(), st, nil); err != nil {
			b.Fatal(err)
		}
		return ct
	}
	srv := config.Server{Name: "ex", Type: config.TypeLocal, Command: []string{"in-memory"}, Enabled: true}
	direct := connectDirect(b, inMemory(srv))
	plain := startBench(b, Options{transport: inMemory}, srv)
	noop := startBench(b, Options{transport: inMemory, TracerProvider: tracenoop.NewTracerProvider(), MeterProvider: metricnoop.NewMeterProvider()}, srv)
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(discardSpans{}))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	b.Cleanup(func() { _ = tp.Shutdown(context.Background()); _ = mp.Shutdown(context.Background()) })
	recorded := startBench(b, Options{transport: inMemory, TracerProvider: tp, MeterProvider: mp}, srv)
	call := func(rt *Runtime) func(context.Context) error {
		return func(ctx context.Context) error { _, err := rt.CallTool(ctx, "ex__echo", args); return err }
	}
	b.Run("inmemory", func(b *testing.B) {
		interleave(b, []side{
			{"direct", func(b *testing.B) {
				measure(b, 0, func(ctx context.Context) error {
					_, err := direct.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: args})
					return err
				})
			}},
			{"runtime", func(b *testing.B) { measure(b, 0, call(plain)) }},
			{"noop", func(b *testing.B) { measure(b, 0, call(noop)) }},
			{"sdk", func(b *testing.B) { measure(b, 0, call(recorded)) }},
		})
	})
}

// discardSpans is a span processor that drops every ended span, so that
// the SDK records spans without memory growing over b.N calls.
type discardSpans struct{}

func (discardSpans) OnStart(context.Context, sdktrace.ReadWriteSpan) {}
func (discardSpans) OnEnd(sdktrace.ReadOnlySpan)                     {}
func (discardSpans) Shutdown(context.Context) error                  { return nil }
func (discardSpans) ForceFlush(context.Context) error                { return nil }
