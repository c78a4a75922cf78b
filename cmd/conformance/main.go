// Command conformance is an MCP client for the official MCP conformance
// suite, built on mcpvisor's runtime: everything it does goes through
// runtime.Start, the management API, Tools and CallTool, so the suite tests
// the runtime a host embeds rather than the go-sdk underneath it.
//
// The suite runs it once per scenario:
//
//	conformance <server URL>
//
// with MCP_CONFORMANCE_SCENARIO naming the scenario and
// MCP_CONFORMANCE_CONTEXT holding its JSON context (client credentials,
// tool calls). It configures one server named "conformance" at the URL,
// waits until it is ready, and does what the scenario expects (see
// scenarios.go). Exit status: 0 done, 1 failed (the reason on stderr),
// 2 usage or unknown scenario. `make conformance` runs the suite against it.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/openprogram/mcpvisor/config"
	"github.com/openprogram/mcpvisor/runtime"
	"github.com/openprogram/mcpvisor/status"
	"github.com/openprogram/mcpvisor/tools"
)

// serverName is the one configured server; its tools are
// "conformance__<tool>".
const serverName = "conformance"

// scenarioTimeout bounds one run: the suite gives a scenario 30 s.
const scenarioTimeout = 25 * time.Second

func main() {
	os.Exit(run(os.Args[1:]))
}

func run(args []string) int {
	if len(args) < 1 {
		fmt.Fprintf(os.Stderr, "usage: conformance <server URL>\n%s", scenarioList())
		return 2
	}
	url := args[len(args)-1]
	name := os.Getenv("MCP_CONFORMANCE_SCENARIO")
	sc, ok := scenarios[name]
	if !ok {
		fmt.Fprintf(os.Stderr, "conformance: unknown scenario %q (MCP_CONFORMANCE_SCENARIO)\n%s", name, scenarioList())
		return 2
	}
	var cc conformanceContext
	if raw := os.Getenv("MCP_CONFORMANCE_CONTEXT"); raw != "" {
		if err := json.Unmarshal([]byte(raw), &cc); err != nil {
			fmt.Fprintf(os.Stderr, "conformance: MCP_CONFORMANCE_CONTEXT: %v\n", err)
			return 2
		}
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	ctx, cancel := context.WithTimeout(context.Background(), scenarioTimeout)
	defer cancel()
	if err := runScenario(ctx, logger, url, sc, cc); err != nil {
		fmt.Fprintf(os.Stderr, "conformance: scenario %q: %v\n", name, err)
		return 1
	}
	return 0
}

// conformanceContext is MCP_CONFORMANCE_CONTEXT: each scenario uses the
// fields it needs.
type conformanceContext struct {
	ClientID         string `json:"client_id"`
	ClientSecret     string `json:"client_secret"`
	PrivateKeyPEM    string `json:"private_key_pem"`
	SigningAlgorithm string `json:"signing_algorithm"`
	ToolCalls        []struct {
		Name      string         `json:"name"`
		Arguments map[string]any `json:"arguments"`
	} `json:"toolCalls"`
}

// runScenario starts a runtime on a temporary state dir, configures the
// server, waits for it and runs the scenario; the runtime and the state dir
// are gone when it returns.
func runScenario(ctx context.Context, logger *slog.Logger, url string, sc scenario, cc conformanceContext) (err error) {
	dir, err := os.MkdirTemp("", "mcpvisor-conformance-")
	if err != nil {
		return fmt.Errorf("creating the state dir: %w", err)
	}
	defer os.RemoveAll(dir)

	// A login whose browser step fails ends the scenario at once, with
	// that failure as the reason, instead of leaving it to wait out the
	// login timeout.
	ctx, abort := context.WithCancelCause(ctx)
	defer abort(nil)
	opts := runtime.Options{
		StateDir:   dir,
		Logger:     logger,
		ClientName: "mcpvisor-conformance",
		OpenURL: func(ctx context.Context, url string) error {
			err := openURL(ctx, url)
			if err != nil && ctx.Err() == nil { // not a login that ended meanwhile
				abort(fmt.Errorf("login: %w", err))
			}
			return err
		},
		LoginTimeout: scenarioTimeout,
	}
	if sc.elicit != nil {
		opts.Elicit = sc.elicit
	}
	rt, err := runtime.Start(ctx, opts)
	if err != nil {
		return fmt.Errorf("starting the runtime: %w", err)
	}
	defer func() {
		stopCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if stopErr := rt.Shutdown(stopCtx); stopErr != nil && err == nil {
			err = stopErr
		}
	}()

	srv := config.Server{Name: serverName, Type: config.TypeHTTP, URL: url, Enabled: true}
	if sc.auth != nil {
		srv.Auth = sc.auth(cc)
	}
	if _, err := rt.AddServer(ctx, srv); err != nil {
		return fmt.Errorf("adding the server: %w", err)
	}
	err = waitReady(ctx, rt)
	if err == nil {
		err = sc.run(ctx, &client{rt: rt, logger: logger}, cc)
	}
	if cause := context.Cause(ctx); err != nil && cause != nil && !errors.Is(cause, ctx.Err()) {
		err = fmt.Errorf("%w (%w)", err, cause)
	}
	return err
}

// waitReady waits until the server is ready, and fails once it has failed
// (a retryable failure, in backoff, counts too: the suite wants one
// attempt, not retries). A login in progress (authorizing) is waited for.
func waitReady(ctx context.Context, rt *runtime.Runtime) error {
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		d, err := rt.Server(serverName)
		if err != nil {
			return err
		}
		switch d.State {
		case status.Ready:
			return nil
		case status.Failed, status.Backoff, status.NeedsAuth:
			msg := d.Error
			if msg == "" {
				msg = d.LastError
			}
			return fmt.Errorf("connecting: server %s: %s", d.State, msg)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("connecting: server still %s: %w", d.State, ctx.Err())
		case <-tick.C:
		}
	}
}

