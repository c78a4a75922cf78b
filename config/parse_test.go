package config

import (
	"slices"
	"strings"
	"testing"
)

const sampleFile = `{"version": 2, "servers": {
  "zeta": {"type": "local", "command": ["npx", "-y", "server-fs", "/tmp"], "env": {"TOKEN": "s3cret"}, "enabled": true, "timeout_seconds": 30, "x-note": {"a": [1, 2]}},
  "alpha": {"type": "http", "url": "https://example.com/mcp?a=1&b=2", "headers": {"X-Key": "k"}, "auth": {"kind": "bearer", "token": "t", "x-extra": true}},
  "mid": {"type": "sse", "url": "http://localhost:8080/sse", "enabled": false, "name": "kept"}
}, "comment": "top-level unknown"}`

func TestParse(t *testing.T) {
	f, err := Parse([]byte(sampleFile))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range f.Servers {
		names = append(names, s.Name)
	}
	if want := []string{"zeta", "alpha", "mid"}; !slices.Equal(names, want) {
		t.Fatalf("order = %v, want %v", names, want)
	}
	want := []Server{
		{Name: "zeta", Type: TypeLocal, Command: []string{"npx", "-y", "server-fs", "/tmp"},
			Env: map[string]string{"TOKEN": "s3cret"}, Enabled: true, TimeoutSeconds: 30},
		{Name: "alpha", Type: TypeHTTP, URL: "https://example.com/mcp?a=1&b=2",
			Headers: map[string]string{"X-Key": "k"}, Auth: &Auth{Kind: AuthBearer, Token: "t"}, Enabled: true},
		{Name: "mid", Type: TypeSSE, URL: "http://localhost:8080/sse", Enabled: false},
	}
	for i, w := range want {
		if !f.Servers[i].Equal(w) {
			t.Errorf("server %d = %#v, want %#v", i, f.Servers[i], w)
		}
		if err := f.Servers[i].Validate(); err != nil {
			t.Errorf("server %s invalid: %v", w.Name, err)
		}
	}
}

func TestRoundTripKeepsOrderAndUnknownFields(t *testing.T) {
	f, err := Parse([]byte(sampleFile))
	if err != nil {
		t.Fatal(err)
	}
	out, err := Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	const want = `{
  "servers": {
    "zeta": {
      "type": "local",
      "command": [
        "npx",
        "-y",
        "server-fs",
        "/tmp"
      ],
      "env": {
        "TOKEN": "s3cret"
      },
      "enabled": true,
      "timeout_seconds": 30,
      "x-note": {
        "a": [
          1,
          2
        ]
      }
    },
    "alpha": {
      "type": "http",
      "url": "https://example.com/mcp?a=1&b=2",
      "headers": {
        "X-Key": "k"
      },
      "auth": {
        "kind": "bearer",
        "token": "t",
        "x-extra": true
      },
      "enabled": true
    },
    "mid": {
      "type": "sse",
      "url": "http://localhost:8080/sse",
      "enabled": false,
      "name": "kept"
    }
  },
  "version": 2,
  "comment": "top-level unknown"
}
`
	if string(out) != want {
		t.Errorf("Marshal =\n%s\nwant\n%s", out, want)
	}
	again, err := Parse(out)
	if err != nil {
		t.Fatal(err)
	}
	if !filesEqual(f, again) {
		t.Error("Parse(Marshal(f)) differs from f")
	}
}

func TestParseEmpty(t *testing.T) {
	for _, in := range []string{"", " \n\t\r\n", "\xef\xbb\xbf", "{}", `{"servers":null}`, `{"servers":{}}`, "\xef\xbb\xbf{\"servers\":{}}"} {
		f, err := Parse([]byte(in))
		if err != nil {
			t.Errorf("Parse(%q): %v", in, err)
			continue
		}
		if f == nil || len(f.Servers) != 0 {
			t.Errorf("Parse(%q) = %+v, want no servers", in, f)
		}
	}
}

func TestParseLoadsSemanticErrors(t *testing.T) {
	f, err := Parse([]byte(`{"servers":{"a":{"type":"grpc"},"b":{"type":"local","timeout_seconds":0},"c":{"type":"local","command":["x"]}}}`))
	if err != nil {
		t.Fatalf("semantic problems must not be parse errors: %v", err)
	}
	if len(f.Servers) != 3 {
		t.Fatalf("got %d servers, want 3", len(f.Servers))
	}
	if err := f.Servers[0].Validate(); err == nil || fieldOf(t, err).Field != "type" {
		t.Errorf("a: Validate = %v, want type error", err)
	}
	b := f.Servers[1]
	if b.Timeout() != DefaultTimeoutSeconds*1e9 {
		t.Errorf("b: Timeout = %v", b.Timeout())
	}
	b.Command = []string{"x"}
	if err := b.Validate(); err == nil || fieldOf(t, err).Field != "timeout_seconds" {
		t.Errorf("b: explicit 0 timeout: Validate = %v, want timeout_seconds error", err)
	}
	if !f.Servers[2].Enabled {
		t.Error("c: absent enabled must mean true")
	}
	// The explicit zero survives a round trip, so the user keeps seeing it.
	out, err := Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), `"timeout_seconds": 0`) {
		t.Errorf("explicit zero lost:\n%s", out)
	}
}

