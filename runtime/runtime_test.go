package runtime

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"image/png"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openprogram/mcpvisor/config"
	"github.com/openprogram/mcpvisor/internal/exampleserver"
	"github.com/openprogram/mcpvisor/internal/testutil"
	"github.com/openprogram/mcpvisor/status"
	"github.com/openprogram/mcpvisor/tools"
)

func TestReadyRegistersNamespacedTools(t *testing.T) {
	rt := start(t, Options{}, exampleServer("ex"))
	st := rt.waitSettled(t, "ex")
	if st.State != status.Ready || !st.Ready || st.Error != "" {
		t.Fatalf("status = %+v, want ready without error", st)
	}
	// The server's twelve tools, and the resource and prompt tools its
	// capabilities call for.
	want := []string{"ex__add", "ex__consult", "ex__described", "ex__echo", "ex__env", "ex__fail", "ex__future", "ex__get_prompt", "ex__image",
		"ex__list_prompts", "ex__list_resources", "ex__read_resource", "ex__resource", "ex__schema", "ex__sleep", "ex__stderr"}
	var got []string
	for _, tool := range rt.Tools() {
		got = append(got, tool.Name)
		if tool.Server != "ex" || "ex__"+tool.OriginalName != tool.Name {
			t.Errorf("tool %q: server %q original %q", tool.Name, tool.Server, tool.OriginalName)
		}
	}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("tools = %v, want %v (sorted)", got, want)
	}
	if st.ToolCount != len(want) || st.PID <= 0 {
		t.Errorf("tool_count = %d, pid = %d", st.ToolCount, st.PID)
	}
	echo, _ := rt.Registry().Get("ex__echo")
	var schema struct {
		Type       string                    `json:"type"`
		Properties map[string]map[string]any `json:"properties"`
	}
	if err := json.Unmarshal(echo.InputSchema, &schema); err != nil || schema.Type != "object" || schema.Properties["text"]["type"] != "string" {
		t.Errorf("echo schema = %s (err %v), want an object with a string property text", echo.InputSchema, err)
	}
	// The schema reaches the host byte for byte: key order and a number
	// beyond float64 intact.
	raw, _ := rt.Registry().Get("ex__schema")
	if string(raw.InputSchema) != exampleserver.RawSchema {
		t.Errorf("schema tool's input schema = %s, want exactly %s", raw.InputSchema, exampleserver.RawSchema)
	}
}

func TestEachContentKind(t *testing.T) {
	rt := start(t, Options{}, exampleServer("ex"))
	rt.waitSettled(t, "ex")
	ctx := context.Background()

	res := mustCall(t, rt, "ex__echo", map[string]any{"text": "héllo"})
	if len(res.Content) != 1 || res.Content[0].Type != tools.ContentText || res.Content[0].Text != "héllo" || res.IsError {
		t.Errorf("echo = %+v", res)
	}
	res = mustCall(t, rt, "ex__add", map[string]any{"a": 2, "b": 40.5})
	if res.Content[0].Text != "42.5" {
		t.Errorf("add = %+v, want 42.5", res)
	}
	res = mustCall(t, rt, "ex__image", nil)
	if len(res.Content) != 1 || res.Content[0].Type != tools.ContentImage || res.Content[0].MIMEType != "image/png" {
		t.Fatalf("image = %+v", res)
	}
	if _, err := png.Decode(bytes.NewReader(res.Content[0].Data)); err != nil {
		t.Errorf("image data is not a PNG: %v", err)
	}
	res = mustCall(t, rt, "ex__resource", nil)
	if len(res.Content) != 1 || res.Content[0].Text != "[resource: demo://resource/1]" {
		t.Errorf("resource = %+v, want the [resource: uri] line", res)
	}
	// A block of a type no MCP version defines becomes a readable line, and
	// the blocks around it survive.
	res = mustCall(t, rt, "ex__future", nil)
	if len(res.Content) != 2 || res.Content[0].Text != "before the future block" || res.Content[1].Text != "[unsupported content: hologram]" {
		t.Errorf("future = %+v", res)
	}
	if _, err := rt.CallTool(ctx, "ex__nope", nil); !errors.Is(err, tools.ErrUnknownTool) {
		t.Errorf("unknown tool err = %v, want ErrUnknownTool", err)
	}
}