// client is what a scenario drives: the runtime with its one server.
type client struct {
	rt     *runtime.Runtime
	logger *slog.Logger
}

// tools returns the server's tools in the registry's order (by name).
func (c *client) tools() []tools.Tool {
	var out []tools.Tool
	for _, t := range c.rt.Tools() {
		if t.Server == serverName {
			out = append(out, t)
		}
	}
	return out
}

// tool finds a tool by its name on the server.
func (c *client) tool(original string) (tools.Tool, error) {
	for _, t := range c.tools() {
		if t.OriginalName == original {
			return t, nil
		}
	}
	return tools.Tool{}, fmt.Errorf("tool %q not listed", original)
}

// call calls a tool by its name on the server. A result the tool marks as
// an error is logged, not failed: the suite judges the exchange, not the
// tool's answer.
func (c *client) call(ctx context.Context, original string, args map[string]any) error {
	t, err := c.tool(original)
	if err != nil {
		return err
	}
	if args == nil {
		args = map[string]any{}
	}
	res, err := c.rt.CallTool(ctx, t.Name, args)
	if err != nil {
		return err
	}
	if res.IsError {
		c.logger.Warn("the tool reported an error", "tool", original, "content", res.Content)
	}
	return nil
}

// callLogged calls a tool and only logs a failure: for scenarios that
// expect some calls to be refused.
func (c *client) callLogged(ctx context.Context, original string, args map[string]any) {
	if err := c.call(ctx, original, args); err != nil {
		c.logger.Info("call failed", "tool", original, "error", err)
	}
}

// callJSON calls a tool whose answer is one JSON text block and decodes
// it into v; false (logged) if the tool is missing or the call failed.
func (c *client) callJSON(ctx context.Context, original string, args map[string]any, v any) bool {
	t, err := c.tool(original)
	if err != nil {
		return false
	}
	if args == nil {
		args = map[string]any{}
	}
	res, err := c.rt.CallTool(ctx, t.Name, args)
	if err != nil || res.IsError || len(res.Content) == 0 {
		c.logger.Info("call failed", "tool", original, "error", err)
		return false
	}
	return json.Unmarshal([]byte(res.Content[0].Text), v) == nil
}

var errNoTools = errors.New("the server lists no tools")
