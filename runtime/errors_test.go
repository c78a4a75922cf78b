package runtime

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/openprogram/mcpvisor/config"
	"github.com/openprogram/mcpvisor/internal/testutil/oauthfake"
	"github.com/openprogram/mcpvisor/messages"
	"github.com/openprogram/mcpvisor/status"
)

// TestSentinelsOnRealFailures: each exported sentinel matches, with
// errors.Is, the error a real failure of the Go API returns. The ones a
// cheap failure cannot produce are proved where that failure is set up:
// ErrNeedsLogin, ErrServerDied and the config file's below, ErrSuperseded
// (races_test.go), ErrProcessesLinger (errors_linux_test.go),
// ErrSessionClosed and ErrResponseTooLarge (bounded_test.go).
func TestSentinelsOnRealFailures(t *testing.T) {
	slow := exampleServer("slow")
	slow.TimeoutSeconds = 1
	off := exampleServer("off")
	off.Enabled = false
	rt := start(t, Options{}, exampleServer("ex"), slow, off)
	rt.waitSettled(t, "ex")
	rt.waitSettled(t, "slow")
	ctx := context.Background()
	kept := func(name string) func() error {
		for _, tool := range rt.Tools() {
			if tool.Name == name {
				return func() error { _, err := tool.Execute(ctx, map[string]any{"text": "x"}); return err }
			}
		}
		t.Fatalf("no tool %s in %v", name, rt.Tools())
		return nil
	}
	echoAfterDisable := kept("slow__echo")

	tests := []struct {
		name string
		want error
		fail func() error
	}{
		{"Server of an unknown name", ErrUnknownServer, func() error { _, err := rt.Server("nope"); return err }},
		{"RestartServer of an unknown name", ErrUnknownServer, func() error { _, err := rt.RestartServer(ctx, "nope"); return err }},
		{"AddServer of a taken name", ErrServerExists, func() error { _, err := rt.AddServer(ctx, exampleServer("ex")); return err }},
		{"RestartServer of a disabled server", ErrDisabled, func() error { _, err := rt.RestartServer(ctx, "off"); return err }},
		{"PATCH whose restart fails", ErrRestartFailed, func() error {
			_, err := rt.PatchServer(ctx, "ex", []byte(`{"command": ["/nonexistent/mcp-server-xyz"]}`))
			return err
		}},
		{"AddServer of an invalid entry", ErrInvalidConfig, func() error {
			_, err := rt.AddServer(ctx, config.Server{Name: "bad", Type: config.TypeLocal, Enabled: true})
			return err
		}},
		{"PATCH with an invalid field", ErrInvalidConfig, func() error {
			_, err := rt.PatchServer(ctx, "ex", []byte(`{"timeout_seconds": -1}`))
			return err
		}},
		{"CallTool of an unknown tool", ErrUnknownTool, func() error { _, err := rt.CallTool(ctx, "ex__nope", nil); return err }},
		{"GetPrompt of an unknown prompt", ErrUnknownPrompt, func() error { _, err := rt.GetPrompt(ctx, "ex__nope", nil); return err }},
		{"CallTool past timeout_seconds", ErrCallTimeout, func() error {
			_, err := rt.CallTool(ctx, "slow__sleep", map[string]any{"ms": 20000})
			return err
		}},
		{"a kept tool of a disabled server", ErrNotReady, func() error {
			if _, err := rt.PatchServer(ctx, "slow", []byte(`{"enabled": false}`)); err != nil {
				t.Fatal(err)
			}
			return echoAfterDisable()
		}},
	}
	for _, tt := range tests {
		err := tt.fail()
		if !errors.Is(err, tt.want) {
			t.Errorf("%s: %v, want it to match %v", tt.name, err, tt.want)
		}
	}
	if err := rt.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := rt.Reload(ctx); !errors.Is(err, ErrShuttingDown) {
		t.Errorf("Reload after Shutdown: %v, want ErrShuttingDown", err)
	}
}

