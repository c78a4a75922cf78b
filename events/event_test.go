package events

import (
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"log/slog"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/openprogram/mcpvisor/tools"
)

var (
	at   = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	head = Header{Server: "fs", Time: at, Seq: 7}
)

// everyType holds one of each event type, with its own fields as JSON
// must show them, and a piece of its String().
var everyType = []struct {
	e      Event
	fields map[string]any
	text   string
}{
	{ServerAdded{Header: head}, nil, "fs: added"},
	{ServerRemoved{Header: head}, nil, "fs: removed"},
	{StateChanged{Header: head, From: "ready", To: "backoff", Error: "exit status 1", ErrorKind: "session_lost",
		NextRetryAt: at.Add(800 * time.Millisecond), Restarts: 2},
		map[string]any{"from": "ready", "to": "backoff", "error": "exit status 1", "error_kind": "session_lost",
			"next_retry_at": "2026-12-01T12:00:00.8Z", "restarts": 2.0},
		"state ready -> backoff (restarts 2, next retry 2026-12-01T12:00:00.8Z, session_lost): exit status 1"},
	{SessionStarted{Header: head, PID: 4242, ProtocolVersion: "2025-06-18",
		ServerInfo: &ServerInfo{Name: "disk", Title: "Disk", Version: "1.2", WebsiteURL: "https://disk.example",
			Icons: []tools.Icon{{Src: "https://disk.example/i.png", MIMEType: "image/png", Sizes: []string{"48x48"}}}}},
		map[string]any{"pid": 4242.0, "protocol_version": "2025-06-18", "server_info": map[string]any{
			"name": "disk", "title": "Disk", "version": "1.2", "website_url": "https://disk.example",
			"icons": []any{map[string]any{"src": "https://disk.example/i.png", "mime_type": "image/png", "sizes": []any{"48x48"}}}}},
		"session started (pid 4242) protocol 2025-06-18 server disk 1.2"},
	{InstructionsChanged{Header: head, Instructions: "Use read before write."},
		map[string]any{"instructions": "Use read before write."}, "instructions changed (22 bytes)"},
	{SessionLost{Header: head, Error: "EOF", ExitStatus: "signal: killed"},
		map[string]any{"error": "EOF", "exit_status": "signal: killed"}, "session lost (signal: killed): EOF"},
	{ToolsChanged{Header: head, Count: 3, Added: []string{"read"}},
		map[string]any{"count": 3.0, "added": []any{"read"}, "removed": []any{}, "filtered": 0.0}, "3 tools +read"},
	{PromptsChanged{Header: head, Count: 1, Removed: []string{"old"}, AddedMore: 2, RemovedMore: 5},
		map[string]any{"count": 1.0, "added": []any{}, "added_more": 2.0, "removed": []any{"old"}, "removed_more": 5.0},
		"1 prompts (+2 more) -old (-5 more)"},
	{LoginRequired{Header: head, AuthorizeURL: "https://as.example/authorize?state=s"},
		map[string]any{"authorize_url": "https://as.example/authorize?state=s"}, "login required at https://as.example"},
	{LoginCompleted{Header: head}, nil, "login completed"},
	{LoginFailed{Header: head, Error: "access_denied"}, map[string]any{"error": "access_denied"}, "login failed: access_denied"},
	{TokenRefreshed{Header: head}, nil, "token refreshed"},
	{RefreshRefused{Header: head, Error: "invalid_grant"}, map[string]any{"error": "invalid_grant"}, "refresh refused: invalid_grant"},
	{ActorPanicked{Header: head, Path: "manager/fs", Value: "boom"},
		map[string]any{"path": "manager/fs", "value": "boom"}, "actor manager/fs panicked: boom"},
	{ConfigSaved{Header: Header{Time: at, Seq: 7}}, nil, "#7 config saved"},
	{ConfigLoaded{Header: Header{Time: at, Seq: 7}}, nil, "#7 config loaded"},
	{ConfigRejected{Header: Header{Time: at, Seq: 7}, Error: "line 3: unknown field"},
		map[string]any{"error": "line 3: unknown field"}, "#7 config rejected: line 3"},
	{ServerLog{Header: head, Level: "info", Logger: "disk", Text: "mounted"},
		map[string]any{"level": "info", "logger": "disk", "text": "mounted"}, "[info] disk: mounted"},
	{RequestRefused{Header: head, Method: "sampling/createMessage", Limit: "rate", Suppressed: 3},
		map[string]any{"method": "sampling/createMessage", "limit": "rate", "suppressed": 3.0}, "refused sampling/createMessage (rate), 3 more not shown"},
	{ResourceUpdated{Header: head, URI: "demo://notes/7"},
		map[string]any{"uri": "demo://notes/7"}, "resource updated: demo://notes/7"},
	{ResourcesChanged{Header: head}, map[string]any{}, "resource list changed"},
	{StartingOutput{Header: head, Line: "fetching packages 3/20"},
		map[string]any{"line": "fetching packages 3/20"}, "starting: fetching packages 3/20"},
	{OutputSchemaUnusable{Header: head, Tool: "weather", Error: "remote $ref"},
		map[string]any{"tool": "weather", "error": "remote $ref"}, `output schema of tool "weather" unusable; its results go unchecked: remote $ref`},
	{Dropped{Header: head, N: 12}, map[string]any{"n": 12.0}, "dropped 12 events"},
}

