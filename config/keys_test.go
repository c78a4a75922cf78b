package config

import (
	"errors"
	"strings"
	"testing"
)

// TestDuplicateKeysRefused: a key given twice inside env, headers or auth
// is refused, in the file, a create body and a PATCH body, with an error
// naming the server, the field and the key; header names are compared
// case-insensitively, env names exactly. No value is quoted.
func TestDuplicateKeysRefused(t *testing.T) {
	const file = `{"servers":{"fs":{"type":"http","url":"https://example.com/mcp",%s}}}`
	const body = `{"name":"fs","type":"http","url":"https://example.com/mcp",%s}`
	tests := []struct {
		name, members, field, want string
	}{
		{"env exact", `"env":{"TOKEN":"` + envSecret + `","TOKEN":"` + envSecret + `2"}`, "env", `duplicate key "TOKEN"`},
		{"header exact", `"headers":{"X-Key":"` + headerSecret + `","X-Key":"b"}`, "headers", `duplicate key "X-Key"`},
		{"header case variant", `"headers":{"Authorization":"` + headerSecret + `","authorization":"b"}`, "headers", `duplicate key "authorization"`},
		{"auth member", `"auth":{"kind":"bearer","token":"` + tokenSecret + `","token":"b"}`, "auth.token", "duplicate"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			check := func(what string, err error) {
				t.Helper()
				var fe *FieldError
				if !errors.As(err, &fe) {
					t.Fatalf("%s: error %v, want a *FieldError", what, err)
				}
				if fe.Server != "fs" || fe.Field != tt.field || !strings.Contains(fe.Message, tt.want) {
					t.Errorf("%s: error %q (server %q, field %q), want servers.fs.%s: %s", what, err, fe.Server, fe.Field, tt.field, tt.want)
				}
				assertNoSecret(t, what, err.Error())
			}
			_, err := Parse([]byte(strings.Replace(file, "%s", tt.members, 1)))
			check("Parse", err)
			_, err = DecodeServer([]byte(strings.Replace(body, "%s", tt.members, 1)))
			check("DecodeServer", err)
			base := remoteServer()
			base.Name = "fs"
			_, err = ApplyPatch(base, []byte("{"+tt.members+"}"))
			check("ApplyPatch", err)
		})
	}
	if got := `servers.fs.headers: duplicate key "authorization"`; !strings.HasPrefix(mustParseErr(t, `"headers":{"Authorization":"a","authorization":"b"}`), got) {
		t.Errorf("message does not start with %q", got)
	}
}

func mustParseErr(t *testing.T, members string) string {
	t.Helper()
	_, err := Parse([]byte(`{"servers":{"fs":{"type":"http","url":"https://example.com/mcp",` + members + `}}}`))
	if err == nil {
		t.Fatal("Parse succeeded")
	}
	return err.Error()
}

// TestEnvKeysCaseSensitive: env names that differ only in case are two
// variables (as the OS sees them), not a duplicate.
func TestEnvKeysCaseSensitive(t *testing.T) {
	f, err := Parse([]byte(`{"servers":{"fs":{"type":"local","command":["x"],"env":{"Path":"a","PATH":"b"}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if env := f.Servers[0].Env; len(env) != 2 || env["Path"] != "a" || env["PATH"] != "b" {
		t.Errorf("env = %v, want both", env)
	}
}

// TestPatchHeaderAnySpelling: a PATCH key replaces or deletes the stored
// header whatever its spelling, so the result never holds two spellings.
func TestPatchHeaderAnySpelling(t *testing.T) {
	base := remoteServer() // X-Key
	s, err := ApplyPatch(base, []byte(`{"headers":{"x-key":"new-value-1"}}`))
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Headers) != 1 || s.Headers["x-key"] != "new-value-1" {
		t.Errorf("headers after replace = %v", s.Headers)
	}
	s, err = ApplyPatch(base, []byte(`{"headers":{"X-KEY":""}}`))
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Headers) != 0 {
		t.Errorf("headers after delete = %v, want none", s.Headers)
	}
}

// TestValidateHeaderSpellings: a Server built in Go with two spellings of
// one header is invalid.
func TestValidateHeaderSpellings(t *testing.T) {
	s := remoteServer()
	s.Headers = map[string]string{"Authorization": "a", "authorization": "b"}
	err := s.Validate()
	var fe *FieldError
	if !errors.As(err, &fe) || fe.Field != "headers" || !strings.Contains(fe.Message, "duplicate key") {
		t.Fatalf("Validate = %v, want a duplicate header key", err)
	}
}
