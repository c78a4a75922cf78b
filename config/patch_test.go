package config

import (
	"maps"
	"slices"
	"strings"
	"testing"
)

func TestApplyPatch(t *testing.T) {
	tests := []struct {
		name  string
		base  Server
		patch string
		want  func(*Server) // edits base into the expected result
	}{
		{"empty patch keeps everything", localServer(), `{}`, func(*Server) {}},
		{"same name is allowed", localServer(), `{"name":"fs"}`, func(*Server) {}},
		{"env absent keeps the map", localServer(), `{"enabled":false}`, func(s *Server) { s.Enabled = false }},
		{"env set, replace, delete, keep", localServer(), `{"env":{"NEW":"n","OTHER":"y","TOKEN":""}}`, func(s *Server) {
			s.Env = map[string]string{"NEW": "n", "OTHER": "y"}
		}},
		{"env delete of a missing key is a no-op", localServer(), `{"env":{"NOPE":""}}`, func(*Server) {}},
		{"env empty object keeps the map", localServer(), `{"env":{}}`, func(*Server) {}},
		{"env deleting every key", localServer(), `{"env":{"TOKEN":"","OTHER":""}}`, func(s *Server) { s.Env = nil }},
		{"headers merge", remoteServer(), `{"headers":{"X-New":"v"}}`, func(s *Server) {
			s.Headers = map[string]string{"X-Key": headerSecret, "X-New": "v"}
		}},
		{"headers delete", remoteServer(), `{"headers":{"X-Key":""}}`, func(s *Server) { s.Headers = nil }},
		{"headers on a server without any", localServer(), `{"headers":{"A":"b"}}`, func(s *Server) { s.Headers = map[string]string{"A": "b"} }},
		{"command replaces", localServer(), `{"command":["node","x.js"]}`, func(s *Server) { s.Command = []string{"node", "x.js"} }},
		{"url replaces", remoteServer(), `{"url":"http://127.0.0.1:9/mcp"}`, func(s *Server) { s.URL = "http://127.0.0.1:9/mcp" }},
		{"type switch keeps other fields", localServer(), `{"type":"http","url":"https://e.com"}`, func(s *Server) {
			s.Type, s.URL = TypeHTTP, "https://e.com"
		}},
		{"enabled replaces", localServer(), `{"enabled":false}`, func(s *Server) { s.Enabled = false }},
		{"timeout replaces", localServer(), `{"timeout_seconds":90}`, func(s *Server) { s.TimeoutSeconds = 90 }},
		{"auth absent keeps token", remoteServer(), `{"url":"https://e.com"}`, func(s *Server) { s.URL = "https://e.com" }},
		{"auth token absent keeps it", remoteServer(), `{"auth":{}}`, func(*Server) {}},
		{"auth token replaces", remoteServer(), `{"auth":{"token":"new-token"}}`, func(s *Server) { s.Auth.Token = "new-token" }},
		{"auth same kind keeps token", remoteServer(), `{"auth":{"kind":"bearer"}}`, func(*Server) {}},
		{"client secret absent keeps it", oauthServer(), `{"auth":{"scopes":["x"]}}`, func(s *Server) { s.Auth.Scopes = []string{"x"} }},
		{"client secret replaces", oauthServer(), `{"auth":{"client_secret":"cs2"}}`, func(s *Server) { s.Auth.ClientSecret = "cs2" }},
		{"client secret deleted", oauthServer(), `{"auth":{"client_secret":""}}`, func(s *Server) { s.Auth.ClientSecret = "" }},
		{"client id replaces", oauthServer(), `{"auth":{"client_id":"other"}}`, func(s *Server) { s.Auth.ClientID = "other" }},
		{"bearer to oauth drops the token", remoteServer(), `{"auth":{"kind":"oauth"}}`, func(s *Server) {
			s.Auth = &Auth{Kind: AuthOAuth}
		}},
		{"oauth to bearer drops client fields", oauthServer(), `{"auth":{"token":"t2","kind":"bearer"}}`, func(s *Server) {
			s.Auth = &Auth{Kind: AuthBearer, Token: "t2"} // token applied after the drop, whatever the order
		}},
		{"bearer to none drops the token", remoteServer(), `{"auth":{"kind":"none"}}`, func(s *Server) { s.Auth = &Auth{Kind: AuthNone} }},
		{"oauth to none drops everything", oauthServer(), `{"auth":{"kind":"none"}}`, func(s *Server) { s.Auth = &Auth{Kind: AuthNone} }},
		{"none to bearer with a token", localServer(), `{"auth":{"kind":"bearer","token":"t"}}`, func(s *Server) {
			s.Auth = &Auth{Kind: AuthBearer, Token: "t"}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base := tt.base
			before := base.Clone()
			got, err := ApplyPatch(base, []byte(tt.patch))
			if err != nil {
				t.Fatalf("ApplyPatch: %v", err)
			}
			want := tt.base.Clone()
			tt.want(&want)
			if !got.Equal(want) {
				t.Errorf("got  %#v\nwant %#v\n(secrets: %q vs %q)", got, want, got.Secrets(), want.Secrets())
			}
			if !base.Equal(before) || !maps.Equal(base.Env, before.Env) {
				t.Errorf("base was modified")
			}
		})
	}
}

