package main

import (
	"encoding/json"
	"net/http"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/openprogram/mcpvisor/config"
	"github.com/openprogram/mcpvisor/internal/testutil"
)

// demo run -apps advertises MCP Apps, so the example server sends its app
// tools, and the API lists the app-only one with its visibility.
func TestRunAppsFlag(t *testing.T) {
	dir := t.TempDir()
	testutil.WriteConfig(t, dir, config.Server{Name: "ex", Type: config.TypeLocal, Command: []string{demoBin, "serve"}, Enabled: true})
	cmd, base, _ := startRun(t, dir, "-apps")
	awaitState(t, base, "ex", "ready", 30*time.Second)
	// A server shows ready before its tools are registered (so that a
	// registered tool always belongs to a ready server): wait for them.
	var tools []listedTool
	appOnly := func() bool {
		tools = listTools(t, base)
		return slices.ContainsFunc(tools, func(tool listedTool) bool {
			return tool.Name == "ex__app_refresh" && slices.Equal(tool.Visibility, []string{"app"})
		})
	}
	if !testutil.Within(30*time.Second, appOnly) {
		t.Errorf("GET /api/mcp/tools of demo run -apps has no app-only ex__app_refresh: %+v", tools)
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	if err := waitBounded(cmd, 30*time.Second); err != nil {
		t.Fatalf("demo run after SIGTERM: %v", err)
	}
}

// listedTool is a tool as GET /api/mcp/tools lists it, in part.
type listedTool struct {
	Name       string   `json:"name"`
	Visibility []string `json:"visibility"`
}

// listTools is GET /api/mcp/tools of the runtime at base.
func listTools(t *testing.T, base string) []listedTool {
	t.Helper()
	resp, err := http.Get(base + "/api/mcp/tools")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var list struct{ Tools []listedTool }
	if err := json.NewDecoder(resp.Body).Decode(&list); err != nil {
		t.Fatal(err)
	}
	return list.Tools
}
