// Package telemetry is the runtime's OpenTelemetry instrumentation, on the
// OTel API alone (the host brings the SDK): a client span per tool call,
// resource read and prompt get, following the MCP semantic conventions,
// and the runtime's metrics. A Runtime without a TracerProvider or a
// MeterProvider holds no Telemetry at all (a nil *Telemetry), so that its
// calls pay one nil check and nothing else.
package telemetry

import (
	"fmt"
	"log/slog"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// ScopeName is the instrumentation scope of every tracer and meter here.
const ScopeName = "github.com/openprogram/mcpvisor"

// Options configure New.
type Options struct {
	// TracerProvider makes the spans; nil: none.
	TracerProvider trace.TracerProvider
	// MeterProvider makes the metrics; nil: none.
	MeterProvider metric.MeterProvider
	// Propagator writes the trace context into requests' _meta. Nil with
	// a TracerProvider: W3C TraceContext only (baggage would go to every
	// server, third parties' included; a host opts in with its own).
	Propagator propagation.TextMapPropagator
	// Logger reports an instrument the meter refused; nil: discarded.
	Logger *slog.Logger
	// Version is the instrumentation scope's version (the module's).
	Version string
	// States reports how many configured servers are in each state, for
	// the servers gauge, at each collection. Nil: no gauge.
	States func(yield func(state string, n int64))
}

// Telemetry makes the spans and records the metrics of one Runtime.
type Telemetry struct {
	tracer     trace.Tracer // nil: no spans
	propagator propagation.TextMapPropagator
	m          *instruments // nil: no metrics
}

// New returns the Telemetry of o, or nil when o has neither provider. It
// does not fail: an instrument the meter refuses is logged and records
// nothing, since metrics are no reason to refuse to run the servers.
func New(o Options) *Telemetry {
	if o.TracerProvider == nil && o.MeterProvider == nil {
		return nil
	}
	t := &Telemetry{}
	if o.TracerProvider != nil {
		t.tracer = o.TracerProvider.Tracer(ScopeName, trace.WithInstrumentationVersion(o.Version))
		t.propagator = o.Propagator
		if t.propagator == nil {
			t.propagator = propagation.TraceContext{}
		}
	}
	if o.MeterProvider != nil {
		logger := o.Logger
		if logger == nil {
			logger = slog.New(slog.DiscardHandler)
		}
		t.m = newInstruments(o.MeterProvider.Meter(ScopeName, metric.WithInstrumentationVersion(o.Version)), o.States, logger)
	}
	return t
}

// Propagator is what writes the trace context into requests' _meta: nil
// without a TracerProvider (nothing is added to any request then).
func (t *Telemetry) Propagator() propagation.TextMapPropagator {
	if t == nil {
		return nil
	}
	return t.propagator
}

// Close unregisters the servers gauge's callback; the providers are the
// host's to shut down.
func (t *Telemetry) Close() error {
	if t == nil || t.m == nil || t.m.reg == nil {
		return nil
	}
	if err := t.m.reg.Unregister(); err != nil {
		return fmt.Errorf("telemetry: unregistering the servers gauge: %w", err)
	}
	return nil
}
