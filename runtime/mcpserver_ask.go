package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/openprogram/mcpvisor/internal/binding"
	"github.com/openprogram/mcpvisor/internal/mcpconn"
)

// The handlers the upstream sessions get for sampling, elicitation and
// roots: each asks the gateway client the forwarder routes to, else the
// Options handler (local). The ServerRequests limits apply to a request
// passed to a gateway client exactly as to one passed to Options: the
// same per-server, per-kind counters and buckets, checked before the
// client is asked. A client's answer is bounded as the request is (its
// JSON at most ServerRequests.MaxBytes) and checked as the runtime checks
// the host's own answers, and the wait for it ends with the gateway call
// it belongs to. A client on 2026-07-28 is asked through its parked call
// (parkedCall.ask), the same checks applying to its answer.

// The methods of the requests a server asks its client.
const (
	methodSampling = "sampling/createMessage"
	methodElicit   = "elicitation/create"
	methodRoots    = "roots/list"
)

func samplingParams(req *mcp.CreateMessageWithToolsRequest) any { return req.Params }
func elicitParams(req *mcp.ElicitRequest) any                   { return req.Params }

// sampling is the upstream sessions' sampling handler; local is
// Options.Sample adapted (nil: none).
func (f *forwarder) sampling(g *requestGate, local func(context.Context, string, *mcp.CreateMessageWithToolsRequest) (*mcp.CreateMessageWithToolsResult, error)) func(context.Context, string, *mcp.CreateMessageWithToolsRequest) (*mcp.CreateMessageWithToolsResult, error) {
	local = guard(g, methodSampling, samplingParams, local)
	return func(ctx context.Context, server string, req *mcp.CreateMessageWithToolsRequest) (*mcp.CreateMessageWithToolsResult, error) {
		withTools := req.Params != nil && len(req.Params.Tools) > 0
		call := f.route(ctx, server, func(c *mcp.ClientCapabilities) bool {
			return c.Sampling != nil && (!withTools || c.Sampling.Tools != nil)
		})
		if call == nil {
			if local == nil {
				return nil, mcpconn.ErrNoSampling
			}
			return local(ctx, server, req)
		}
		ask := func(ctx context.Context, server string, req *mcp.CreateMessageWithToolsRequest) (*mcp.CreateMessageWithToolsResult, error) {
			// What the host's sampler would refuse is refused before the
			// client is asked, and its answer is checked against it.
			in, err := samplingRequest(server, req.Params)
			if err != nil {
				return nil, err
			}
			out := *req.Params
			out.Meta, out.Metadata = f.scrubMeta(server, out.Meta), f.scrubAny(server, out.Metadata)
			res, err := askCall(ctx, call, &out, (*mcp.ServerSession).CreateMessageWithTools)
			if err != nil {
				return nil, err
			}
			return res, checkSampling(in, res, g.limits.MaxBytes)
		}
		return guard(g, methodSampling, samplingParams, ask)(ctx, server, req)
	}
}

// elicitation is the upstream sessions' elicitation handler; local is
// Options.Elicit adapted (nil: every request is declined).
func (f *forwarder) elicitation(g *requestGate, local func(context.Context, string, *mcp.ElicitRequest) (*mcp.ElicitResult, error)) func(context.Context, string, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	local = guard(g, methodElicit, elicitParams, local)
	return func(ctx context.Context, server string, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		url := req.Params != nil && (req.Params.Mode == "url" || req.Params.Mode == "" && req.Params.URL != "")
		call := f.route(ctx, server, func(c *mcp.ClientCapabilities) bool {
			if c.Elicitation == nil {
				return false
			}
			if url {
				return c.Elicitation.URL != nil
			}
			// Neither mode said is form, as before 2025-11-25.
			return c.Elicitation.Form != nil || c.Elicitation.URL == nil
		})
		if call == nil {
			if local == nil {
				return &mcp.ElicitResult{Action: "decline"}, nil
			}
			return local(ctx, server, req)
		}
		ask := func(ctx context.Context, server string, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			if req.Params == nil {
				return nil, errors.New("elicitation request without parameters")
			}
			out := *req.Params
			out.Meta = f.scrubMeta(server, out.Meta)
			res, err := askCall(ctx, call, &out, (*mcp.ServerSession).Elicit)
			if err != nil {
				return nil, err
			}
			return checkElicit(res, g.limits.MaxBytes)
		}
		return guard(g, methodElicit, elicitParams, ask)(ctx, server, req)
	}
}

// roots is the upstream sessions' roots/list handler: the routed gateway
// client's roots, else static (Options.Roots). Asking the client counts
// against the server's limits (kind roots/list); a request over them gets
// static instead, so a server re-listing in a loop floods no client.
func (f *forwarder) roots(g *requestGate, static []*mcp.Root) func(context.Context, string) ([]*mcp.Root, error) {
	return func(ctx context.Context, server string) ([]*mcp.Root, error) {
		call := f.route(ctx, server, rootsDeclared)
		if call == nil {
			return static, nil
		}
		release, err := g.admit(server, methodRoots, nil)
		if err != nil {
			return static, nil
		}
		defer release()
		res, err := askCall(ctx, call, &mcp.ListRootsParams{}, (*mcp.ServerSession).ListRoots)
		if err != nil {
			return nil, err
		}
		if err := bounded(res, g.limits.MaxBytes); err != nil {
			return nil, err
		}
		for _, r := range res.Roots {
			if r == nil || r.URI == "" {
				return nil, errBadAnswer("a root without a URI")
			}
		}
		return res.Roots, nil
	}
}