// TestSentinelsOfTheConfigFile: a config file that does not parse, or is
// too large, makes a write fail with ErrConfigUnparsable (and
// ErrConfigTooLarge), and the file stays as it was.
func TestSentinelsOfTheConfigFile(t *testing.T) {
	for name, tt := range map[string]struct {
		content []byte
		want    []error
	}{
		"unparsable": {[]byte(`{"mcpServers": {`), []error{ErrConfigUnparsable}},
		"too large":  {[]byte(`{"mcpServers": {}}` + strings.Repeat(" ", config.MaxFileSize)), []error{ErrConfigUnparsable, ErrConfigTooLarge}},
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "mcp_servers.json")
			if err := os.WriteFile(path, tt.content, 0o600); err != nil {
				t.Fatal(err)
			}
			rt := startIn(t, dir, Options{})
			_, err := rt.AddServer(context.Background(), exampleServer("ex"))
			for _, want := range tt.want {
				if !errors.Is(err, want) {
					t.Errorf("AddServer: %v, want it to match %v", err, want)
				}
			}
			if got, _ := os.ReadFile(path); len(got) != len(tt.content) {
				t.Errorf("the refused write changed the file (%d bytes, was %d)", len(got), len(tt.content))
			}
		})
	}
}

// TestErrNeedsLogin: a call that meets a revoked token whose refresh is
// refused returns ErrNeedsLogin, and the server waits in needs_auth.
func TestErrNeedsLogin(t *testing.T) {
	as := oauthfake.New(t)
	dir := loggedIn(t, as)
	rt := startIn(t, dir, Options{OpenURL: (&browser{}).open, Restart: RestartPolicy{Initial: 10 * time.Millisecond}})
	// Ready shows before the tools are registered (a registered tool
	// always belongs to a ready server, not the other way round): waitFor
	// waits for the ToolsChanged that follows.
	rt.waitFor(t, "web", status.Ready)
	as.With(func(a *oauthfake.State) { a.RefuseRefresh = true })
	as.RevokeAccess()
	_, err := rt.CallTool(context.Background(), "web__echo", map[string]any{"text": "x"})
	if !errors.Is(err, ErrNeedsLogin) {
		t.Errorf("call with a revoked token and a refused refresh: %v, want it to match ErrNeedsLogin", err)
	}
	if st := rt.waitFor(t, "web", status.NeedsAuth); st.ErrorKind != status.KindNeedsReauth {
		t.Errorf("status %+v, want needs_auth", st)
	}
	// Later calls find the tool unregistered, and are told why.
	_, err = rt.CallTool(context.Background(), "web__echo", map[string]any{"text": "x"})
	if !errors.Is(err, ErrNeedsLogin) || !errors.Is(err, ErrUnknownTool) {
		t.Errorf("call while the server needs a login: %v, want it to match ErrNeedsLogin and ErrUnknownTool", err)
	}
	if _, err := rt.CallTool(context.Background(), "webx__echo", nil); errors.Is(err, ErrNeedsLogin) {
		t.Errorf("call of another server's name: %v, must not match ErrNeedsLogin", err)
	}
}

// TestErrServerDied: a restart that waits on a server actor which dies
// (an injected panic) returns ErrServerDied. The restart is sent to the
// manager before the injection, so the manager sees them in that order.
func TestErrServerDied(t *testing.T) {
	hung := exampleServer("hung", "-hang-initialize")
	rt := start(t, Options{Debug: true, Restart: RestartPolicy{Initial: time.Hour}}, hung)
	reply := make(chan error, 1)
	rt.system.Root.Send(rt.manager, messages.RestartServer{Name: "hung", Reply: reply})
	if err := rt.InjectFailure(context.Background(), "manager/hung", "panic"); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-reply:
		if !errors.Is(err, ErrServerDied) {
			t.Fatalf("restart while its actor died: %v, want it to match ErrServerDied", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("no answer to the restart after its actor died")
	}
}
