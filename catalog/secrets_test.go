package catalog

import (
	"encoding/json"
	"io/fs"
	"os"
	"regexp"
	"strings"
	"testing"
)

var reMarker = regexp.MustCompile(`MARKER-[a-z-]+`)

// The planted secrets of testdata reach an entry's config only in the
// secret fields they were in (env, headers, auth secrets), once each, and
// never a warning.
func TestMarkerSecretsStayInSecretFields(t *testing.T) {
	home, project := fakeMachine(t)
	planted := map[string]bool{}
	for _, dir := range []string{home, project} {
		err := fs.WalkDir(os.DirFS(dir), ".", func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			data, err := os.ReadFile(dir + "/" + path)
			for _, m := range reMarker.FindAllString(string(data), -1) {
				planted[m] = true
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if len(planted) < 20 {
		t.Fatalf("only %d markers planted", len(planted))
	}
	entries, warnings := List(Options{Home: home, Projects: []string{project}, GOOS: "linux"})
	seen := map[string]int{}
	for _, e := range entries {
		var c serverConfig
		if err := json.Unmarshal(e.Config, &c); err != nil {
			t.Fatal(err)
		}
		secret := []string{}
		for _, v := range c.Env {
			secret = append(secret, v)
		}
		for _, v := range c.Headers {
			secret = append(secret, v)
		}
		if c.Auth != nil {
			secret = append(secret, c.Auth.Token, c.Auth.ClientSecret)
		}
		for _, v := range secret {
			for _, m := range reMarker.FindAllString(v, -1) {
				seen[m]++
			}
		}
		all := reMarker.FindAllString(string(e.Config), -1)
		inSecret := 0
		for _, v := range secret {
			inSecret += len(reMarker.FindAllString(v, -1))
		}
		if len(all) != inSecret {
			t.Errorf("%s %s: a secret outside env, headers and auth secrets: %s", e.Source, e.Name, e.Config)
		}
		if e.Source == SourceBuiltin && len(all) > 0 {
			t.Errorf("template %s holds a secret", e.Name)
		}
	}
	for m := range planted {
		want := 1
		if m == "MARKER-zed-ext" { // an extension's settings: not mapped at all
			want = 0
		}
		if seen[m] != want {
			t.Errorf("%s is in %d configs, want %d", m, seen[m], want)
		}
	}
	for m := range seen {
		if !planted[m] {
			t.Errorf("%s appeared from nowhere", m)
		}
	}
	if strings.Contains(warningText(entries, warnings), "MARKER") {
		t.Error("a warning names a marker")
	}
}

// A key a host puts in a server's URL query (Smithery does) is masked in
// the entry's JSON like any secret; the parameter name stays.
func TestURLQueryKeyMasked(t *testing.T) {
	const key = "QUERY-KEY-planted-6d20e4"
	entries, _ := ReadContent(Options{}, SourceClaudeCode, "candidate",
		[]byte(`{"mcpServers": {"s": {"type": "http", "url": "https://server.smithery.example/mcp?api_key=`+key+`&profile=p-`+key+`"}}}`))
	if len(entries) != 1 {
		t.Fatalf("entries = %v", entries)
	}
	b, err := json.Marshal(entries[0])
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), key) || !strings.Contains(string(b), "api_key=****") || !strings.Contains(string(b), "server.smithery.example") {
		t.Errorf("entry = %s", strings.ReplaceAll(string(b), key, "<KEY>"))
	}
}
