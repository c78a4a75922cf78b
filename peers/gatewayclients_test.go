//go:build unix

package peers_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/openprogram/mcpvisor/internal/testutil"
)

// The MCP clients the gateway tests (gateway_test.go) put in front of the
// gateway, pinned, installed by TestMain into <repo>/.cache/gatewayclients:
// the official TypeScript SDK's Client, driven by testdata/gatewayclient.mjs,
// and the MCP Inspector, whose --cli mode lists and calls tools. The
// Inspector's 2.x line ships its CLI inside the main package (the separate
// @modelcontextprotocol/inspector-cli stopped at the 1.x line), so the test
// runs what `npx @modelcontextprotocol/inspector --cli` runs.
const (
	tsSDKPkg         = "@modelcontextprotocol/sdk"
	tsSDKVersion     = "1.32.2"
	inspectorPkg     = "@modelcontextprotocol/inspector"
	inspectorVersion = "2.12.0"

	// tsClientLife bounds a gatewayclient.mjs process; it exits by itself
	// then, whatever the test does.
	tsClientLife = 90 * time.Second
	// inspectorTimeout bounds one Inspector CLI run.
	inspectorTimeout = 30 * time.Second
)

var (
	// tsSDKDir is the installed SDK's package directory; inspectorJS the
	// Inspector's launcher (its bin); gatewayClientJS the driver script.
	tsSDKDir, inspectorJS, gatewayClientJS string
	// demoBin is the demo binary TestMain builds (the example server and
	// the gateway).
	demoBin string
)

// installGatewayClients installs the pinned TypeScript SDK and Inspector
// into root/.cache/gatewayclients unless they are there whole, and builds
// the demo binary into tmp.
func installGatewayClients(root, tmp string) error {
	dir := filepath.Join(root, ".cache", "gatewayclients")
	if err := installPinned(dir, []npmPackage{{tsSDKPkg, tsSDKVersion}, {inspectorPkg, inspectorVersion}}); err != nil {
		return err
	}
	tsSDKDir = filepath.Join(dir, "node_modules", tsSDKPkg)
	inspectorJS = filepath.Join(dir, "node_modules", inspectorPkg, "clients", "launcher", "build", "index.js")
	for _, p := range []string{filepath.Join(tsSDKDir, "dist", "esm", "client", "index.js"), inspectorJS} {
		if _, err := os.Stat(p); err != nil {
			return fmt.Errorf("the gateway clients are installed but an entry point is missing: %w", err)
		}
	}
	var err error
	if gatewayClientJS, err = filepath.Abs(filepath.Join("testdata", "gatewayclient.mjs")); err != nil {
		return err
	}
	demoBin, err = testutil.BuildDemo(tmp)
	return err
}

// tsClient is one gatewayclient.mjs process: the TypeScript SDK's Client
// connected to a gateway. Commands go to its stdin; its stdout lines are
// answers (by id) and events, kept in order.
type tsClient struct {
	stdin  *os.File
	stderr *syncBuffer // the script's, and a stdio gateway's, logs
	done   chan struct{}

	mu      sync.Mutex
	nextID  int
	answers map[int]chan tsLine
	events  []tsLine
	signal  chan struct{} // a new event (capacity 1)
	partial []byte        // stdout after its last newline
}