func TestIsErrorResult(t *testing.T) {
	rt := start(t, Options{}, exampleServer("ex"))
	rt.waitSettled(t, "ex")
	res := mustCall(t, rt, "ex__fail", nil)
	if !res.IsError || res.Details["is_error"] != true {
		t.Fatalf("fail = %+v, want IsError and details.is_error", res)
	}
	if len(res.Content) == 0 || !strings.Contains(res.Content[0].Text, "fails") {
		t.Errorf("fail content = %+v", res.Content)
	}
}

func TestCallTimeout(t *testing.T) {
	srv := exampleServer("slow")
	srv.TimeoutSeconds = 1
	rt := start(t, Options{}, srv)
	rt.waitSettled(t, "slow")
	_, err := rt.CallTool(context.Background(), "slow__sleep", map[string]any{"ms": 20000})
	if !errors.Is(err, tools.ErrTimeout) {
		t.Fatalf("err = %v, want ErrTimeout", err)
	}
	// The session survives a timed-out call.
	if res := mustCall(t, rt, "slow__echo", map[string]any{"text": "still here"}); res.Content[0].Text != "still here" {
		t.Errorf("echo after timeout = %+v", res)
	}
	// A caller's own cancellation is reported as such, not as our timeout.
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err = rt.CallTool(ctx, "slow__sleep", map[string]any{"ms": 20000})
	if !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, tools.ErrTimeout) {
		t.Errorf("caller deadline err = %v, want context.DeadlineExceeded only", err)
	}
}

func TestMissingCommandFailsAlone(t *testing.T) {
	missing := config.Server{Name: "ghost", Type: config.TypeLocal, Command: []string{"/nonexistent/mcp-server-xyz"}, Enabled: true}
	rt := start(t, Options{}, missing, exampleServer("ok"))
	st := rt.waitSettled(t, "ghost")
	if st.State != status.Failed || st.ErrorKind != status.KindCommandNotFound || !strings.Contains(st.Error, "/nonexistent/mcp-server-xyz") {
		t.Fatalf("ghost status = %+v, want failed/command_not_found naming the command", st)
	}
	if ok := rt.waitSettled(t, "ok"); ok.State != status.Ready {
		t.Fatalf("ok status = %+v; a missing command must not affect other servers", ok)
	}
	for _, tool := range rt.Tools() {
		if tool.Server == "ghost" {
			t.Errorf("tool %q registered for a server that never connected", tool.Name)
		}
	}
}

func TestBrokenServersFailReadably(t *testing.T) {
	cases := []struct {
		name    string
		command []string
		want    string // in the error
	}{
		{"exits", []string{"/bin/sh", "-c", "echo bye >&2; exit 3"}, "bye"},
		{"garbage", []string{demoBin, "serve", "-garbage-stdout"}, "not JSON-RPC"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := exampleServer(tc.name)
			srv.Command = tc.command
			srv.TimeoutSeconds = 5
			rt := start(t, Options{}, srv)
			st := rt.waitSettled(t, tc.name)
			// Retried after the backoff; the status says why meanwhile.
			if st.State != status.Backoff || st.Error == "" || !strings.Contains(st.Error, tc.want) {
				t.Fatalf("status = %+v, want backoff with an error mentioning %q", st, tc.want)
			}
			if len(rt.Tools()) != 0 {
				t.Errorf("tools registered for a broken server: %v", rt.Tools())
			}
		})
	}
}

func TestHungInitializeTimesOut(t *testing.T) {
	srv := exampleServer("hung", "-hang-initialize")
	srv.TimeoutSeconds = 1
	rt := start(t, Options{}, srv, exampleServer("after"))
	st := rt.waitSettled(t, "hung")
	if st.State != status.Backoff || st.ErrorKind != status.KindTimeout {
		t.Fatalf("status = %+v, want backoff/timeout", st)
	}
	// Startup goes on with the next server.
	if st := rt.waitSettled(t, "after"); st.State != status.Ready {
		t.Fatalf("next server = %+v, want ready", st)
	}
}