func TestParseNullFieldsAreAbsent(t *testing.T) {
	f, err := Parse([]byte(`{"servers":{"a":{"type":"local","command":["x"],"env":null,"auth":null,"enabled":null,"timeout_seconds":null}}}`))
	if err != nil {
		t.Fatal(err)
	}
	want := Server{Name: "a", Type: TypeLocal, Command: []string{"x"}, Enabled: true}
	if !f.Servers[0].Equal(want) || f.Servers[0].Auth != nil {
		t.Errorf("got %#v, want %#v", f.Servers[0], want)
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"not JSON", `{servers}`, "invalid JSON at byte"},
		{"truncated", `{"servers":{"a":`, "unexpected end"},
		{"trailing data", `{} x`, "invalid JSON"},
		{"second document", `{} {}`, "after the top-level object"},
		{"top level array", `[]`, "must be a JSON object"},
		{"top level null", `null`, "must be a JSON object"},
		{"servers array", `{"servers":[]}`, "servers: must be an object"},
		{"duplicate server", `{"servers":{"a":{"type":"local"},"a":{"type":"http"}}}`, `servers: duplicate server name "a"`},
		{"invalid name", `{"servers":{"a b":{}}}`, `servers: "a b" is not a valid server name`},
		{"empty name", `{"servers":{"":{}}}`, `servers: "" is not a valid server name`},
		{"entry null", `{"servers":{"a":null}}`, "servers.a: must be a JSON object"},
		{"entry string", `{"servers":{"a":"local"}}`, "servers.a: must be a JSON object"},
		{"command string", `{"servers":{"a":{"command":"npx x"}}}`, "servers.a.command: must be an array of strings"},
		{"env array", `{"servers":{"a":{"env":["A=secret-value"]}}}`, "servers.a.env: must be an object"},
		{"env value number", `{"servers":{"a":{"env":{"A":1}}}}`, "servers.a.env: must be an object"},
		{"env value null", `{"servers":{"a":{"env":{"A":null}}}}`, "servers.a.env.A: must be a string"},
		{"headers string", `{"servers":{"a":{"headers":"x"}}}`, "servers.a.headers: must be an object"},
		{"enabled string", `{"servers":{"a":{"enabled":"yes"}}}`, "servers.a.enabled: must be true or false"},
		{"timeout string", `{"servers":{"a":{"timeout_seconds":"30"}}}`, "servers.a.timeout_seconds: must be an integer"},
		{"timeout float", `{"servers":{"a":{"timeout_seconds":2.5}}}`, "servers.a.timeout_seconds: must be an integer"},
		{"auth string", `{"servers":{"a":{"auth":"bearer"}}}`, "servers.a.auth: must be a JSON object"},
		{"auth token number", `{"servers":{"a":{"auth":{"token":1}}}}`, "servers.a.auth.token: must be a string"},
		{"duplicate field", `{"servers":{"a":{"url":"x","url":"y"}}}`, `servers.a.url: duplicate field`},
		{"duplicate top-level", `{"servers":{},"servers":{}}`, "servers: duplicate field"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := Parse([]byte(tt.in))
			if err == nil {
				t.Fatalf("Parse succeeded: %+v", f)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q does not contain %q", err, tt.want)
			}
			if strings.Contains(err.Error(), "secret-value") {
				t.Errorf("error leaks a value: %v", err)
			}
		})
	}
}

func TestMarshalRefusesBadNames(t *testing.T) {
	if _, err := Marshal(&File{Servers: []Server{{Name: "a b"}}}); err == nil {
		t.Error("Marshal accepted an invalid name")
	}
	if _, err := Marshal(&File{Servers: []Server{{Name: "a"}, {Name: "a"}}}); err == nil {
		t.Error("Marshal accepted a duplicate name")
	}
	if _, err := Marshal(nil); err == nil {
		t.Error("Marshal accepted nil")
	}
}

func TestMarshalEmpty(t *testing.T) {
	out, err := Marshal(&File{})
	if err != nil {
		t.Fatal(err)
	}
	if want := "{\n  \"servers\": {}\n}\n"; string(out) != want {
		t.Errorf("Marshal(empty) = %q, want %q", out, want)
	}
}

func TestMarshalStorageFormHasSecrets(t *testing.T) {
	f := &File{}
	f.Put(remoteServer())
	f.Put(oauthServer())
	out, err := Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{headerSecret, tokenSecret, clientSecret} {
		if !strings.Contains(string(out), s) {
			t.Errorf("storage form lacks %q", s)
		}
	}
	again, err := Parse(out)
	if err != nil {
		t.Fatal(err)
	}
	if !filesEqual(f, again) {
		t.Error("round trip changed the servers")
	}
}

// A syntax error inside a secret names the byte, not the character the
// decoder stopped at (it may be the secret's first).
func TestSyntaxErrorQuotesNoCharacter(t *testing.T) {
	_, err := Parse([]byte(`{"servers": {"a": {"type": "local", "command": ["x"], "env": {"K": Zq9secret}}}}`))
	if err == nil {
		t.Fatal("want a syntax error")
	}
	if strings.Contains(err.Error(), "Z") || strings.Contains(err.Error(), "character") {
		t.Errorf("error %q quotes the input", err)
	}
}
