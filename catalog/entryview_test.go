package catalog

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"
)

// An Entry formatted as is (json.Marshal, fmt, slog) is masked: the
// host's secret is in Config, the storage form, and nowhere else.
func TestEntryFormatsMasked(t *testing.T) {
	const secret = "MARKER-secret-123456"
	home := t.TempDir()
	writeFile(t, home, ".cursor/mcp.json", `{"mcpServers": {"x": {"command": "a", "env": {"K": "`+secret+`", "R": "${env:GITHUB_TOKEN}"}}}}`)
	entries, _ := List(Options{Home: home, GOOS: "linux", Sources: []Source{SourceCursor}})
	if len(entries) != 1 || !strings.Contains(string(entries[0].Config), secret) {
		t.Fatalf("entries %v: the storage form lacks the secret", entries)
	}
	b, err := json.Marshal(entries)
	if err != nil {
		t.Fatal(err)
	}
	var logged bytes.Buffer
	slog.New(slog.NewJSONHandler(&logged, nil)).Info("e", "entry", entries[0])
	for _, text := range []string{string(b), fmt.Sprint(entries), fmt.Sprintf("%#v", entries[0]), logged.String()} {
		if strings.Contains(text, secret) {
			t.Errorf("formatted entry holds the secret: %s", text)
		}
		if !strings.Contains(text, "****") || !strings.Contains(text, `${GITHUB_TOKEN:-}`) {
			t.Errorf("formatted entry lacks the masked config: %s", text)
		}
	}
	var back struct {
		Config struct {
			Command []string `json:"command"`
		} `json:"config"`
	}
	if json.Unmarshal(b[1:len(b)-1], &back) != nil || len(back.Config.Command) != 1 || back.Config.Command[0] != "a" {
		t.Errorf("marshalled entry: %s", b)
	}
	if MaskedConfig(json.RawMessage(`{"command": 1}`)) != nil {
		t.Error("an invalid config is shown")
	}
}
