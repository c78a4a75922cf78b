package telemetry

import (
	"context"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
)

// The MCP methods an Op is.
const (
	MethodToolsCall     = "tools/call"
	MethodResourcesRead = "resources/read"
	MethodPromptsGet    = "prompts/get"
)

// Attribute keys: the OTel semantic conventions' for MCP and GenAI where
// they have one, mcpvisor.* for the runtime's own.
const (
	KeyMethod      = attribute.Key("mcp.method.name")
	KeyProtocol    = attribute.Key("mcp.protocol.version")
	KeyResourceURI = attribute.Key("mcp.resource.uri")
	KeyToolName    = attribute.Key("gen_ai.tool.name")
	KeyPromptName  = attribute.Key("gen_ai.prompt.name")
	KeyOperation   = attribute.Key("gen_ai.operation.name")
	KeyErrorType   = attribute.Key("error.type")
	KeyServer      = attribute.Key("mcpvisor.server.name")
	KeyRegistry    = attribute.Key("mcpvisor.registry.name")
	KeyOutcome     = attribute.Key("mcpvisor.outcome")
	KeyErrorKind   = attribute.Key("mcpvisor.error.kind")
	KeyIsError     = attribute.Key("mcpvisor.tool.is_error")
	KeyState       = attribute.Key("mcpvisor.server.state")
)

// Outcomes (KeyOutcome) and the error type of a tool result with isError.
const (
	OutcomeOK        = "ok"
	OutcomeToolError = "tool_error" // the call worked; the tool said it failed
	OutcomeError     = "error"      // the call failed
)

// Op is one operation as the caller asked for it.
type Op struct {
	// Method is MethodToolsCall, MethodResourcesRead or MethodPromptsGet.
	Method string
	// Target is the tool's or prompt's name on its server, or the name
	// the caller asked for when no server has it; "" for a read.
	Target string
	// Registry is the registry name ("{server}__{tool}") of a tool or
	// prompt the registry holds; "" for a read or an unknown name. Only
	// a known one goes into metrics (it is bounded by the registry).
	Registry string
	// Server is the configured server's name; "" when unknown.
	Server string
	// Protocol is the session's negotiated MCP version, if it has one.
	Protocol string
	// URI is a read's resource URI. Only its scheme, host and path go
	// into the span (a query may carry a token), and never into metrics.
	URI string
}

// Call is one operation in flight; End ends it.
type Call struct {
	t     *Telemetry
	op    Op
	span  trace.Span // nil without a tracer
	start time.Time
}

// Start begins op: a client span, child of ctx's span, in the returned
// context (which the request's _meta then carries), and its clock.
func (t *Telemetry) Start(ctx context.Context, op Op) (context.Context, *Call) {
	c := &Call{t: t, op: op, start: time.Now()}
	if t.tracer == nil {
		return ctx, c
	}
	target := boundName(op.Target) // a name the caller sent may be of any length
	name := op.Method
	if target != "" {
		name += " " + target
	}
	attrs := make([]attribute.KeyValue, 0, 8)
	attrs = append(attrs, KeyMethod.String(op.Method))
	switch op.Method {
	case MethodToolsCall:
		attrs = append(attrs, KeyToolName.String(target), KeyOperation.String("execute_tool"))
	case MethodPromptsGet:
		attrs = append(attrs, KeyPromptName.String(target))
	case MethodResourcesRead:
		if u := boundName(spanURI(op.URI)); u != "" {
			attrs = append(attrs, KeyResourceURI.String(u))
		}
	}
	if op.Protocol != "" {
		attrs = append(attrs, KeyProtocol.String(op.Protocol))
	}
	if op.Server != "" {
		attrs = append(attrs, KeyServer.String(op.Server))
	}
	if op.Registry != "" {
		attrs = append(attrs, KeyRegistry.String(op.Registry))
	}
	ctx, c.span = t.tracer.Start(ctx, name, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
	return ctx, c
}

// End ends the operation: err is its error (nil if it worked), kind the
// error's class (ErrorKind's names; "" with no error), isError whether a
// tool's result said it failed. The span gets the outcome and, on
// failure, status Error with the kind as its description: never the
// error's text, which may quote what the server said about the
// arguments.
func (c *Call) End(err error, kind string, isError bool) {
	outcome, errType := OutcomeOK, ""
	switch {
	case err != nil:
		outcome, errType = OutcomeError, kind
	case isError:
		outcome, errType = OutcomeToolError, OutcomeToolError
	}
	if c.span != nil {
		attrs := []attribute.KeyValue{KeyOutcome.String(outcome)}
		if c.op.Method == MethodToolsCall && err == nil {
			attrs = append(attrs, KeyIsError.Bool(isError))
		}
		if errType != "" {
			attrs = append(attrs, KeyErrorType.String(errType))
			c.span.SetStatus(codes.Error, errType)
		}
		if err != nil {
			attrs = append(attrs, KeyErrorKind.String(kind))
		}
		c.span.SetAttributes(attrs...)
		c.span.End()
	}
	if m := c.t.m; m != nil {
		m.record(c.op, outcome, errType, time.Since(c.start))
	}
}

// record adds one operation to the calls, errors and duration metrics,
// with bounded attributes only: the method, the server, a tool or prompt
// the registry holds, the outcome and the error type.
func (m *instruments) record(op Op, outcome, errType string, d time.Duration) {
	attrs := make([]attribute.KeyValue, 0, 6)
	attrs = append(attrs, KeyMethod.String(op.Method), KeyOutcome.String(outcome))
	if op.Server != "" {
		attrs = append(attrs, KeyServer.String(op.Server))
	}
	if op.Registry != "" {
		switch op.Method {
		case MethodToolsCall:
			attrs = append(attrs, KeyToolName.String(op.Target))
		case MethodPromptsGet:
			attrs = append(attrs, KeyPromptName.String(op.Target))
		}
	}
	if errType != "" {
		attrs = append(attrs, KeyErrorType.String(errType))
	}
	if op.Protocol != "" {
		attrs = append(attrs, KeyProtocol.String(op.Protocol))
	}
	set := metric.WithAttributeSet(attribute.NewSet(attrs...))
	ctx := context.Background()
	m.calls.Add(ctx, 1, set)
	m.duration.Record(ctx, d.Seconds(), set)
	if errType != "" {
		m.errors.Add(ctx, 1, set)
	}
}

// MaxName is the most bytes of a tool or prompt name (or a resource URI)
// a span holds; a longer one is cut at a rune boundary and ends with
// TruncatedMark.
const MaxName = 128

// TruncatedMark ends a name boundName cut.
const TruncatedMark = "…"

// boundName is s cut to MaxName bytes (mark included) if longer.
func boundName(s string) string {
	if len(s) <= MaxName {
		return s
	}
	cut := MaxName - len(TruncatedMark)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + TruncatedMark
}

// spanURI is uri without its query, fragment and user info (any of which
// may carry a token), or "" if it does not parse. The path and an opaque
// URI's opaque part stay: they name the resource (see the README).
func spanURI(uri string) string {
	u, err := url.Parse(uri)
	if err != nil {
		return ""
	}
	u.RawQuery, u.ForceQuery, u.Fragment, u.RawFragment, u.User = "", false, "", "", nil
	return strings.TrimSuffix(u.String(), "?")
}
