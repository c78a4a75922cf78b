//go:build unix

package peers_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/openprogram/mcpvisor/config"
	"github.com/openprogram/mcpvisor/internal/exampleserver"
	"github.com/openprogram/mcpvisor/internal/testutil"
)

// gatewayDeny is the -deny (-mcp-deny) of the gateway in these tests.
// server-everything's get-env is the filtered tool the tests check. (The
// example server's remote_ref, whose output schema refers to a remote
// document, is listed: the gateway serves it without that schema, which
// the TypeScript SDK's Client could not compile; its listTools would
// reject the whole list, "can't resolve reference".)
const gatewayDeny = "*__get-env"

// gatewayFleet is what the gateway tests put behind the gateway: the
// example server and server-everything, each over stdio, SSE and
// Streamable HTTP.
type gatewayFleet struct {
	servers []config.Server
	keep    []int    // the pids of the server-everything HTTP servers
	want    []string // tools every server offers, by registry name
}

// Names of the fleet's servers, by program and transport.
var (
	exServers         = []string{"ex", "ex-sse", "ex-http"}
	everythingServers = []string{"everything", "everything-sse", "everything-http"}
)

// startGatewayFleet starts the fleet's HTTP servers (the example server
// in this process, server-everything as node processes) and configures the
// six. Its servers stop when the test ends, after whatever the test
// registers later (the gateway) stopped.
func startGatewayFleet(t *testing.T) *gatewayFleet {
	t.Helper()
	f := &gatewayFleet{}
	f.servers = append(f.servers, config.Server{Name: "ex", Type: config.TypeLocal, Enabled: true,
		Command: []string{demoBin, "serve", "-result-tools", "-progress-tools", "-change-tool"},
		Env:     map[string]string{testutil.MarkerEnv: marker}})
	for _, tr := range []struct {
		name    string
		typ     string
		handler func(*mcp.Server) http.Handler
	}{
		{"ex-sse", config.TypeSSE, func(s *mcp.Server) http.Handler {
			return mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return s }, nil)
		}},
		{"ex-http", config.TypeHTTP, func(s *mcp.Server) http.Handler {
			return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)
		}},
	} {
		srv := exampleserver.NewServer(exampleserver.Options{ResultTools: true, ProgressTools: true, Stderr: &syncBuffer{}})
		hs := httptest.NewServer(tr.handler(srv)) // 127.0.0.1
		t.Cleanup(func() { hs.CloseClientConnections(); hs.Close() })
		f.servers = append(f.servers, config.Server{Name: tr.name, Type: tr.typ, URL: hs.URL, Enabled: true})
	}
	for i, transport := range []string{"stdio", "sse", "streamableHttp"} {
		srv, keep := everythingServer(t, transport)
		srv.Name = everythingServers[i]
		f.servers = append(f.servers, srv)
		f.keep = append(f.keep, keep...)
	}
	for _, s := range exServers {
		for _, tool := range []string{"echo", "structured", "progress", "sleep", "remote_ref"} {
			f.want = append(f.want, s+"__"+tool)
		}
	}
	for _, s := range everythingServers {
		for _, tool := range alwaysTools {
			if name := s + strings.TrimPrefix(tool, "everything"); !denied(name) {
				f.want = append(f.want, name)
			}
		}
	}
	return f
}

// denied says whether gatewayDeny filters the registry name.
func denied(name string) bool {
	return strings.HasSuffix(name, "__get-env")
}

// noProcessesLeft fails the test unless, within stopGrace, no process of
// these tests is left but those in keep.
func noProcessesLeft(t *testing.T, keep []int) {
	t.Helper()
	var left []int
	if !testutil.Within(stopGrace, func() bool {
		left = slices.DeleteFunc(testutil.ProcessesWithMarker(marker), func(pid int) bool { return slices.Contains(keep, pid) })
		return len(left) == 0
	}) {
		t.Errorf("processes left after the gateway stopped: %v", left)
	}
}

