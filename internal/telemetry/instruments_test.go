package telemetry

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/baggage"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/openprogram/mcpvisor/events"
)

// refusingMeter is the SDK's meter, but it refuses every Int64Counter
// (returning no instrument at all, which the API allows a meter to do).
type refusingMeter struct{ metric.Meter }

func (refusingMeter) Int64Counter(string, ...metric.Int64CounterOption) (metric.Int64Counter, error) {
	return nil, errors.New("refused")
}

type refusingProvider struct{ metric.MeterProvider }

func (p refusingProvider) Meter(name string, opts ...metric.MeterOption) metric.Meter {
	return refusingMeter{p.MeterProvider.Meter(name, opts...)}
}

// A meter that refuses some instruments does not make New fail (so nor
// the runtime's Start): the refusal is logged, the refused instruments
// record nothing without panicking, the rest work, and Close still
// unregisters the servers gauge.
func TestNewWithRefusedInstruments(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
	var logs bytes.Buffer
	tel := New(Options{
		MeterProvider: refusingProvider{mp},
		States:        func(yield func(string, int64)) { yield("ready", 2) },
		Logger:        slog.New(slog.NewTextHandler(&logs, nil)),
	})
	if tel == nil {
		t.Fatal("New returned no Telemetry")
	}
	if !strings.Contains(logs.String(), MetricCalls) || !strings.Contains(logs.String(), "refused") {
		t.Errorf("the refused instruments were not logged: %q", logs.String())
	}
	_, call := tel.Start(context.Background(), Op{Method: MethodToolsCall, Target: "t"})
	call.End(nil, "", false)
	tel.Observe(events.LoginCompleted{Header: events.Header{Server: "s"}})

	names := collect(t, reader)
	if names[MetricDuration] == 0 || names[MetricServers] == 0 {
		t.Errorf("the instruments the meter made recorded nothing: %v", names)
	}
	if err := tel.Close(); err != nil {
		t.Fatal(err)
	}
	if n := collect(t, reader)[MetricServers]; n != 0 {
		t.Errorf("servers gauge observed after Close: %d points", n)
	}
}

// collect counts each metric's data points in one collection.
func collect(t *testing.T, reader *sdkmetric.ManualReader) map[string]int {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	n := map[string]int{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			switch d := m.Data.(type) {
			case metricdata.Gauge[int64]:
				n[m.Name] += len(d.DataPoints)
			case metricdata.Histogram[float64]:
				n[m.Name] += len(d.DataPoints)
			case metricdata.Sum[int64]:
				n[m.Name] += len(d.DataPoints)
			}
		}
	}
	return n
}

// The default propagator writes the trace context and never the host's
// baggage, which would go to every server.
func TestDefaultPropagatorSendsNoBaggage(t *testing.T) {
	tp := sdktrace.NewTracerProvider()
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	tel := New(Options{TracerProvider: tp})
	m, err := baggage.NewMember("user", "alice")
	if err != nil {
		t.Fatal(err)
	}
	bag, err := baggage.New(m)
	if err != nil {
		t.Fatal(err)
	}
	ctx, call := tel.Start(baggage.ContextWithBaggage(context.Background(), bag), Op{Method: MethodToolsCall, Target: "t"})
	defer call.End(nil, "", false)
	carrier := propagation.MapCarrier{}
	tel.Propagator().Inject(ctx, carrier)
	if carrier.Get("traceparent") == "" {
		t.Errorf("no traceparent in %v", carrier)
	}
	if b := carrier.Get("baggage"); b != "" {
		t.Errorf("baggage %q sent by default", b)
	}
}

// durationBuckets is a fresh slice each call.
func TestDurationBucketsFresh(t *testing.T) {
	b := durationBuckets()
	b[0] = 99
	if durationBuckets()[0] == 99 {
		t.Error("durationBuckets shares its slice")
	}
}
