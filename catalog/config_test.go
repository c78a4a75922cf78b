package catalog

import (
	"encoding/json"
	"testing"

	"github.com/openprogram/mcpvisor/config"
)

// Every mapped entry is a server entry config's parser reads: the lead
// lays it into mcp_servers.json and masks it through config's view.
func TestEveryEntryParsesAsAConfigServer(t *testing.T) {
	home, project := fakeMachine(t)
	entries, _ := List(Options{Home: home, Projects: []string{project}, GOOS: "linux"})
	if len(entries) < 40 {
		t.Fatalf("only %d entries", len(entries))
	}
	valid := 0
	for _, e := range entries {
		name := e.Name
		if config.ValidateName(name) != nil {
			name = "renamed" // applying it needs a new name; the warning says so
		}
		doc, _ := json.Marshal(map[string]any{"servers": map[string]json.RawMessage{name: e.Config}})
		f, err := config.Parse(doc)
		if err != nil {
			t.Errorf("%s %s %s: config.Parse: %v\n%s", e.Source, e.File, e.Name, err, e.Config)
			continue
		}
		if len(f.Servers) != 1 {
			t.Fatalf("%s: %d servers", e.Name, len(f.Servers))
		}
		s := f.Servers[0]
		var raw struct {
			Type    string   `json:"type"`
			Command []string `json:"command"`
			URL     string   `json:"url"`
			Enabled *bool    `json:"enabled"`
		}
		_ = json.Unmarshal(e.Config, &raw)
		if s.Type != raw.Type || s.URL != raw.URL || len(s.Command) != len(raw.Command) || s.Enabled != (raw.Enabled == nil || *raw.Enabled) {
			t.Errorf("%s %s: config read it as type %q url %q enabled %v", e.Source, e.Name, s.Type, s.URL, s.Enabled)
		}
		// A fully mapped entry is a valid server, templates included:
		// config validates a value with references (cwd, url) by the
		// form it can check before expansion.
		if len(e.Warnings) == 0 && e.Name == name {
			valid++
			if err := s.Validate(); err != nil {
				t.Errorf("%s %s %s: Validate: %v", e.Source, e.File, e.Name, err)
			}
		}
	}
	if valid < 20 {
		t.Errorf("only %d entries fully mapped and validated", valid)
	}
}

// A template holds no secret: every env, header and auth value of it is
// made only of references.
func TestTemplatesHoldNoSecret(t *testing.T) {
	entries, warnings := List(Options{})
	if len(warnings) != 0 {
		t.Fatal(warnings)
	}
	seen := map[string]bool{}
	for _, e := range entries {
		if e.Source != SourceBuiltin || e.File != "" {
			t.Fatalf("without a home only templates are listed, got %s %s", e.Source, e.File)
		}
		seen[e.Name] = true
		var c serverConfig
		if err := json.Unmarshal(e.Config, &c); err != nil {
			t.Fatal(err)
		}
		for k, v := range c.Headers {
			if reBraces.ReplaceAllString(v, "") != "Bearer " && reBraces.ReplaceAllString(v, "") != "" {
				t.Errorf("%s: header %s holds a value that is not a reference", e.Name, k)
			}
		}
		if len(c.Env) != 0 || c.Auth != nil {
			t.Errorf("%s: a template with env or auth", e.Name)
		}
	}
	for _, name := range []string{"filesystem", "memory", "sequential-thinking", "everything", "fetch", "git", "time", "github"} {
		if !seen[name] {
			t.Errorf("no template %q", name)
		}
	}
	var gh Entry
	for _, e := range entries {
		if e.Name == "github" {
			gh = e
		}
	}
	if len(gh.Requires) != 1 || gh.Requires[0] != "GITHUB_TOKEN" {
		t.Errorf("github requires %q, want GITHUB_TOKEN", gh.Requires)
	}
}
