package catalog

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// A name is listed in requires only where the answer may show it: a token
// pasted inside braces, or the tail of a password Gemini would leave
// literal, is in no entry's requires and nowhere in its JSON, while a real
// reference's variable is listed.
func TestRequiresShowsNoSecret(t *testing.T) {
	const (
		pasted = "ghp_abcdefGHIJ1234567890"
		keyID  = "AKIAIOSFODNN7"
		alt    = "A1B2C3D4"
		liveSK = "sk_live_abcdef123456"
		part   = "SECRETPART"
	)
	cases := []struct {
		src     Source
		content string
		want    []string
	}{
		{SourceClaudeCode, `{"mcpServers": {"gh": {"type": "http", "url": "https://example.test/mcp",
			"headers": {"Authorization": "Bearer ${` + pasted + `}", "X-Ok": "Bearer ${GOOD_TOKEN}"}},
			"local": {"command": "srv", "env": {"K": "${` + liveSK + `}", "OK": "${OK_VAR}"}}}}`,
			[]string{"GOOD_TOKEN", "OK_VAR"}},
		{SourceGemini, `{"mcpServers": {"g": {"httpUrl": "https://example.test/mcp",
			"headers": {"X-Api-Key": "hunter2$` + part + `", "X-Ok": "$GEMINI_KEY"}}}}`,
			[]string{"GEMINI_KEY"}},
		// The same env-shaped rule as the masked view: conventional
		// lower- and mixed-case names are listed, generated-looking
		// upper-case ones are not, wherever they stand.
		{SourceClaudeCode, `{"mcpServers": {"p": {"command": "srv", "args": ["${ProgramFiles}/x"],
			"env": {"HTTPS_PROXY": "${https_proxy}", "K": "Bearer ${` + keyID + `}", "A": "${` + alt + `}", "P": "${Path}"}}}}`,
			[]string{"Path", "ProgramFiles", "https_proxy"}},
	}
	for _, c := range cases {
		entries, _ := ReadContent(Options{}, c.src, "candidate", []byte(c.content))
		if len(entries) == 0 {
			t.Fatalf("%s: no entries", c.src)
		}
		var got []string
		for _, e := range entries {
			got = append(got, e.Requires...)
			b, err := json.Marshal(e)
			if err != nil {
				t.Fatal(err)
			}
			for _, secret := range []string{pasted, liveSK, part, keyID, alt} {
				if strings.Contains(string(b), secret) || slices.Contains(e.Requires, secret) {
					t.Errorf("%s %s: %q shown: requires %v, json %s", c.src, e.Name, secret, e.Requires, b)
				}
			}
		}
		slices.Sort(got)
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: requires %v, want %v", c.src, got, c.want)
		}
	}
}

// Every auth secret made only of references lists its variables, the
// private key's as the token's and the client secret's.
func TestRequiresAuthSecrets(t *testing.T) {
	c := serverConfig{Type: "http", URL: "https://example.test/mcp",
		Auth: &authConfig{Kind: "oauth", Token: "${TOK_VAR}", ClientSecret: "${CS_VAR}", PrivateKey: "${KEY_VAR}"}}
	if got, want := c.requires(), []string{"CS_VAR", "KEY_VAR", "TOK_VAR"}; !slices.Equal(got, want) {
		t.Errorf("requires = %v, want %v", got, want)
	}
}