func TestApplyPatchDoesNotAliasBase(t *testing.T) {
	base := oauthServer()
	got, err := ApplyPatch(base, []byte(`{"auth":{"scopes":["z"]},"env":{"A":"b"}}`))
	if err != nil {
		t.Fatal(err)
	}
	got.Auth.ClientID = "changed"
	got.Env["A"] = "changed"
	if base.Auth.ClientID != "cid" || base.Env != nil || !slices.Equal(base.Auth.Scopes, []string{"read", "write"}) {
		t.Errorf("result shares memory with base: %+v", base.Auth)
	}
}

func TestApplyPatchKeepsUnknownFields(t *testing.T) {
	f, err := Parse([]byte(`{"servers":{"fs":{"type":"local","command":["x"],"future":1,"auth":{"kind":"none","later":2}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	got, err := ApplyPatch(f.Servers[0], []byte(`{"command":["y"]}`))
	if err != nil {
		t.Fatal(err)
	}
	f.Put(got)
	out, err := Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"future": 1`, `"later": 2`, `"y"`} {
		if !strings.Contains(string(out), want) {
			t.Errorf("output lacks %s:\n%s", want, out)
		}
	}
}

func TestApplyPatchErrors(t *testing.T) {
	tests := []struct {
		name  string
		base  Server
		patch string
		field string
		msg   string
	}{
		{"rename", localServer(), `{"name":"other"}`, "name", "renaming is not supported"},
		{"unknown field", localServer(), `{"comand":["x"]}`, "comand", "unknown field"},
		{"unknown odd field", localServer(), `{"a b":1}`, `["a b"]`, "unknown field"},
		{"unknown auth field", remoteServer(), `{"auth":{"tokn":"x"}}`, "auth.tokn", "unknown field"},
		{"name wrong type", localServer(), `{"name":1}`, "name", "string"},
		{"type wrong type", localServer(), `{"type":true}`, "type", "string"},
		{"command wrong type", localServer(), `{"command":"npx x"}`, "command", "array of strings"},
		{"command element wrong type", localServer(), `{"command":["x",1]}`, "command", "array of strings"},
		{"command null element", localServer(), `{"command":["x",null]}`, "command[1]", "string"},
		{"env wrong type", localServer(), `{"env":["A=B"]}`, "env", "object"},
		{"env value wrong type", localServer(), `{"env":{"A":1}}`, "env", "object"},
		{"env value null", localServer(), `{"env":{"TOKEN":null}}`, "env.TOKEN", "null"},
		{"headers wrong type", remoteServer(), `{"headers":"X: y"}`, "headers", "object"},
		{"url wrong type", remoteServer(), `{"url":{}}`, "url", "string"},
		{"auth wrong type", remoteServer(), `{"auth":"bearer"}`, "auth", "object"},
		{"auth token wrong type", remoteServer(), `{"auth":{"token":5}}`, "auth.token", "string"},
		{"auth kind wrong type", remoteServer(), `{"auth":{"kind":1}}`, "auth.kind", "string"},
		{"auth scopes wrong type", oauthServer(), `{"auth":{"scopes":"a b"}}`, "auth.scopes", "array"},
		{"auth null member", remoteServer(), `{"auth":{"token":null}}`, "auth.token", "null"},
		{"auth duplicate member", remoteServer(), `{"auth":{"token":"a","token":"b"}}`, "auth.token", "duplicate"},
		{"enabled wrong type", localServer(), `{"enabled":"no"}`, "enabled", "true or false"},
		{"timeout wrong type", localServer(), `{"timeout_seconds":"30"}`, "timeout_seconds", "integer"},
		{"timeout fraction", localServer(), `{"timeout_seconds":1.5}`, "timeout_seconds", "integer"},
		{"timeout zero", localServer(), `{"timeout_seconds":0}`, "timeout_seconds", "between"},
		{"timeout absurd", localServer(), `{"timeout_seconds":86400}`, "timeout_seconds", "between"},
		{"null field", localServer(), `{"env":null}`, "env", "null"},
		{"duplicate field", localServer(), `{"url":"a","url":"b"}`, "url", "duplicate"},
		{"body not an object", localServer(), `[1]`, "", "JSON object"},
		{"body invalid JSON", localServer(), `{"env":`, "", "invalid JSON"},
		{"body trailing data", localServer(), `{} {}`, "", "invalid JSON"},
		{"empty body", localServer(), ``, "", "invalid JSON"},
		{"result validated: http needs url", localServer(), `{"type":"http"}`, "url", "required"},
		{"result validated: bearer needs token", remoteServer(), `{"auth":{"token":""}}`, "auth.token", "required"},
		{"result validated: token on oauth", remoteServer(), `{"auth":{"kind":"oauth","token":"t"}}`, "auth.token", "not used"},
		{"result validated: bad env name", localServer(), `{"env":{"A=B":"x"}}`, `env["A=B"]`, "'='"},
		{"result validated: unknown kind", remoteServer(), `{"auth":{"kind":"basic"}}`, "auth.kind", "unknown kind"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ApplyPatch(tt.base, []byte(tt.patch))
			if err == nil {
				t.Fatal("ApplyPatch succeeded, want error")
			}
			fe := fieldOf(t, err)
			if fe.Field != tt.field {
				t.Errorf("field = %q, want %q (%v)", fe.Field, tt.field, err)
			}
			if fe.Server != tt.base.Name {
				t.Errorf("server = %q, want %q", fe.Server, tt.base.Name)
			}
			if !strings.Contains(fe.Message, tt.msg) {
				t.Errorf("message %q does not contain %q", fe.Message, tt.msg)
			}
			assertNoSecret(t, "ApplyPatch error", err.Error())
		})
	}
}

