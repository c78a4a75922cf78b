package telemetry

import (
	"context"
	"log/slog"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"

	"github.com/openprogram/mcpvisor/events"
	"github.com/openprogram/mcpvisor/status"
)

// Metric names: the semantic conventions' for the call duration, ours for
// the rest.
const (
	MetricDuration  = "mcp.client.operation.duration"
	MetricCalls     = "mcpvisor.calls"
	MetricErrors    = "mcpvisor.call.errors"
	MetricServers   = "mcpvisor.servers"
	MetricRestarts  = "mcpvisor.server.restarts"
	MetricLogins    = "mcpvisor.logins"
	MetricRefreshes = "mcpvisor.token.refreshes"
)

// durationBuckets are the semantic conventions' advice for
// mcp.client.operation.duration, in seconds: a fresh slice each call, so
// that no caller can change the next one's.
func durationBuckets() []float64 {
	return []float64{0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300}
}

// instruments are the runtime's metrics.
type instruments struct {
	calls, errors, restarts, logins, refreshes metric.Int64Counter
	duration                                   metric.Float64Histogram
	reg                                        metric.Registration // the servers gauge's callback; nil if none
}

// newInstruments makes the runtime's metrics on meter. An instrument the
// meter refuses does not fail the runtime's Start: the error is logged
// and that instrument records nothing (the API's instruments returned
// with an error are usable; a nil one is replaced by a no-op).
func newInstruments(meter metric.Meter, states func(yield func(string, int64)), logger *slog.Logger) *instruments {
	m := &instruments{}
	fail := func(name string, err error) {
		logger.Warn("telemetry: an instrument is unavailable; it records nothing", "metric", name, "error", err)
	}
	counter := func(name, unit, desc string) metric.Int64Counter {
		c, err := meter.Int64Counter(name, metric.WithUnit(unit), metric.WithDescription(desc))
		if err != nil {
			fail(name, err)
		}
		if c == nil {
			return noop.Int64Counter{}
		}
		return c
	}
	m.calls = counter(MetricCalls, "{operation}",
		"Tool calls, resource reads and prompt gets, by method, server, tool or prompt and outcome.")
	m.errors = counter(MetricErrors, "{operation}",
		"Operations that failed or whose tool result had isError, by error.type.")
	m.restarts = counter(MetricRestarts, "{restart}",
		"Server restarts (a move into starting from ready, backoff, failed or needs_auth), by server.")
	m.logins = counter(MetricLogins, "{login}",
		"OAuth logins that ended, by server and outcome (completed, failed).")
	m.refreshes = counter(MetricRefreshes, "{refresh}",
		"Background OAuth token refreshes, by server and outcome (refreshed, refused).")
	var err error
	m.duration, err = meter.Float64Histogram(MetricDuration, metric.WithUnit("s"),
		metric.WithDescription("Duration of an MCP request as the client sees it."),
		metric.WithExplicitBucketBoundaries(durationBuckets()...))
	if err != nil {
		fail(MetricDuration, err)
	}
	if m.duration == nil {
		m.duration = noop.Float64Histogram{}
	}
	if states != nil {
		m.reg = registerServers(meter, states, fail)
	}
	return m
}

// registerServers makes the servers gauge and registers its callback; nil
// if the meter refuses either (then there is nothing to unregister).
func registerServers(meter metric.Meter, states func(yield func(string, int64)), fail func(string, error)) metric.Registration {
	gauge, err := meter.Int64ObservableGauge(MetricServers, metric.WithUnit("{server}"),
		metric.WithDescription("Configured servers in each state."))
	if err != nil {
		fail(MetricServers, err)
	}
	if gauge == nil {
		return nil
	}
	reg, err := meter.RegisterCallback(func(_ context.Context, o metric.Observer) error {
		states(func(state string, n int64) {
			o.ObserveInt64(gauge, n, metric.WithAttributes(KeyState.String(state)))
		})
		return nil
	}, gauge)
	if err != nil {
		fail(MetricServers, err)
		if reg != nil {
			_ = reg.Unregister()
		}
		return nil
	}
	return reg
}

// Observe counts what e says about restarts, logins and token refreshes.
// The runtime calls it with every event of its stream as the status board
// saw it (a StateChanged with its From filled in), synchronously: it
// must stay an increment.
func (t *Telemetry) Observe(e events.Event) {
	if t == nil || t.m == nil {
		return
	}
	ctx, m := context.Background(), t.m
	switch e := e.(type) {
	case events.StateChanged:
		if status.State(e.To) == status.Starting && status.RestartedFrom(status.State(e.From)) {
			m.restarts.Add(ctx, 1, metric.WithAttributes(KeyServer.String(e.Server)))
		}
	case events.LoginCompleted:
		m.logins.Add(ctx, 1, outcome(e.Server, "completed"))
	case events.LoginFailed:
		m.logins.Add(ctx, 1, outcome(e.Server, "failed"))
	case events.TokenRefreshed:
		m.refreshes.Add(ctx, 1, outcome(e.Server, "refreshed"))
	case events.RefreshRefused:
		m.refreshes.Add(ctx, 1, outcome(e.Server, "refused"))
	}
}

func outcome(server, outcome string) metric.AddOption {
	return metric.WithAttributes(KeyServer.String(server), KeyOutcome.String(outcome))
}
