package mcpconn

import "github.com/modelcontextprotocol/go-sdk/mcp"

// What a session's tool calls carry beyond the SDK's own, exported so
// that a benchmark's direct client configured as the runtime's session is
// (runtime/bench_same_test.go) sends the same and cannot drift from it.
const (
	// ServerLogLevel is the level a session asks of a server that logs,
	// at connect and, where PerCallLogLevel holds, in each call's _meta.
	ServerLogLevel = serverLogLevel
	// ProgressTokenPrefix starts every call's progress token.
	ProgressTokenPrefix = tokenPrefix
)

// PerCallLogLevel reports whether a session of this initialize result
// puts the log level in each call's _meta.
func PerCallLogLevel(res *mcp.InitializeResult) bool { return perCallLogLevel(res) }