func TestShutdownWithCallInFlight(t *testing.T) {
	for _, flags := range [][]string{nil, {"-ignore-sigterm"}} {
		t.Run(strings.Join(append([]string{"plain"}, flags...), ""), func(t *testing.T) {
			rt := start(t, Options{StopGrace: 300 * time.Millisecond}, exampleServer("ex", flags...))
			rt.waitSettled(t, "ex")
			var wg sync.WaitGroup
			var callErr error
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, callErr = rt.CallTool(context.Background(), "ex__sleep", map[string]any{"ms": 60000})
			}()
			waitForStderr(t, rt, "sleeping")
			// The bound is the stop sequence (two graces and the pipe
			// wait) plus a wide margin for a loaded machine: a design that
			// waits for the call (60 s) or for the SDK's own 5 s
			// terminate periods cannot meet it.
			grace := rt.opts.StopGrace
			ctx, cancel := context.WithTimeout(context.Background(), 3*grace+3*time.Second)
			defer cancel()
			if err := rt.Shutdown(ctx); err != nil {
				t.Fatalf("Shutdown with a call in flight: %v", err)
			}
			wg.Wait()
			if !errors.Is(callErr, tools.ErrSessionClosed) {
				t.Errorf("in-flight call err = %v, want ErrSessionClosed", callErr)
			}
			if len(rt.Tools()) != 0 {
				t.Errorf("tools still registered after shutdown")
			}
			for _, st := range rt.Status().Servers {
				if st.State != status.Stopped || st.Ready || st.ToolCount != 0 || st.PID != 0 {
					t.Errorf("status after shutdown = %+v, want stopped with no tools or pid", st)
				}
			}
		})
	}
}

func TestSecretsNeverShown(t *testing.T) {
	const secret = "sk-planted-secret-8f3a1c"
	srv := exampleServer("ex")
	srv.Env["API_KEY"] = secret
	missing := config.Server{Name: "ghost", Type: config.TypeLocal, Command: []string{"/nonexistent/" + "cmd"}, Env: map[string]string{"TOKEN": secret}, Enabled: true}
	rt := start(t, Options{}, srv, missing)
	rt.waitSettled(t, "ex")
	rt.waitSettled(t, "ghost")

	// The server really got it (env merged over the parent's)...
	res := mustCall(t, rt, "ex__env", map[string]any{"name": "API_KEY"})
	if res.Content[0].Text != secret {
		t.Fatalf("env tool = %+v: the secret did not reach the server", res)
	}
	if res := mustCall(t, rt, "ex__env", map[string]any{"name": "PATH"}); res.Content[0].Text == "" {
		t.Errorf("PATH not inherited from the parent environment")
	}
	// ...and when the server prints it, neither the log nor the status shows it.
	mustCall(t, rt, "ex__stderr", map[string]any{"text": "my key is " + secret})
	waitForStderr(t, rt, "my key is")
	st, _ := json.Marshal(rt.Status())
	for what, text := range map[string]string{"logs": rt.logs.String(), "status": string(st)} {
		if strings.Contains(text, secret) {
			t.Errorf("secret appears in %s", what)
		}
	}
	if !strings.Contains(string(st), "my key is [redacted]") {
		t.Errorf("stderr tail lacks the redacted line: %s", st)
	}
}

// A server that quotes its secret back in a protocol error (here: to
// every request, initialize included) has it scrubbed from status and logs.
func TestSecretInServerErrorScrubbed(t *testing.T) {
	const secret = "sk-echoed-by-server-55ab"
	script := `while read -r line; do id=$(printf '%s' "$line" | sed -n 's/.*"id":\([0-9][0-9]*\).*/\1/p'); ` +
		`[ -n "$id" ] && printf '{"jsonrpc":"2.0","id":%s,"error":{"code":-32000,"message":"bad key %s"}}\n' "$id" "$API_KEY"; done`
	srv := exampleServer("echoer")
	srv.Command = []string{"/bin/sh", "-c", script}
	srv.Env["API_KEY"] = secret
	srv.TimeoutSeconds = 5
	rt := start(t, Options{}, srv)
	st := rt.waitSettled(t, "echoer")
	if st.State != status.Backoff || !strings.Contains(st.Error, "bad key [redacted]") {
		// Never print the planted secret itself, even when failing.
		t.Fatalf("status = %s, want failed quoting the redacted server error", strings.ReplaceAll(fmt.Sprintf("%+v", st), secret, "<PLANTED SECRET>"))
	}
	statusJSON, _ := json.Marshal(rt.Status())
	if strings.Contains(string(statusJSON), secret) || strings.Contains(rt.logs.String(), secret) {
		t.Fatalf("the secret the server echoed reached status or logs")
	}
}

func mustCall(t *testing.T, rt *testRuntime, name string, args any) tools.Result {
	t.Helper()
	res, err := rt.CallTool(context.Background(), name, args)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return res
}

// waitForStderr waits until a server's stderr line containing text reached
// the runtime.
func waitForStderr(t *testing.T, rt *testRuntime, text string) {
	t.Helper()
	testutil.Eventually(t, 10*time.Second, fmt.Sprintf("a stderr line containing %q", text), func() bool { return strings.Contains(rt.logs.String(), text) })
}