// tsLine is one stdout line of the script, decoded; Raw is the line.
type tsLine struct {
	ID    *int   `json:"id"`
	OK    bool   `json:"ok"`
	Event string `json:"event"`
	Error *struct {
		Code    *int   `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
	Raw json.RawMessage `json:"-"`
}

// startTSClient starts gatewayclient.mjs with env (GW_TRANSPORT and what it
// needs; see the script) in its own process group, and waits until it is
// connected. The process is stopped when the test ends: stdin closed (the
// client closes, a stdio gateway with it), SIGTERM and SIGKILL to its
// group after stopGrace.
func startTSClient(t *testing.T, env ...string) *tsClient {
	t.Helper()
	c := &tsClient{stderr: &syncBuffer{}, done: make(chan struct{}), answers: map[int]chan tsLine{}, signal: make(chan struct{}, 1)}
	cmd := exec.Command("node", gatewayClientJS)
	cmd.Env = append(os.Environ(), append([]string{testutil.MarkerEnv + "=" + marker, "GW_SDK=" + tsSDKDir,
		fmt.Sprintf("GW_DEADLINE_MS=%d", tsClientLife.Milliseconds())}, env...)...)
	cmd.Stdout, cmd.Stderr = writerFunc(c.write), c.stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.WaitDelay = stopGrace
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdin, c.stdin = r, w
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting node: %v", err)
	}
	r.Close()
	pid := cmd.Process.Pid
	go func() { _ = cmd.Wait(); close(c.done) }()
	t.Cleanup(func() {
		c.stdin.Close()
		select {
		case <-c.done:
		case <-time.After(2 * stopGrace):
			t.Errorf("gatewayclient.mjs (pid %d) still running %v after its stdin closed", pid, 2*stopGrace)
		}
		stopGroup(t, pid, c.done)
		if t.Failed() {
			t.Logf("gatewayclient.mjs stderr:\n%s", c.stderr.String())
		}
	})
	c.waitEvent(t, 0, "connected", func(l tsLine) bool {
		if l.Event == "connect_failed" {
			t.Fatalf("the TypeScript client did not connect: %s\n%s", l.Raw, c.stderr.String())
		}
		return l.Event == "connected"
	})
	return c
}

// writerFunc is an io.Writer of a func.
type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// write splits the script's stdout into lines and routes them.
func (c *tsClient) write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.partial = append(c.partial, p...)
	for {
		i := bytes.IndexByte(c.partial, '\n')
		if i < 0 {
			break
		}
		raw := slices.Clone(c.partial[:i])
		c.partial = c.partial[i+1:]
		var l tsLine
		if err := json.Unmarshal(raw, &l); err != nil {
			l = tsLine{Event: "unparsable"}
		}
		l.Raw = raw
		if l.ID != nil && l.Event == "" {
			if ch, ok := c.answers[*l.ID]; ok {
				ch <- l
				delete(c.answers, *l.ID)
			}
			continue
		}
		c.events = append(c.events, l)
		select {
		case c.signal <- struct{}{}:
		default:
		}
	}
	return len(p), nil
}

// send writes a command and returns its id and where its answer arrives.
func (c *tsClient) send(t *testing.T, cmd map[string]any) (int, <-chan tsLine) {
	t.Helper()
	c.mu.Lock()
	c.nextID++
	id := c.nextID
	ch := make(chan tsLine, 1)
	c.answers[id] = ch
	c.mu.Unlock()
	cmd["id"] = id
	line, err := json.Marshal(cmd)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.stdin.Write(append(line, '\n')); err != nil {
		t.Fatalf("writing to gatewayclient.mjs: %v", err)
	}
	return id, ch
}

// await waits (bounded by callTimeout) for the answer on ch.
func (c *tsClient) await(t *testing.T, what string, ch <-chan tsLine) tsLine {
	t.Helper()
	select {
	case l := <-ch:
		return l
	case <-c.done:
		t.Fatalf("%s: gatewayclient.mjs exited\n%s", what, c.stderr.String())
	case <-time.After(callTimeout):
		t.Fatalf("%s: no answer within %v\n%s", what, callTimeout, c.stderr.String())
	}
	return tsLine{}
}

// do sends a command and waits for its answer, decoded into out (if not
// nil) when it succeeded.
func (c *tsClient) do(t *testing.T, cmd map[string]any, out any) tsLine {
	t.Helper()
	_, ch := c.send(t, cmd)
	l := c.await(t, fmt.Sprint(cmd), ch)
	if l.OK && out != nil {
		if err := json.Unmarshal(l.Raw, out); err != nil {
			t.Fatalf("%v: decoding %s: %v", cmd, l.Raw, err)
		}
	}
	return l
}

// eventCount is how many events arrived so far.
func (c *tsClient) eventCount() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.events)
}

// eventsSince returns the events from index since on.
func (c *tsClient) eventsSince(since int) []tsLine {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.events[min(since, len(c.events)):])
}

// eventLog is every event so far, one a line, for a failure message.
func (c *tsClient) eventLog() string {
	var b strings.Builder
	for _, l := range c.eventsSince(0) {
		b.Write(l.Raw)
		b.WriteByte('\n')
	}
	return b.String()
}

// waitEvent waits (bounded by toolsTimeout) for an event at index since or
// later that matches, and returns its index.
func (c *tsClient) waitEvent(t *testing.T, since int, what string, match func(tsLine) bool) int {
	t.Helper()
	deadline := time.After(max(toolsTimeout, readyTimeout))
	for {
		for i, l := range c.eventsSince(since) {
			if match(l) {
				return since + i
			}
		}
		select {
		case <-c.signal:
		case <-c.done:
			t.Fatalf("waiting for %s: gatewayclient.mjs exited; events:\n%s\n%s", what, c.eventLog(), c.stderr.String())
		case <-deadline:
			t.Fatalf("no %s event; events:\n%s\n%s", what, c.eventLog(), c.stderr.String())
		}
	}
}

// tsTool is what the tests read of a listed tool.
type tsTool struct {
	Name         string          `json:"name"`
	OutputSchema json.RawMessage `json:"outputSchema"`
}

// list lists every tool through the client.
func (c *tsClient) list(t *testing.T) []tsTool {
	t.Helper()
	var ans struct{ Tools []tsTool }
	if l := c.do(t, map[string]any{"op": "list"}, &ans); !l.OK {
		t.Fatalf("tools/list through the TypeScript client failed: %s", l.Raw)
	}
	return ans.Tools
}

// awaitTools lists until every name in want is listed, listing again only
// after a notifications/tools/list_changed: the gateway's servers become
// ready one by one after the client connected, so this follows the list
// live. It returns the last list.
func (c *tsClient) awaitTools(t *testing.T, want []string) []tsTool {
	t.Helper()
	since := 0
	for {
		seen := c.eventCount()
		list := c.list(t)
		missing := slices.DeleteFunc(slices.Clone(want), func(name string) bool {
			return slices.ContainsFunc(list, func(tl tsTool) bool { return tl.Name == name })
		})
		if len(missing) == 0 {
			return list
		}
		since = c.waitEvent(t, max(since, seen), fmt.Sprintf("tools_list_changed (still missing %v)", missing),
			func(l tsLine) bool { return l.Event == "tools_list_changed" }) + 1
	}
}

// tsResult is a tools/call result as the TypeScript client returned it.
type tsResult struct {
	Content []struct {
		Type     string `json:"type"`
		Text     string `json:"text"`
		MIMEType string `json:"mimeType"`
	} `json:"content"`
	StructuredContent map[string]any `json:"structuredContent"`
	IsError           bool           `json:"isError"`
}

// call calls a tool through the client and fails the test unless it
// succeeded without isError.
func (c *tsClient) call(t *testing.T, name string, args map[string]any) tsResult {
	t.Helper()
	var ans struct{ Result tsResult }
	l := c.do(t, map[string]any{"op": "call", "name": name, "args": args}, &ans)
	if !l.OK || ans.Result.IsError {
		t.Fatalf("calling %s through the TypeScript client: %s", name, l.Raw)
	}
	return ans.Result
}

// text joins a result's text blocks.
func (r tsResult) text() string {
	var parts []string
	for _, c := range r.Content {
		if c.Type == "text" {
			parts = append(parts, c.Text)
		}
	}
	return strings.Join(parts, "\n")
}
