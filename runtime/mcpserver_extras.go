package runtime

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/openprogram/mcpvisor/events"
	"github.com/openprogram/mcpvisor/prompts"
)

// Completions and server logs through the gateway.

// servedOwner is the server of a resource or template the gateway
// serves, and its URI (template) as the server wrote it.
type servedOwner struct{ server, original string }

// complete answers completion/complete: a prompt argument goes to the
// prompt's server (by its registry name), a template variable to the
// server of the template (by the URI the gateway serves it under). A
// server that offers no completions answers none.
func (m *mirror) complete(ctx context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
	p := req.Params
	if p == nil || p.Ref == nil || p.Argument.Name == "" {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "completion/complete needs a ref and an argument"}
	}
	var ref CompletionRef
	switch p.Ref.Type {
	case "ref/prompt":
		if !m.opts.Tools.allows(p.Ref.Name) {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("completing an argument of prompt %q: %v", p.Ref.Name, prompts.ErrUnknownPrompt)}
		}
		ref.Prompt = p.Ref.Name
	case "ref/resource":
		owners := m.templates.Load()
		if owners == nil {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "unknown resource template " + p.Ref.URI}
		}
		o, ok := (*owners)[p.Ref.URI]
		if !ok {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "unknown resource template " + p.Ref.URI}
		}
		ref.Server, ref.ResourceTemplate = o.server, o.original
	default:
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "unknown completion ref type " + p.Ref.Type}
	}
	var others map[string]string
	if p.Context != nil {
		others = p.Context.Arguments
	}
	c, err := m.rt.Complete(ctx, ref, p.Argument.Name, p.Argument.Value, others)
	switch {
	case errors.Is(err, ErrNotDeclared):
		return &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: []string{}}}, nil
	case errors.Is(err, prompts.ErrUnknownPrompt), errors.Is(err, ErrBadCompletionRef):
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: err.Error()}
	case err != nil:
		return nil, err
	}
	return &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: c.Values, HasMore: c.HasMore, Total: c.Total}}, nil
}

// gatewayLogBuffer is how many server log lines wait for the clients; more are
// dropped (the runtime's own log still has them).
const gatewayLogBuffer = 256

// logSendTimeout bounds the sending of one line to one client; each
// client has its own queue (outboxes), so a slow one delays only itself.
const logSendTimeout = 2 * time.Second

// forwardLogs sends every server log line (MCP log notifications and
// stderr lines, scrubbed and rate-limited as the runtime's log has them)
// to each client that asked for logs (logging/setLevel) at the line's
// level or below. The logger is the server's name, with the server's own
// logger name after a "/" when it gave one; a stderr line is at "info",
// one of a level MCP does not define at "error". Each client's lines go
// through its own queue of 64 (outboxes): a client that stopped reading
// loses its own lines, not the others'.
func (m *mirror) forwardLogs(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case e := <-m.logs:
			params := &mcp.LoggingMessageParams{Level: mcpLogLevel(e.Level), Logger: e.Server, Data: e.Text}
			if e.Logger != "" {
				params.Logger += "/" + e.Logger
			}
			for ss := range m.srv.Sessions() {
				// The SDK sends only to a session that asked for the level.
				m.outbox.post(ctx, ss, func(sctx context.Context) { _ = ss.Log(sctx, params) })
			}
		}
	}
}

func mcpLogLevel(level string) mcp.LoggingLevel {
	switch level {
	case events.LevelStderr:
		return "info"
	case events.LevelUnknown:
		return "error"
	}
	return mcp.LoggingLevel(level)
}
