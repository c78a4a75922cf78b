package main

import (
	"encoding/json"
	"net/http"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/openprogram/mcpvisor/config"
	"github.com/openprogram/mcpvisor/internal/testutil"
)

// demo run -tool-search -pin GLOB hands the model search_tools and the
// pinned tools only, and search_tools finds an unpinned tool, which is
// still callable by name.
func TestRunToolSearchFlag(t *testing.T) {
	dir := t.TempDir()
	testutil.WriteConfig(t, dir, config.Server{Name: "ex", Type: config.TypeLocal, Command: []string{demoBin, "serve"}, Enabled: true})
	cmd, base, logs := startRun(t, dir, "-tool-search", "-pin", "ex__echo, ex__ad?")
	awaitState(t, base, "ex", "ready", 30*time.Second)
	if !testutil.Within(30*time.Second, func() bool {
		return slices.ContainsFunc(listTools(t, base), func(tool listedTool) bool { return tool.Name == "ex__sleep" })
	}) {
		t.Fatalf("ex__sleep never registered\n%s", logs.String())
	}
	var model struct{ Tools []listedTool }
	getJSON(t, base+"/api/mcp/tools/model", &model)
	var names []string
	for _, tool := range model.Tools {
		names = append(names, tool.Name)
	}
	if want := []string{"search_tools", "ex__add", "ex__echo"}; !slices.Equal(names, want) {
		t.Errorf("GET /api/mcp/tools/model of demo run -tool-search -pin = %v, want %v", names, want)
	}
	// The index follows the registry in the background.
	var answer string
	if !testutil.Within(10*time.Second, func() bool {
		answer = callText(t, base, "search_tools", `{"arguments":{"query":"pause for some milliseconds"}}`)
		return strings.Contains(answer, `"ex__sleep"`)
	}) {
		t.Errorf("search_tools for a pause does not name ex__sleep: %s", answer)
	}
	if got := callText(t, base, "ex__sleep", `{"arguments":{"ms":1}}`); strings.Contains(got, "unknown tool") {
		t.Errorf("ex__sleep, not in the model's list, is not callable by name: %s", got)
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	if err := waitBounded(cmd, 30*time.Second); err != nil {
		t.Fatalf("demo run after SIGTERM: %v", err)
	}
}

func getJSON(t *testing.T, url string, v any) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s", url, resp.Status)
	}
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatal(err)
	}
}

// callText calls tool through the API with body and returns the text of
// its first content block, or the error answer.
func callText(t *testing.T, base, tool, body string) string {
	t.Helper()
	resp, err := http.Post(base+"/api/mcp/tools/"+tool+"/call", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var res struct {
		Error   string
		Content []struct{ Text string }
	}
	if err := json.NewDecoder(resp.Body).Decode(&res); err != nil {
		t.Fatal(err)
	}
	if res.Error != "" || len(res.Content) == 0 {
		return resp.Status + " " + res.Error
	}
	return res.Content[0].Text
}

// -pin without -tool-search is refused (it would do nothing), and a bad
// glob stops demo run with an error naming it.
func TestRunToolSearchBadFlags(t *testing.T) {
	out, err := demoCommand("run", "-state-dir", t.TempDir(), "-pin", "ex__*").CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 || !strings.Contains(string(out), "-pin needs -tool-search") {
		t.Errorf("demo run -pin without -tool-search: %v\n%s", err, out)
	}
	out, err = demoCommand("run", "-state-dir", t.TempDir(), "-listen", "127.0.0.1:0", "-tool-search", "-pin", "ex__[").CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 || !strings.Contains(string(out), `Pinned[0] \"ex__[\"`) {
		t.Errorf("demo run -tool-search -pin with a bad glob: %v\n%s", err, out)
	}
}

// demo gateway -tool-search -pin GLOB lists search_tools and the pinned
// tools to its client, which finds and calls the others by name.
func TestGatewayToolSearchFlag(t *testing.T) {
	cmd := demoCommand("gateway", "-state-dir", gatewayDir(t), "-tool-search", "-pin", "ex__echo")
	logs := &lockedBuffer{}
	cmd.Stderr = logs
	g := connectClient(t, &mcp.CommandTransport{Command: cmd})
	defer g.Close()
	g.awaitTool(t, "ex__echo", logs)
	res, err := g.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
	}
	if want := []string{"ex__echo", "search_tools"}; !slices.Equal(names, want) {
		t.Errorf("demo gateway -tool-search -pin ex__echo lists %v, want %v", names, want)
	}
	var answer string
	if !testutil.Within(30*time.Second, func() bool {
		out, err := g.CallTool(t.Context(), &mcp.CallToolParams{Name: "search_tools", Arguments: map[string]any{"query": "pause for some milliseconds"}})
		if err != nil || len(out.Content) == 0 {
			t.Fatalf("search_tools through demo gateway: %+v, %v", out, err)
		}
		answer = out.Content[0].(*mcp.TextContent).Text
		return strings.Contains(answer, `"ex__sleep"`)
	}) {
		t.Errorf("search_tools for a pause does not name ex__sleep: %s", answer)
	}
	out, err := g.CallTool(t.Context(), &mcp.CallToolParams{Name: "ex__sleep", Arguments: map[string]any{"ms": 1}})
	if err != nil || out.IsError {
		t.Errorf("ex__sleep, unlisted, called by name through demo gateway: %+v, %v", out, err)
	}
}
