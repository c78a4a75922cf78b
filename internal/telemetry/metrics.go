package telemetry

import (
	"context"
	"errors"

	"go.opentelemetry.io/otel/metric"

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
// mcp.client.operation.duration, in seconds.
var durationBuckets = []float64{0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300}

// instruments are the runtime's metrics.
type instruments struct {
	calls, errors, restarts, logins, refreshes metric.Int64Counter
	duration                                   metric.Float64Histogram
	reg                                        metric.Registration // the servers gauge's callback; nil if none
}

func newInstruments(meter metric.Meter, states func(yield func(string, int64))) (*instruments, error) {
	m := &instruments{}
	var errs [7]error
	m.calls, errs[0] = meter.Int64Counter(MetricCalls, metric.WithUnit("{operation}"),
		metric.WithDescription("Tool calls, resource reads and prompt gets, by method, server, tool or prompt and outcome."))
	m.errors, errs[1] = meter.Int64Counter(MetricErrors, metric.WithUnit("{operation}"),
		metric.WithDescription("Operations that failed or whose tool result had isError, by error.type."))
	m.duration, errs[2] = meter.Float64Histogram(MetricDuration, metric.WithUnit("s"),
		metric.WithDescription("Duration of an MCP request as the client sees it."),
		metric.WithExplicitBucketBoundaries(durationBuckets...))
	m.restarts, errs[3] = meter.Int64Counter(MetricRestarts, metric.WithUnit("{restart}"),
		metric.WithDescription("Server restarts (a move into starting from ready, backoff, failed or needs_auth), by server."))
	m.logins, errs[4] = meter.Int64Counter(MetricLogins, metric.WithUnit("{login}"),
		metric.WithDescription("OAuth logins that ended, by server and outcome (completed, failed)."))
	m.refreshes, errs[5] = meter.Int64Counter(MetricRefreshes, metric.WithUnit("{refresh}"),
		metric.WithDescription("Background OAuth token refreshes, by server and outcome (refreshed, refused)."))
	if states != nil {
		var gauge metric.Int64ObservableGauge
		gauge, errs[6] = meter.Int64ObservableGauge(MetricServers, metric.WithUnit("{server}"),
			metric.WithDescription("Configured servers in each state."))
		if errs[6] == nil {
			m.reg, errs[6] = meter.RegisterCallback(func(_ context.Context, o metric.Observer) error {
				states(func(state string, n int64) {
					o.ObserveInt64(gauge, n, metric.WithAttributes(KeyState.String(state)))
				})
				return nil
			}, gauge)
		}
	}
	if err := errors.Join(errs[:]...); err != nil {
		return nil, err
	}
	return m, nil
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
