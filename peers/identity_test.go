//go:build unix

package peers_test

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/openprogram/mcpvisor/events"
	"github.com/openprogram/mcpvisor/internal/testutil"
	"github.com/openprogram/mcpvisor/runtime"
)

// TestEverythingIdentity: server-everything's server info, negotiated
// protocol version and instructions (its docs/instructions.md, which it
// reads at start and sends whole) reach the session event, the
// instructions event, the server entry over Go and HTTP, and
// Instructions(), on every transport.
func TestEverythingIdentity(t *testing.T) {
	want, err := os.ReadFile(filepath.Join(filepath.Dir(everythingJS), "docs", "instructions.md"))
	if err != nil {
		t.Fatalf("reading what server-everything sends as instructions: %v", err)
	}
	for _, transport := range []string{"stdio", "sse", "streamableHttp"} {
		t.Run(transport, func(t *testing.T) {
			srv, keep := everythingServer(t, transport)
			rt := startRuntime(t, keep, srv)
			sub := rt.Subscribe(events.SubscribeOptions{Server: "everything", From: 1, Buffer: 1 << 14})
			t.Cleanup(sub.Close)
			started := testutil.Await(t, sub, readyTimeout, "everything's session", func(events.SessionStarted) bool { return true })
			info := started.ServerInfo
			if info == nil || info.Name != "mcp-servers/everything" || info.Title != "Everything Reference Server" || info.Version != "2.0.0" {
				t.Errorf("server info = %+v, want mcp-servers/everything, its title and version 2.0.0", info)
			}
			// The SDK asks for 2026-07-28 first; server-everything
			// answers with the newest it knows.
			if started.ProtocolVersion != "2025-11-25" {
				t.Errorf("protocol version %q, want 2025-11-25", started.ProtocolVersion)
			}
			got := testutil.Await(t, sub, readyTimeout, "everything's instructions", func(events.InstructionsChanged) bool { return true })
			if got.Instructions != string(want) {
				t.Errorf("instructions event: %d bytes, want the %d of instructions.md", len(got.Instructions), len(want))
			}
			rt.waitReady(t, "everything")

			entry, err := rt.Server("everything")
			if err != nil {
				t.Fatal(err)
			}
			if entry.Instructions != string(want) || entry.ProtocolVersion != started.ProtocolVersion || entry.ServerInfo == nil || entry.ServerInfo.Title != info.Title {
				t.Errorf("entry: %d bytes of instructions, protocol %q, info %+v", len(entry.Instructions), entry.ProtocolVersion, entry.ServerInfo)
			}
			if list := rt.Instructions(); len(list) != 1 || list[0] != (runtime.ServerInstructions{Server: "everything", Instructions: string(want), Ready: true}) {
				t.Errorf("Instructions() = %d entries, want everything's, ready", len(list))
			}

			rec := serveAPI(rt.Handler(), http.MethodGet, "/api/mcp/servers/everything", "")
			var body struct {
				ServerInfo struct {
					Name    string `json:"name"`
					Title   string `json:"title"`
					Version string `json:"version"`
				} `json:"server_info"`
				ProtocolVersion string `json:"protocol_version"`
				Instructions    string `json:"instructions"`
			}
			if rec.Code != http.StatusOK || json.Unmarshal(rec.Body.Bytes(), &body) != nil {
				t.Fatalf("GET the server: %d %.200s", rec.Code, rec.Body)
			}
			if body.Instructions != string(want) || body.ProtocolVersion != started.ProtocolVersion ||
				body.ServerInfo.Name != info.Name || body.ServerInfo.Title != info.Title || body.ServerInfo.Version != info.Version {
				t.Errorf("HTTP entry: server_info %+v, protocol_version %q, %d bytes of instructions", body.ServerInfo, body.ProtocolVersion, len(body.Instructions))
			}
		})
	}
}
