package runtime

import (
	"context"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/openprogram/mcpvisor/internal/mcpconn"
)

// sameClient is the benchmarks' "same" side: a direct go-sdk client
// configured as the runtime configures its session (internal/mcpconn
// clientOptions with the runtime's default Features), so that
// runtime/same is the cost of our layer alone and same/direct what the
// features the runtime advertises cost the protocol. It declares
// sampling (answered with an error, as the runtime's default does: the
// runtime advertises it anyway) and elicitation (declined), handles list
// changes, logs, progress and resource updates, lists the tools and sets
// the log level at connect when the server logs, and sends per call the runtime's _meta:
// a progress token of its own and, exactly where the runtime's
// perCallLogLevel rule sends it, the log level.
type sameClient struct {
	cs   *mcp.ClientSession
	logs bool // calls carry the log level (perCallLogLevel's rule)
	next atomic.Uint64
}

// connectSame connects a sameClient over t, closed when b ends.
func connectSame(b *testing.B, t mcp.Transport) *sameClient {
	b.Helper()
	noSampling := &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "sampling is not configured in this MCP host"}
	client := mcp.NewClient(&mcp.Implementation{Name: "bench"}, &mcp.ClientOptions{
		CreateMessageWithToolsHandler: func(context.Context, *mcp.CreateMessageWithToolsRequest) (*mcp.CreateMessageWithToolsResult, error) {
			return nil, noSampling
		},
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "decline"}, nil
		},
		ToolListChangedHandler:      func(context.Context, *mcp.ToolListChangedRequest) {},
		PromptListChangedHandler:    func(context.Context, *mcp.PromptListChangedRequest) {},
		ResourceListChangedHandler:  func(context.Context, *mcp.ResourceListChangedRequest) {},
		LoggingMessageHandler:       func(context.Context, *mcp.LoggingMessageRequest) {},
		ProgressNotificationHandler: func(context.Context, *mcp.ProgressNotificationClientRequest) {},
		ResourceUpdatedHandler:      func(context.Context, *mcp.ResourceUpdatedNotificationRequest) {},
	})
	cs, err := client.Connect(context.Background(), t, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cs.Close() })
	// The runtime lists the tools of every session it opens; the SDK
	// then keeps each listed tool and passes it with each call of it
	// (a context value, for its Streamable HTTP headers).
	if _, err := cs.ListTools(context.Background(), nil); err != nil {
		b.Fatal(err)
	}
	res := cs.InitializeResult()
	if res.Capabilities != nil && res.Capabilities.Logging != nil {
		if err := cs.SetLoggingLevel(context.Background(), &mcp.SetLoggingLevelParams{Level: mcpconn.ServerLogLevel}); err != nil {
			b.Fatal(err)
		}
	}
	return &sameClient{cs: cs, logs: mcpconn.PerCallLogLevel(res)}
}

// callTool calls name with args, with the _meta the runtime sends.
func (s *sameClient) callTool(ctx context.Context, name string, args any) (*mcp.CallToolResult, error) {
	params := &mcp.CallToolParams{Name: name, Arguments: args, Meta: mcp.Meta{}}
	if s.logs {
		params.Meta[mcp.MetaKeyLogLevel] = mcpconn.ServerLogLevel
	}
	var buf [len(mcpconn.ProgressTokenPrefix) + 20]byte
	params.SetProgressToken(string(strconv.AppendUint(append(buf[:0], mcpconn.ProgressTokenPrefix...), s.next.Add(1), 10)))
	return s.cs.CallTool(ctx, params)
}