func TestDecodeServer(t *testing.T) {
	s, err := DecodeServer([]byte(`{"name":"remote","type":"http","url":"https://example.com/mcp",
		"headers":{"X-Key":"` + headerSecret + `"},"auth":{"kind":"bearer","token":"` + tokenSecret + `"},"timeout_seconds":null}`))
	if err != nil {
		t.Fatal(err)
	}
	if want := remoteServer(); !s.Equal(want) {
		t.Errorf("got %v, want %v", s, want)
	}
	if !s.Enabled {
		t.Error("enabled should default to true")
	}
}

func TestDecodeServerErrors(t *testing.T) {
	tests := []struct {
		name, body, server, field, msg string
	}{
		{"missing name", `{"type":"local","command":["x"]}`, "", "name", "required"},
		{"bad name", `{"name":"a b","type":"local","command":["x"]}`, "", "name", "not a valid server name"},
		{"name wrong type", `{"name":7}`, "", "name", "string"},
		{"unknown field", `{"name":"x","type":"local","command":["x"],"extra":1}`, "x", "extra", "unknown field"},
		{"unknown auth field", `{"name":"x","auth":{"kind":"none","x":1}}`, "x", "auth.x", "unknown field"},
		{"wrong type", `{"name":"x","env":{"A":["` + envSecret + `"]}}`, "x", "env", "object"},
		{"invalid", `{"name":"x","type":"local"}`, "x", "command", "required"},
		{"zero timeout", `{"name":"x","type":"local","command":["x"],"timeout_seconds":0}`, "x", "timeout_seconds", "between"},
		{"not an object", `"x"`, "", "", "JSON object"},
		{"not JSON", `{name}`, "", "", "invalid JSON"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := DecodeServer([]byte(tt.body))
			if err == nil {
				t.Fatal("DecodeServer succeeded, want error")
			}
			fe := fieldOf(t, err)
			if fe.Server != tt.server || fe.Field != tt.field || !strings.Contains(fe.Message, tt.msg) {
				t.Errorf("got server %q field %q message %q; want %q %q containing %q",
					fe.Server, fe.Field, fe.Message, tt.server, tt.field, tt.msg)
			}
			assertNoSecret(t, "DecodeServer error", err.Error())
		})
	}
}