// The TypeScript SDK's Client, spawning `demo gateway` over stdio, sees and
// calls the six servers' tools, and follows a tool the example server
// adds.
func TestGatewayTypeScriptStdio(t *testing.T) {
	f := startGatewayFleet(t)
	dir := t.TempDir()
	testutil.WriteConfig(t, dir, f.servers...)
	t.Cleanup(func() { noProcessesLeft(t, f.keep) }) // after the client (and its gateway) stopped
	command, _ := json.Marshal([]string{demoBin, "gateway", "-state-dir", dir, "-v", "-deny", gatewayDeny})
	c := startTSClient(t, "GW_TRANSPORT=stdio", "GW_COMMAND="+string(command))
	// The stdio gateway's log is the script's stderr.
	exerciseGateway(t, c, f, c.stderr)

	t.Run("list_changed", func(t *testing.T) {
		since := c.eventCount()
		if res := c.call(t, "ex__change", map[string]any{"list": "tools"}); !strings.Contains(res.text(), "extra_1") {
			t.Fatalf("change = %q, want it to add extra_1", res.text())
		}
		c.waitEvent(t, since, "tools_list_changed after ex__change", func(l tsLine) bool { return l.Event == "tools_list_changed" })
		c.awaitTools(t, []string{"ex__extra_1"})
		if res := c.call(t, "ex__extra_1", map[string]any{"text": "added live"}); res.text() != "added live" {
			t.Errorf("ex__extra_1 = %q, want the echo", res.text())
		}
	})
}

// gatewayURLLine is where `demo run -mcp-listen` logs the gateway's URL.
var gatewayURLLine = regexp.MustCompile(`url=(http://127\.0\.0\.1:\d+/mcp)`)

// apiLine is the line `demo run` prints on stdout once its API listens.
var apiLine = regexp.MustCompile(`listening on (http://127\.0\.0\.1:\d+)`)

