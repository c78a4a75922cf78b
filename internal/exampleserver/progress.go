package exampleserver

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// progressArgs are the arguments of the progress tool.
type progressArgs struct {
	PeriodMs int `json:"period_ms" jsonschema:"milliseconds between two progress reports (at least 1)"`
	TotalMs  int `json:"total_ms" jsonschema:"how long the call runs, in milliseconds; 0: until cancelled"`
}

// progressSilentArgs are the arguments of the progress_silent tool.
type progressSilentArgs struct {
	Reports  int `json:"reports" jsonschema:"how many progress reports to send before going silent"`
	PeriodMs int `json:"period_ms" jsonschema:"milliseconds between two progress reports (at least 1)"`
}

// maxProgressMs bounds the durations the progress tools take, so that a
// Duration cannot overflow: an hour.
const maxProgressMs = 3600 * 1000

// addProgressTools registers progress, progress_silent and meta
// (Options.ProgressTools).
func addProgressTools(srv *mcp.Server) {
	mcp.AddTool(srv, &mcp.Tool{Name: "progress", Description: "Sends a progress report every period_ms for total_ms (0: until cancelled), then answers."}, progressTool)
	mcp.AddTool(srv, &mcp.Tool{Name: "progress_silent", Description: "Sends reports progress reports period_ms apart, then goes silent until cancelled."}, progressSilent)
	mcp.AddTool(srv, &mcp.Tool{Name: "meta", Description: "Returns the request's _meta as JSON."}, metaTool)
}

func progressTool(ctx context.Context, req *mcp.CallToolRequest, in progressArgs) (*mcp.CallToolResult, any, error) {
	if in.PeriodMs < 1 || in.PeriodMs > maxProgressMs || in.TotalMs < 0 || in.TotalMs > maxProgressMs {
		return nil, nil, fmt.Errorf("period_ms must be between 1 and %d and total_ms between 0 and %[1]d, got %d and %d", maxProgressMs, in.PeriodMs, in.TotalMs)
	}
	var end <-chan time.Time // nil without a total: never
	if in.TotalMs > 0 {
		t := time.NewTimer(time.Duration(in.TotalMs) * time.Millisecond)
		defer t.Stop()
		end = t.C
	}
	tick := time.NewTicker(time.Duration(in.PeriodMs) * time.Millisecond)
	defer tick.Stop()
	sent := 0
	for {
		select {
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		case <-end:
			return textResult(fmt.Sprintf("sent %d progress reports", sent)), nil, nil
		case <-tick.C:
			sent++
			if err := notifyProgress(ctx, req, sent, in.TotalMs/in.PeriodMs); err != nil {
				return nil, nil, err
			}
		}
	}
}

func progressSilent(ctx context.Context, req *mcp.CallToolRequest, in progressSilentArgs) (*mcp.CallToolResult, any, error) {
	if in.PeriodMs < 1 || in.PeriodMs > maxProgressMs || in.Reports < 0 || in.Reports > 1000 {
		return nil, nil, fmt.Errorf("period_ms must be between 1 and %d and reports between 0 and 1000, got %d and %d", maxProgressMs, in.PeriodMs, in.Reports)
	}
	tick := time.NewTicker(time.Duration(in.PeriodMs) * time.Millisecond)
	defer tick.Stop()
	for sent := 1; sent <= in.Reports; sent++ {
		select {
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		case <-tick.C:
		}
		if err := notifyProgress(ctx, req, sent, in.Reports); err != nil {
			return nil, nil, err
		}
	}
	<-ctx.Done()
	return nil, nil, ctx.Err()
}

// notifyProgress sends report n of total (0: unknown) for req, if the
// request asked for progress (it carries a token).
func notifyProgress(ctx context.Context, req *mcp.CallToolRequest, n, total int) error {
	token := req.Params.GetProgressToken()
	if token == nil {
		return nil
	}
	return req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
		ProgressToken: token, Progress: float64(n), Total: float64(total), Message: fmt.Sprintf("step %d", n)})
}

func metaTool(_ context.Context, req *mcp.CallToolRequest, _ noArgs) (*mcp.CallToolResult, any, error) {
	b, err := json.Marshal(req.Params.Meta)
	if err != nil {
		return nil, nil, fmt.Errorf("encoding _meta: %w", err)
	}
	return textResult(string(b)), nil, nil
}
