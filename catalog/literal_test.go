package catalog

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// A field mcpvisor takes no references in (auth.client_id, auth.scopes,
// tools) gets a host value the host would expand not at all, with a
// warning naming the field and the variable (only one shaped like an
// environment variable); a literal value is stored as the host reads it,
// unescaped, since that field is never expanded.
func TestNoReferenceFieldsAreNotGivenReferences(t *testing.T) {
	home := t.TempDir()
	writeFile(t, home, ".config/opencode/opencode.json", `{"mcp": {
		"o": {"type": "remote", "url": "https://o.example/mcp",
		      "oauth": {"clientId": "{env:OC_ID}", "clientSecret": "{env:OC_SECRET}", "scope": "{env:OC_SCOPE} read"}}
	}}`)
	writeFile(t, home, ".cursor/mcp.json", `{"mcpServers": {
		"lit": {"url": "https://c.example/mcp", "auth": {"CLIENT_ID": "id${x", "scopes": ["a${b", "${env:SCOPE_VAR}"]}},
		"pasted": {"url": "https://c.example/mcp", "auth": {"CLIENT_ID": "${env:ghp_MARKERpasted0123456789}"}}
	}}`)
	writeFile(t, home, ".gemini/settings.json", `{"mcpServers": {
		"g": {"command": "x", "includeTools": ["search", "$TOOL_NAME"], "excludeTools": ["${DENY}"]}
	}}`)
	entries, warnings := List(Options{Home: home, GOOS: "linux", Sources: []Source{SourceOpencode, SourceCursor, SourceGemini}})
	if len(warnings) != 0 {
		t.Fatalf("warnings %v", warnings)
	}
	type cfg struct {
		Auth *struct {
			ClientID     string   `json:"client_id"`
			ClientSecret string   `json:"client_secret"`
			Scopes       []string `json:"scopes"`
		} `json:"auth"`
		Tools *struct {
			Allow []string `json:"allow"`
			Deny  []string `json:"deny"`
		} `json:"tools"`
	}
	got := map[string]cfg{}
	warned := map[string]string{}
	for _, e := range entries {
		var c cfg
		if err := json.Unmarshal(e.Config, &c); err != nil {
			t.Fatal(err)
		}
		got[e.Name] = c
		warned[e.Name] = strings.Join(e.Warnings, "\n")
	}
	if a := got["o"].Auth; a == nil || a.ClientID != "" || a.ClientSecret != "${OC_SECRET:-}" || a.Scopes != nil {
		t.Errorf("opencode auth %+v", a)
	}
	for _, w := range []string{
		"oauth.clientId refers to the environment variable OC_ID; mcpvisor's auth.client_id takes no references",
		"oauth.scope refers to the environment variable OC_SCOPE; mcpvisor's auth.scopes takes no references",
	} {
		if !strings.Contains(warned["o"], w) {
			t.Errorf("opencode warnings %q lack %q", warned["o"], w)
		}
	}
	if a := got["lit"].Auth; a == nil || a.ClientID != "id${x" || !slices.Equal(a.Scopes, []string{"a${b"}) {
		t.Errorf("cursor literal auth %+v", a)
	}
	if !strings.Contains(warned["lit"], "auth.scopes[1] refers to the environment variable SCOPE_VAR") {
		t.Errorf("cursor warnings %q", warned["lit"])
	}
	if a := got["pasted"].Auth; a == nil || a.ClientID != "" {
		t.Errorf("cursor pasted auth %+v", a)
	}
	if !strings.Contains(warned["pasted"], "auth.CLIENT_ID refers to an environment variable;") || strings.Contains(warned["pasted"], "MARKER") {
		t.Errorf("cursor pasted warnings %q", warned["pasted"])
	}
	if tl := got["g"].Tools; tl == nil || !slices.Equal(tl.Allow, []string{"search"}) || tl.Deny != nil {
		t.Errorf("gemini tools %+v", tl)
	}
	for _, w := range []string{"includeTools[1] refers to the environment variable TOOL_NAME", "excludeTools[0] refers to the environment variable DENY"} {
		if !strings.Contains(warned["g"], w) {
			t.Errorf("gemini warnings %q lack %q", warned["g"], w)
		}
	}
}
