package mcpconn

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/propagation"
)

// withTraceMeta returns meta with the W3C trace context of ctx's span
// (traceparent, tracestate, and baggage if the host opted in, as the propagator writes them) added,
// as the MCP OpenTelemetry convention (SEP-414) carries it in a request's
// _meta. Without a propagator (no TracerProvider) it returns meta as it
// is: one nil check, so that a runtime without tracing pays nothing.
// meta may be nil; a fresh one is made only when there is something to
// put in it.
func (c *Conn) withTraceMeta(ctx context.Context, meta mcp.Meta) mcp.Meta {
	if c.propagator == nil {
		return meta
	}
	carrier := metaCarrier{meta: meta}
	c.propagator.Inject(ctx, &carrier)
	return carrier.meta
}

// metaCarrier is a request's _meta as a propagation.TextMapCarrier. Its
// map is made on the first Set, so that a ctx without a span adds no
// empty _meta to a request that had none.
type metaCarrier struct{ meta mcp.Meta }

var _ propagation.TextMapCarrier = (*metaCarrier)(nil)

// Get returns the string value of key, "" if absent or not a string.
func (m *metaCarrier) Get(key string) string {
	s, _ := m.meta[key].(string)
	return s
}

// Set stores value under key.
func (m *metaCarrier) Set(key, value string) {
	if m.meta == nil {
		m.meta = mcp.Meta{}
	}
	m.meta[key] = value
}

// Keys lists the keys of the _meta.
func (m *metaCarrier) Keys() []string {
	keys := make([]string, 0, len(m.meta))
	for k := range m.meta {
		keys = append(keys, k)
	}
	return keys
}