// The TypeScript SDK's Client over Streamable HTTP (`demo run
// -mcp-listen`, with a bearer token) sees and calls the six servers'
// tools, and follows a server added through the management API.
func TestGatewayTypeScriptHTTP(t *testing.T) {
	f := startGatewayFleet(t)
	dir := t.TempDir()
	testutil.WriteConfig(t, dir, f.servers...)
	token := "peers-gateway-token-0123456789"
	tokenFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokenFile, []byte(token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	run := startDemoRun(t, f.keep, "-state-dir", dir, "-listen", "127.0.0.1:0", "-v",
		"-mcp-listen", "127.0.0.1:0", "-mcp-token-file", tokenFile, "-mcp-deny", gatewayDeny)
	c := startTSClient(t, "GW_TRANSPORT=http", "GW_URL="+run.mcpURL, "GW_TOKEN="+token)
	exerciseGateway(t, c, f, run.logs)

	t.Run("list_changed", func(t *testing.T) {
		since := c.eventCount()
		body, _ := json.Marshal(map[string]any{"name": "late", "type": "local", "enabled": true,
			"command": []string{demoBin, "serve"}, "env": map[string]string{testutil.MarkerEnv: marker}})
		resp, err := http.Post(run.apiURL+"/api/mcp/servers", "application/json", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusCreated {
			t.Fatalf("adding a server through the management API: %s", resp.Status)
		}
		c.waitEvent(t, since, "tools_list_changed after the server was added", func(l tsLine) bool { return l.Event == "tools_list_changed" })
		c.awaitTools(t, []string{"late__echo"})
		if res := c.call(t, "late__echo", map[string]any{"text": "a late server"}); res.text() != "a late server" {
			t.Errorf("late__echo = %q, want the echo", res.text())
		}
	})
	if strings.Contains(run.logs.String(), token) || strings.Contains(c.stderr.String(), token) {
		t.Error("the bearer token is in a log")
	}
}

// exerciseGateway runs what both transports must do through the gateway:
// every ready server's tools listed under registry names, a call on each
// of the six servers (structured content checked), progress under the
// client's token, a cancelled call cancelled upstream, and the filtered
// tool neither listed nor callable. logs is the gateway's log.
func exerciseGateway(t *testing.T, c *tsClient, f *gatewayFleet, logs *syncBuffer) {
	t.Helper()
	list := c.awaitTools(t, f.want)
	t.Run("tools/list", func(t *testing.T) {
		servers := append(slices.Clone(exServers), everythingServers...)
		for _, tl := range list {
			server, _, ok := strings.Cut(tl.Name, "__")
			if !ok || !slices.Contains(servers, server) {
				t.Errorf("tool %q is not {server}__{tool} of one of %v", tl.Name, servers)
			}
			if denied(tl.Name) {
				t.Errorf("the filtered tool %q is listed", tl.Name)
			}
			if strings.HasSuffix(tl.Name, "__structured") && len(tl.OutputSchema) == 0 {
				t.Errorf("%s is listed without its output schema", tl.Name)
			}
			if strings.HasSuffix(tl.Name, "__remote_ref") && len(tl.OutputSchema) != 0 {
				t.Errorf("%s is listed with its remote output schema %s", tl.Name, tl.OutputSchema)
			}
		}
	})

	t.Run("call each server", func(t *testing.T) {
		for _, s := range exServers {
			res := c.call(t, s+"__structured", map[string]any{"text": "via " + s})
			// The id (an integer past 2^53) is a JavaScript number here:
			// only text and n are compared.
			if res.StructuredContent["text"] != "via "+s || res.StructuredContent["n"] != float64(1) {
				t.Errorf("%s__structured: structured content %v, want text %q and n 1", s, res.StructuredContent, "via "+s)
			}
		}
		for _, s := range everythingServers {
			if res := c.call(t, s+"__echo", map[string]any{"message": "hi " + s}); !strings.Contains(res.text(), "hi "+s) {
				t.Errorf("%s__echo = %q, want it to contain %q", s, res.text(), "hi "+s)
			}
		}
		if res := c.call(t, "ex__remote_ref", map[string]any{}); res.StructuredContent["x"] != float64(1) {
			t.Errorf("ex__remote_ref: structured content %v, want x 1", res.StructuredContent)
		}
		res := c.call(t, "everything-http__get-structured-content", map[string]any{"location": "Chicago"})
		if res.StructuredContent["conditions"] != "Light rain / drizzle" {
			t.Errorf("get-structured-content: structured content %v, want Chicago's weather", res.StructuredContent)
		}
	})

	t.Run("progress", func(t *testing.T) {
		for _, call := range []struct {
			name string
			args map[string]any
		}{
			{"ex-http__progress", map[string]any{"period_ms": 5, "total_ms": 100}},
			{"everything-sse__trigger-long-running-operation", map[string]any{"duration": 0.2, "steps": 3}},
		} {
			since := c.eventCount()
			id, ch := c.send(t, map[string]any{"op": "call", "name": call.name, "args": call.args, "progress": true})
			if ans := c.await(t, call.name, ch); !ans.OK {
				t.Fatalf("%s: %s", call.name, ans.Raw)
			}
			var got []float64
			for _, l := range c.eventsSince(since) {
				var p struct {
					ID       int     `json:"id"`
					Progress float64 `json:"progress"`
				}
				if l.Event == "progress" && json.Unmarshal(l.Raw, &p) == nil && p.ID == id {
					got = append(got, p.Progress)
				}
			}
			// The SDK hands onprogress only the reports under this call's
			// own token: their arrival is the assertion.
			if len(got) == 0 || !slices.IsSorted(got) {
				t.Errorf("%s: progress %v, want increasing reports before the answer", call.name, got)
			}
		}
	})

	t.Run("cancellation", func(t *testing.T) {
		id, ch := c.send(t, map[string]any{"op": "call", "name": "ex__sleep", "args": map[string]any{"ms": 600000}})
		testutil.Eventually(t, callTimeout, "the sleep in flight upstream", func() bool {
			return strings.Contains(logs.String(), "sleeping 600000ms")
		})
		if ans := c.do(t, map[string]any{"op": "abort", "target": id}, nil); !ans.OK {
			t.Fatalf("abort: %s", ans.Raw)
		}
		if ans := c.await(t, "the aborted call", ch); ans.OK {
			t.Errorf("the aborted call succeeded: %s", ans.Raw)
		}
		testutil.Eventually(t, callTimeout, "the upstream sleep cancelled", func() bool {
			return strings.Contains(logs.String(), "sleep of 600000ms cancelled")
		})
	})

	t.Run("filtered", func(t *testing.T) {
		ans := c.do(t, map[string]any{"op": "call", "name": "everything__get-env", "args": map[string]any{}}, nil)
		if ans.OK || ans.Error == nil || ans.Error.Code == nil || *ans.Error.Code != -32602 {
			t.Errorf("calling the filtered everything__get-env: %s, want a -32602 error", ans.Raw)
		}
	})
}

// demoRun is a `demo run` process of a test.
type demoRun struct {
	apiURL, mcpURL string
	logs           *syncBuffer // stderr
}

// startDemoRun starts `demo run args...` in its own process group and
// waits for its API's and gateway's URLs. It is stopped (SIGTERM, bounded)
// when the test ends, after which no process of the test may be left but
// those in keep.
func startDemoRun(t *testing.T, keep []int, args ...string) *demoRun {
	t.Helper()
	r := &demoRun{logs: &syncBuffer{}}
	stdout := &syncBuffer{}
	cmd := exec.Command(demoBin, append([]string{"run"}, args...)...)
	cmd.Env = append(os.Environ(), testutil.MarkerEnv+"="+marker)
	cmd.Stdout, cmd.Stderr = stdout, r.logs
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.WaitDelay = stopGrace
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	done := make(chan struct{})
	var waitErr error
	go func() { waitErr = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		_ = syscall.Kill(pid, syscall.SIGTERM)
		select {
		case <-done:
			if waitErr != nil {
				t.Errorf("demo run after SIGTERM: %v", waitErr)
			}
		case <-time.After(runtimeStopTimeout):
			t.Errorf("demo run still running %v after SIGTERM", runtimeStopTimeout)
		}
		stopGroup(t, pid, done)
		noProcessesLeft(t, keep)
		if t.Failed() {
			t.Logf("demo run stdout:\n%s\nstderr:\n%s", stdout.String(), r.logs.String())
		}
	})
	testutil.Eventually(t, listenTimeout, "demo run's URLs", func() bool {
		select {
		case <-done:
			t.Fatalf("demo run exited: %v\n%s", waitErr, r.logs.String())
		default:
		}
		api, mcpURL := apiLine.FindStringSubmatch(stdout.String()), gatewayURLLine.FindStringSubmatch(r.logs.String())
		if api == nil || mcpURL == nil {
			return false
		}
		r.apiURL, r.mcpURL = api[1], mcpURL[1]
		return true
	})
	return r
}

// runtimeStopTimeout bounds demo run's shutdown after SIGTERM.
const runtimeStopTimeout = 30 * time.Second

// The MCP Inspector's CLI mode lists the gateway's tools and calls one,
// spawning `demo gateway` over stdio itself, with a filtered tool left out.
// Each run lists or calls once, at once, against a fresh gateway whose
// server takes 300 ms to answer initialize: the gateway's startup wait
// makes the first run see the tool (it used to need retries).
func TestGatewayInspectorCLI(t *testing.T) {
	dir := t.TempDir()
	testutil.WriteConfig(t, dir, config.Server{Name: "ex", Type: config.TypeLocal, Enabled: true,
		Command: []string{demoBin, "serve", "-initialize-delay", "300ms"}, Env: map[string]string{testutil.MarkerEnv: marker}})
	t.Cleanup(func() { noProcessesLeft(t, nil) })

	var listed struct {
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
	}
	out := inspectOnce(t, dir, "--method", "tools/list")
	if err := json.Unmarshal(out, &listed); err != nil {
		t.Fatalf("the Inspector's tools/list output: %v\n%s", err, out)
	}
	var names []string
	for _, tl := range listed.Tools {
		names = append(names, tl.Name)
	}
	if !slices.Contains(names, "ex__echo") {
		t.Errorf("the Inspector's first tools/list = %v, want ex__echo", names)
	}
	if slices.Contains(names, "ex__add") {
		t.Errorf("the filtered ex__add is listed: %v", names)
	}

	var called struct {
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
		IsError bool `json:"isError"`
	}
	out = inspectOnce(t, dir, "--method", "tools/call", "--tool-name", "ex__echo", "--tool-arg", "text=from the inspector")
	if err := json.Unmarshal(out, &called); err != nil || called.IsError || len(called.Content) != 1 || called.Content[0].Text != "from the inspector" {
		t.Errorf("the Inspector's tools/call ex__echo: %+v, %v\n%s", called, err, out)
	}
}

// inspectOnce runs the Inspector's CLI with args once and returns its
// stdout; any failure fails the test.
func inspectOnce(t *testing.T, dir string, args ...string) []byte {
	t.Helper()
	out, stderr, err := inspect(t, dir, args...)
	if err != nil {
		t.Fatalf("inspector %v: %v\nstdout:\n%s\nstderr:\n%s", args, err, out, stderr)
	}
	return out
}

// inspect runs the Inspector's CLI (bounded by inspectorTimeout, in its
// own process group) against `demo gateway -state-dir dir -deny ex__add`
// and returns its stdout, stderr and exit error.
func inspect(t *testing.T, dir string, args ...string) (stdout, stderr []byte, err error) {
	t.Helper()
	// The Inspector gives the server it spawns only the variables of -e
	// beside a few safe ones: the marker goes explicitly.
	argv := append([]string{inspectorJS, "--cli", "-e", testutil.MarkerEnv + "=" + marker}, args...)
	argv = append(argv, "--", demoBin, "gateway", "-state-dir", dir, "-deny", "ex__add")
	cmd := exec.Command("node", argv...)
	cmd.Env = append(os.Environ(), testutil.MarkerEnv+"="+marker)
	var outBuf, errBuf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &outBuf, &errBuf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.WaitDelay = stopGrace
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err = <-done:
	case <-time.After(inspectorTimeout):
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
		t.Fatalf("inspector %v still running after %v\nstderr:\n%s", args, inspectorTimeout, errBuf.String())
	}
	return outBuf.Bytes(), errBuf.Bytes(), err
}
