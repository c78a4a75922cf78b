package runtime

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/openprogram/mcpvisor/events"
	"github.com/openprogram/mcpvisor/internal/exampleserver"
	"github.com/openprogram/mcpvisor/internal/mcpconn"
	"github.com/openprogram/mcpvisor/internal/testutil"
	"github.com/openprogram/mcpvisor/status"
)

// writeInstructions makes text the example server's extra instructions
// at its next start.
func writeInstructions(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestServerIdentity: the example server's info, protocol version and
// instructions (with a planted secret scrubbed) reach status, the server
// entry, Instructions() and the events; a restart that brings a new text
// emits InstructionsChanged before the server shows ready again, one that
// brings the same text emits none; a disable clears them.
func TestServerIdentity(t *testing.T) {
	const secret = "sk-instructions-planted-7731"
	path := filepath.Join(t.TempDir(), "instructions.txt")
	writeInstructions(t, path, "v1: the key is "+secret+" ("+base64.StdEncoding.EncodeToString([]byte(secret))+")")
	ex := exampleServer("ex", "-instructions-file", path)
	ex.Env["API_KEY"] = secret
	rt := start(t, Options{}, ex)
	sub := rt.Subscribe(events.SubscribeOptions{Server: "ex", From: 1, Buffer: 1 << 14})
	t.Cleanup(sub.Close)
	var seen []events.Event
	record := func(e events.Event) events.Event { seen = append(seen, e); return e }

	started := record(testutil.Await(t, sub, 30*time.Second, "ex's session", func(events.SessionStarted) bool { return true })).(events.SessionStarted)
	first := record(testutil.Await(t, sub, 10*time.Second, "ex's first instructions", func(events.InstructionsChanged) bool { return true })).(events.InstructionsChanged)
	record(testutil.Await(t, sub, 10*time.Second, "ex ready", func(e events.StateChanged) bool { return e.To == "ready" }))
	if !strings.HasPrefix(first.Instructions, "Example server for mcpvisor") || !strings.Contains(first.Instructions, "v1: the key is [redacted] ([redacted])") {
		t.Errorf("first instructions = %q, want the fixed text and v1 with the key scrubbed", first.Instructions)
	}
	info := started.ServerInfo
	if info == nil || info.Name != exampleserver.DefaultName || info.Title != exampleserver.Title || info.Version != "0.1.0" || info.WebsiteURL != exampleserver.WebsiteURL ||
		len(info.Icons) != 2 || info.Icons[1].Src != exampleserver.IconURL || info.Icons[1].Theme != "dark" || started.ProtocolVersion == "" {
		t.Fatalf("session started = %+v (info %+v), want the example server's info and a protocol version", started, info)
	}

	st := mustStatus(t, rt, "ex")
	if st.Instructions != first.Instructions || st.ProtocolVersion != started.ProtocolVersion || st.ServerInfo == nil || st.ServerInfo.Title != exampleserver.Title {
		t.Errorf("status = %+v, want the session's info, protocol and instructions", st)
	}
	if got := rt.Instructions(); len(got) != 1 || got[0] != (ServerInstructions{Server: "ex", Instructions: first.Instructions, Ready: true}) {
		t.Errorf("Instructions() = %+v, want ex's, ready", got)
	}
	api := newAPI(t, rt)
	var list struct {
		Servers []map[string]json.RawMessage `json:"servers"`
	}
	api.do("GET", "/api/mcp/servers", "").want(t, http.StatusOK).decode(t, &list)
	detail := api.do("GET", "/api/mcp/servers/ex", "").want(t, http.StatusOK)
	var entry map[string]json.RawMessage
	detail.decode(t, &entry)
	for where, e := range map[string]map[string]json.RawMessage{"list": list.Servers[0], "detail": entry} {
		var got struct {
			Info struct {
				Name, Title string
				Icons       []struct{ Src string }
			}
			Protocol, Instructions string
		}
		_ = json.Unmarshal(e["server_info"], &got.Info)
		_ = json.Unmarshal(e["protocol_version"], &got.Protocol)
		_ = json.Unmarshal(e["instructions"], &got.Instructions)
		if got.Info.Title != exampleserver.Title || len(got.Info.Icons) != 2 || got.Protocol != started.ProtocolVersion || got.Instructions != first.Instructions {
			t.Errorf("%s entry: server_info %s protocol_version %s instructions %.60s…", where, e["server_info"], e["protocol_version"], e["instructions"])
		}
	}

	// A new text at the next start: InstructionsChanged, before ready.
	writeInstructions(t, path, "v2: call echo first")
	if _, err := rt.RestartServer(context.Background(), "ex"); err != nil {
		t.Fatal(err)
	}
	second := record(testutil.AwaitEvent(t, sub, 30*time.Second, "the new instructions, before ready", func(e events.Event) bool {
		if sc, ok := e.(events.StateChanged); ok && sc.To == "ready" {
			t.Fatalf("ex ready again before its new instructions")
		}
		_, ok := e.(events.InstructionsChanged)
		return ok
	})).(events.InstructionsChanged)
	if !strings.HasSuffix(second.Instructions, "\nv2: call echo first") {
		t.Errorf("second instructions = %q, want v2", second.Instructions)
	}
	record(testutil.Await(t, sub, 10*time.Second, "ex ready again", func(e events.StateChanged) bool { return e.To == "ready" }))
	if got := rt.Instructions(); len(got) != 1 || got[0].Instructions != second.Instructions {
		t.Errorf("Instructions() after the change = %+v", got)
	}

	// The same text again: a session, no InstructionsChanged.
	if _, err := rt.RestartServer(context.Background(), "ex"); err != nil {
		t.Fatal(err)
	}
	var sessions int
	record(testutil.AwaitEvent(t, sub, 30*time.Second, "the same text's session ready, with no instructions event", func(e events.Event) bool {
		switch e := e.(type) {
		case events.InstructionsChanged:
			t.Fatalf("instructions event for a session with the same text: %v", e)
		case events.SessionStarted:
			sessions++
			// The same info as the first session's, in a copy of its own: a
			// host that changes one event changes no other.
			if e.ServerInfo == started.ServerInfo || !reflect.DeepEqual(e.ServerInfo, started.ServerInfo) {
				t.Errorf("server info %+v, want an equal copy of the first session's %+v", e.ServerInfo, started.ServerInfo)
			}
		case events.StateChanged:
			return e.To == "ready"
		}
		return false
	}))
	if sessions != 1 {
		t.Errorf("%d sessions started before ready, want 1", sessions)
	}

	// Disabled: the text goes, with an event; no server info is shown.
	if _, err := rt.PatchServer(context.Background(), "ex", []byte(`{"enabled": false}`)); err != nil {
		t.Fatal(err)
	}
	cleared := record(testutil.Await(t, sub, 10*time.Second, "the instructions cleared", func(events.InstructionsChanged) bool { return true })).(events.InstructionsChanged)
	if cleared.Instructions != "" {
		t.Errorf("instructions on disable = %q, want none", cleared.Instructions)
	}
	testutil.Await(t, sub, 10*time.Second, "ex disabled", func(e events.StateChanged) bool { return e.To == string(status.Disabled) })
	if st := mustStatus(t, rt, "ex"); st.ServerInfo != nil || st.ProtocolVersion != "" || st.Instructions != "" || len(rt.Instructions()) != 0 {
		t.Errorf("disabled status = %+v, Instructions() = %+v: want no identity", st, rt.Instructions())
	}

	// The HTTP event stream, from the first event to the clearing.
	var texts []string
	c := openEvents(t, eventsServer(t, rt.Runtime), "/api/mcp/events?server=ex&last_event_id=other-1", nil)
	for {
		f := c.read(t, 1)[0]
		texts = append(texts, f.raw)
		if f.typ == events.TypeInstructionsChanged && f.str("instructions") == "" {
			break
		}
	}
	for _, e := range seen {
		data, _ := json.Marshal(e)
		texts = append(texts, string(data), e.String())
	}
	assertScrubbed(t, rt, []string{secret}, append(texts, string(detail.body))...)
}

// TestServerIdentityBounded: instructions over the bound are cut on a
// rune boundary and marked, in status and in the event alike.
func TestServerIdentityBounded(t *testing.T) {
	path := filepath.Join(t.TempDir(), "instructions.txt")
	writeInstructions(t, path, strings.Repeat("é", mcpconn.MaxInstructionsBytes)) // twice the bound in bytes
	rt := start(t, Options{}, exampleServer("big", "-instructions-file", path))
	sub := rt.Subscribe(events.SubscribeOptions{Server: "big", From: 1, Buffer: 1 << 14})
	t.Cleanup(sub.Close)
	e := testutil.Await(t, sub, 30*time.Second, "big's instructions", func(events.InstructionsChanged) bool { return true })
	text := e.Instructions
	body, ok := strings.CutSuffix(text, mcpconn.InstructionsTruncated)
	if !ok || len(body) > mcpconn.MaxInstructionsBytes || len(body) < mcpconn.MaxInstructionsBytes-utf8.UTFMax || !utf8.ValidString(text) {
		t.Errorf("instructions of %d bytes (valid UTF-8 %v, marked %v), want at most %d and the marker", len(text), utf8.ValidString(text), ok, mcpconn.MaxInstructionsBytes)
	}
	rt.waitReady(t, "big")
	if st := mustStatus(t, rt, "big"); st.Instructions != text {
		t.Errorf("status holds %d bytes of instructions, the event %d", len(st.Instructions), len(text))
	}
}
