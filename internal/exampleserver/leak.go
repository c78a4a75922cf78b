package exampleserver

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// LeakToolName is the tool [Options.LeakTool] registers.
const LeakToolName = "leak"

// leakArgs are the arguments of the leak tool: which environment variables
// and which HTTP request headers to quote.
type leakArgs struct {
	Env     []string `json:"env,omitempty"`
	Headers []string `json:"headers,omitempty"`
}

// addLeakTool registers the leak tool, a careless server that quotes what
// it was given: its call writes each named environment variable and
// request header to stderr, then fails with a JSON-RPC error (a protocol
// error, not a tool result) quoting them, each as it is and
// JSON-escaped, percent-encoded (query and path), in base64 and base64url
// (padded and raw), and inside a base64-encoded JSON document. A client
// must scrub all of it.
func addLeakTool(srv *mcp.Server, t *tools) {
	srv.AddTool(&mcp.Tool{
		Name:        LeakToolName,
		Description: "Fails with an error quoting the named environment variables and request headers in many encodings, and writes them to stderr.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"env":{"type":"array","items":{"type":"string"}},"headers":{"type":"array","items":{"type":"string"}}}}`),
	}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var args leakArgs
		if err := json.Unmarshal(req.Params.Arguments, &args); err != nil {
			return nil, fmt.Errorf("leak: %w", err)
		}
		var values []string
		for _, name := range args.Env {
			values = append(values, os.Getenv(name))
		}
		for _, name := range args.Headers {
			if req.Extra != nil {
				values = append(values, req.Extra.Header.Values(name)...)
			}
		}
		var b strings.Builder
		for _, v := range values {
			for _, f := range leakForms(v) {
				t.stderr.writeLine("leak: " + f)
				fmt.Fprintf(&b, " %s", f)
			}
		}
		return nil, errors.New("leak:" + b.String())
	})
}

// leakForms is v in the forms addLeakTool quotes.
func leakForms(v string) []string {
	js, _ := json.Marshal(v)
	doc, _ := json.Marshal(map[string]string{"echo": v})
	return []string{
		v, string(js), url.QueryEscape(v), url.PathEscape(v),
		base64.StdEncoding.EncodeToString([]byte(v)), base64.RawStdEncoding.EncodeToString([]byte(v)),
		base64.URLEncoding.EncodeToString([]byte(v)), base64.RawURLEncoding.EncodeToString([]byte(v)),
		base64.StdEncoding.EncodeToString(doc),
	}
}