func TestEveryTypeHasTypeStringAndJSON(t *testing.T) {
	seen := map[string]bool{}
	for _, tc := range everyType {
		typ := tc.e.Type()
		if typ == "" || strings.ToLower(typ) != typ || seen[typ] {
			t.Errorf("%T: Type() = %q, want a new snake_case name", tc.e, typ)
		}
		seen[typ] = true
		if s := tc.e.String(); !strings.Contains(s, tc.text) || !strings.HasPrefix(s, "#7 ") {
			t.Errorf("%T: String() = %q, want #7 … %q", tc.e, s, tc.text)
		}
		data, err := json.Marshal(tc.e)
		if err != nil {
			t.Fatalf("%T: marshalling: %v", tc.e, err)
		}
		var got map[string]any
		if err := json.Unmarshal(data, &got); err != nil {
			t.Fatalf("%T: reading back %s: %v", tc.e, data, err)
		}
		want := map[string]any{"seq": 7.0, "type": typ, "server": tc.e.Head().Server, "time": "2026-12-01T12:00:00Z"}
		for k, v := range tc.fields {
			want[k] = v
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%T: JSON %s\nwant %v", tc.e, data, want)
		}
	}
}

// TestTableCoversTheClosedSet keeps everyType honest: every type of the
// package that implements Event (has a stamp method) is in it.
func TestTableCoversTheClosedSet(t *testing.T) {
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatalf("listing the package: %v", err)
	}
	var files []*ast.File
	for _, ent := range entries {
		if name := ent.Name(); strings.HasSuffix(name, ".go") && !strings.HasSuffix(name, "_test.go") {
			f, err := parser.ParseFile(token.NewFileSet(), name, nil, 0)
			if err != nil {
				t.Fatalf("parsing %s: %v", name, err)
			}
			files = append(files, f)
		}
	}
	inTable := map[string]bool{}
	for _, tc := range everyType {
		inTable[reflect.TypeOf(tc.e).Name()] = true
	}
	n := 0
	for _, f := range files {
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Name.Name != "stamp" || fn.Recv == nil {
				continue
			}
			n++
			name := fn.Recv.List[0].Type.(*ast.Ident).Name
			if !inTable[name] {
				t.Errorf("event type %s is not in everyType", name)
			}
		}
	}
	if n != len(everyType) {
		t.Errorf("%d event types in the package, %d in everyType", n, len(everyType))
	}
}

// ToolsChanged says how many tools the filter left out, in its JSON
// (always, 0 too) and its String (when any).
func TestToolsChangedFiltered(t *testing.T) {
	e := ToolsChanged{Header: head, Count: 2, Removed: []string{"write"}, Filtered: 4}
	data, _ := json.Marshal(e)
	var got map[string]any
	if err := json.Unmarshal(data, &got); err != nil || got["filtered"] != 4.0 {
		t.Errorf("JSON %s, want filtered 4", data)
	}
	if s := e.String(); !strings.HasSuffix(s, "2 tools -write (4 filtered out)") {
		t.Errorf("String() = %q", s)
	}
}

func TestRemoteSessionAndQuietFields(t *testing.T) {
	data, _ := json.Marshal(SessionStarted{Header: head, ProtocolVersion: "2025-06-18"})
	if strings.Contains(string(data), "pid") {
		t.Errorf("a remote session's JSON %s has a pid", data)
	}
	if strings.Contains(string(data), "server_info") {
		t.Errorf("a session without server info has one in its JSON %s", data)
	}
	data, _ = json.Marshal(InstructionsChanged{Header: head})
	if !strings.Contains(string(data), `"instructions":""`) || !strings.Contains((InstructionsChanged{Header: head}).String(), "cleared") {
		t.Errorf("instructions that went away: JSON %s, want an empty instructions member, and a String saying cleared", data)
	}
	data, _ = json.Marshal(StateChanged{Header: head, From: "starting", To: "ready"})
	for _, k := range []string{"next_retry_at", "error"} {
		if strings.Contains(string(data), k) {
			t.Errorf("JSON of a plain state change %s has %s", data, k)
		}
	}
}

// A server's MCP log levels map onto slog's as the runtime has always
// logged them.
func TestServerLogLevel(t *testing.T) {
	for level, want := range map[string]slog.Level{
		"debug": slog.LevelDebug, "info": slog.LevelInfo, "notice": slog.LevelInfo, "stderr": slog.LevelInfo,
		"warning": slog.LevelWarn, "error": slog.LevelError, "critical": slog.LevelError,
		"alert": slog.LevelError, "emergency": slog.LevelError, "shouting": slog.LevelError, LevelUnknown: slog.LevelError,
	} {
		if got := (ServerLog{Level: level}).LogLevel(); got != want {
			t.Errorf("LogLevel of %q = %v, want %v", level, got, want)
		}
	}
}