// scrubMeta and scrubAny are the machine-readable parts of a server's
// request to a gateway client (its _meta, sampling's metadata) scrubbed
// of the server's secrets as a tool result's are (its connection's
// scrubber: configured secrets and those the connection learned); nil
// when server has no connection to scrub with. The request's text
// (messages, the elicitation's message and schema) goes as the server
// sent it: it is the question, and the client's user reads it.
func (f *forwarder) scrubMeta(server string, m mcp.Meta) mcp.Meta {
	if len(m) == 0 {
		return nil
	}
	conn := f.conn(server)
	if conn == nil {
		return nil
	}
	return binding.ScrubMeta(conn, m)
}

func (f *forwarder) scrubAny(server string, v any) any {
	if v == nil {
		return nil
	}
	conn := f.conn(server)
	if conn == nil {
		return nil
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	return json.RawMessage(conn.ScrubJSON(raw))
}

// askCall asks call's client params under ctx (the upstream request's):
// through its parked call on 2026-07-28, else with direct (a request of
// the gateway's own to the client). The answer is unchecked.
func askCall[P mcp.InputRequest, R mcp.InputResponse](ctx context.Context, call *gatewayCall, params P, direct func(*mcp.ServerSession, context.Context, P) (R, error)) (R, error) {
	var zero R
	if call.park != nil {
		answer, err := call.park.ask(ctx, params)
		if err != nil {
			return zero, err
		}
		res, ok := answer.(R)
		if !ok {
			return zero, errBadAnswer(fmt.Sprintf("a %T answering a %T", answer, params))
		}
		return res, nil
	}
	ctx, cancel := within(ctx, call.ctx)
	defer cancel()
	res, err := direct(call.session, ctx, params)
	if err != nil {
		return zero, clientError(ctx, err)
	}
	return res, nil
}

// errBadAnswer is a gateway client's answer the runtime does not pass on.
func errBadAnswer(why string) error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "the MCP host's client gave an answer it refused: " + why}
}

// bounded refuses an answer whose JSON is over max bytes (max ≤ 0: no
// bound).
func bounded(res any, max int) error {
	if max <= 0 {
		return nil
	}
	raw, err := json.Marshal(res)
	if err != nil {
		return errBadAnswer("it does not encode as JSON")
	}
	if len(raw) > max {
		return errBadAnswer(fmt.Sprintf("it is %d bytes of JSON, over the limit of %d", len(raw), max))
	}
	return nil
}

// maxClientErrorBytes bounds the text of a gateway client's error passed
// to the server.
const maxClientErrorBytes = 1 << 10

// clientError is what the server gets when the gateway client failed to
// answer: the end of ctx as such, a JSON-RPC error with its code and its
// message cut short, anything else as an internal error.
func clientError(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("asking the MCP host's client: %w", context.Cause(ctx))
	}
	var rpc *jsonrpc.Error
	if errors.As(err, &rpc) {
		return &jsonrpc.Error{Code: rpc.Code, Message: cut(rpc.Message, maxClientErrorBytes)}
	}
	return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: cut("asking the MCP host's client: "+err.Error(), maxClientErrorBytes)}
}

func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// checkSampling checks a gateway client's sampling answer to in as the
// host's own (samplingResult): an assistant message of text, image or audio
// blocks and tool uses that the request allows, each of an offered tool
// with an ID of its own and an object input; bounded like the request.
func checkSampling(in SamplingRequest, res *mcp.CreateMessageWithToolsResult, max int) error {
	if res == nil {
		return errBadAnswer("no result")
	}
	if err := bounded(res, max); err != nil {
		return err
	}
	if res.Role != "assistant" {
		return errBadAnswer(fmt.Sprintf("role %.20q, not assistant", res.Role))
	}
	var out SamplingResult
	for _, c := range res.Content {
		switch c := c.(type) {
		case *mcp.TextContent, *mcp.ImageContent, *mcp.AudioContent:
		case *mcp.ToolUseContent:
			out.ToolUses = append(out.ToolUses, SamplingToolUse{ID: c.ID, Name: c.Name, Input: toolInput(c.Input)})
		default:
			return errBadAnswer(fmt.Sprintf("a %T block in the model's answer", c))
		}
	}
	_, err := samplingResult(in, out)
	return err
}

// checkElicit checks a gateway client's elicitation answer: one of the
// three actions, content only with accept (the SDK then checks it against
// the requested schema), bounded like the request.
func checkElicit(res *mcp.ElicitResult, max int) (*mcp.ElicitResult, error) {
	if res == nil {
		return nil, errBadAnswer("no result")
	}
	switch res.Action {
	case "accept":
	case "decline", "cancel":
		res.Content = nil
	default:
		return nil, errBadAnswer(fmt.Sprintf("action %.20q", res.Action))
	}
	if err := bounded(res, max); err != nil {
		return nil, err
	}
	return res, nil
}
