package runtime

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// failSecret is planted in fields that fail to read or validate.
const failSecret = "FAIL-SECRET-planted-7a31c5"

// A value that fails, a secret in it, is refused or warned about by
// field, and no refusal or warning quotes it: a header with a control
// character in an apply overlay, a broken YAML or TOML line in a POST diff
// candidate, a JSON line cut short, an env value that is not a string or
// holds a NUL in a host's file. (Each answer is checked for a refusal or
// warning, so that the case tests a failure; the host listing has them
// only as the entries' warnings.)
func TestCatalogFailuresShowNoSecret(t *testing.T) {
	rt, api := startCatalog(t)
	windsurf := filepath.Join(rt.opts.Home, ".codeium", "windsurf", "mcp_config.json")
	if err := os.MkdirAll(filepath.Dir(windsurf), 0o700); err != nil {
		t.Fatal(err)
	}
	host := `{"mcpServers": {"w1": {"command": "x", "env": {"K": ["` + failSecret + `"]}}, "w2": {"command": "x", "env": {"K": "` + failSecret + `\u0000"}}, "w3": {"serverUrl": "https://h.example/mcp", "headers": {"Authorization": "Bearer ` + failSecret + `\n"}}}}`
	if err := os.WriteFile(windsurf, []byte(host), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, method, path, body string
		status                   int
	}{
		{"apply overlay header", "POST", "/api/mcp/catalog/apply", `{"entries": [{"source": "builtin", "name": "github", "as": "gh", "config": {"headers": {"Authorization": "Bearer ` + failSecret + `\u0001"}}}]}`, http.StatusOK},
		{"apply overlay env", "POST", "/api/mcp/catalog/apply", `{"entries": [{"source": "claude-code", "name": "alpha", "as": "a2", "config": {"env": {"K": "` + failSecret + `\u0000"}}}]}`, http.StatusOK},
		{"apply host entry", "POST", "/api/mcp/catalog/apply", `{"entries": [{"source": "windsurf", "name": "w1"}, {"source": "windsurf", "name": "w2"}, {"source": "windsurf", "name": "w3"}]}`, http.StatusOK},
		{"yaml line", "POST", "/api/mcp/catalog/diff", `{"format": "goose", "content": "extensions:\n  x:\n    envs: {K: [` + failSecret + `\n"}`, http.StatusOK},
		{"toml line", "POST", "/api/mcp/catalog/diff", `{"format": "codex", "content": "[mcp_servers.x]\ncommand = \"x\"\nenv = { K = \"` + failSecret + `\n"}`, http.StatusOK},
		{"json line", "POST", "/api/mcp/catalog/diff", `{"format": "cursor", "content": "{\"mcpServers\": {\"x\": {\"env\": {\"K\": \"` + failSecret + `"}`, http.StatusOK},
		{"mcpvisor line", "POST", "/api/mcp/catalog/diff", `{"format": "mcpvisor", "content": "{\"servers\": {\"x\": {\"env\": {\"K\": ` + failSecret + `}}}}"}`, http.StatusBadRequest},
		{"entries env", "POST", "/api/mcp/catalog/diff", `{"entries": [{"name": "x", "config": {"type": "local", "command": ["x"], "env": {"K": "` + failSecret + `\u0000"}}}]}`, http.StatusOK},
		{"host list", "GET", "/api/mcp/catalog", "", http.StatusOK},
		{"host diff", "GET", "/api/mcp/catalog/diff?source=windsurf", "", http.StatusOK},
	} {
		a := api.do(c.method, c.path, c.body).want(t, c.status)
		body := string(a.body)
		if strings.Contains(body, failSecret) {
			t.Errorf("%s: the answer shows the secret: %s", c.name, body)
		}
		if c.status == http.StatusOK && !strings.Contains(body, `"refused"`) && !strings.Contains(body, `"invalid"`) && !strings.Contains(body, `"message"`) && !strings.Contains(body, `"warnings":["`) {
			t.Errorf("%s: nothing refused or warned: %s", c.name, body)
		}
	}
	for _, name := range []string{"gh", "a2", "w2", "w3"} {
		if _, ok := rt.config.Load().Get(name); ok {
			t.Errorf("%s was added", name)
		}
	}
	assertScrubbed(t, rt, []string{failSecret})
}
