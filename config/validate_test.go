package config

import (
	"strings"
	"testing"
)

func TestValidateName(t *testing.T) {
	for _, name := range []string{"a", "fs", "A-b_9", strings.Repeat("x", 48)} {
		if err := ValidateName(name); err != nil {
			t.Errorf("ValidateName(%q) = %v, want nil", name, err)
		}
	}
	for _, name := range []string{"", "a b", "a.b", "a/b", "é", "a\x00", strings.Repeat("x", 49)} {
		err := ValidateName(name)
		if err == nil {
			t.Errorf("ValidateName(%q) = nil, want error", name)
			continue
		}
		if fe := fieldOf(t, err); fe.Field != "name" {
			t.Errorf("ValidateName(%q) field = %q, want name", name, fe.Field)
		}
	}
}

func TestValidateValid(t *testing.T) {
	sse := remoteServer()
	sse.Type = TypeSSE
	none := remoteServer()
	none.Auth = &Auth{Kind: AuthNone}
	dyn := oauthServer() // dynamic client registration: no client fields
	dyn.Auth = &Auth{Kind: AuthOAuth}
	timeout := localServer()
	timeout.TimeoutSeconds = MaxTimeoutSeconds
	leftover := localServer() // fields of another type are kept, not errors
	leftover.URL = "https://example.com"
	for _, s := range []Server{localServer(), remoteServer(), oauthServer(), sse, none, dyn, timeout, leftover} {
		if err := s.Validate(); err != nil {
			t.Errorf("Validate(%s) = %v, want nil", s.Name, err)
		}
	}
}

func TestValidateErrors(t *testing.T) {
	tests := []struct {
		name   string
		edit   func(*Server)
		field  string
		server string // expected FieldError.Server
		msg    string // substring of the message
	}{
		{"bad name", func(s *Server) { s.Name = "a b" }, "name", "", "not a valid server name"},
		{"empty name", func(s *Server) { s.Name = "" }, "name", "", "required"},
		{"missing type", func(s *Server) { s.Type = "" }, "type", "fs", "required"},
		{"unknown type", func(s *Server) { s.Type = "grpc" }, "type", "fs", `unknown type "grpc"`},
		{"local no command", func(s *Server) { s.Command = nil }, "command", "fs", `required for type "local"`},
		{"local empty command", func(s *Server) { s.Command = []string{} }, "command", "fs", "required"},
		{"local empty program", func(s *Server) { s.Command = []string{"", "x"} }, "command", "fs", "program"},
		{"NUL in argument", func(s *Server) { s.Command = []string{"a", "b\x00"} }, "command[1]", "fs", "NUL"},
		{"empty env name", func(s *Server) { s.Env[""] = envSecret }, "env", "fs", "empty"},
		{"= in env name", func(s *Server) { s.Env["A=B"] = envSecret }, `env["A=B"]`, "fs", "'='"},
		{"NUL in env name", func(s *Server) { s.Env["A\x00"] = envSecret }, `env["A\x00"]`, "fs", "NUL"},
		{"NUL in env value", func(s *Server) { s.Env["TOKEN"] = envSecret + "\x00" }, "env.TOKEN", "fs", "NUL"},
		{"BEL in env value", func(s *Server) { s.Env["TOKEN"] = envSecret + "\a" }, "env.TOKEN", "fs", "control characters"},
		{"ESC in env value", func(s *Server) { s.Env["TOKEN"] = "\x1b[2J" + envSecret }, "env.TOKEN", "fs", "control characters"},
		{"DEL in env value", func(s *Server) { s.Env["TOKEN"] = envSecret + "\x7f" }, "env.TOKEN", "fs", "control characters"},
		{"lone CR in env value", func(s *Server) { s.Env["TOKEN"] = envSecret + "\rx" }, "env.TOKEN", "fs", "control characters"},
		{"CR at the end of an env value", func(s *Server) { s.Env["TOKEN"] = envSecret + "\r" }, "env.TOKEN", "fs", "control characters"},
		{"http no url", func(s *Server) { s.Type, s.URL = TypeHTTP, "" }, "url", "fs", `required for type "http"`},
		{"sse no url", func(s *Server) { s.Type, s.URL = TypeSSE, "" }, "url", "fs", `required for type "sse"`},
		{"relative url", func(s *Server) { s.Type, s.URL = TypeHTTP, "/mcp" }, "url", "fs", "absolute"},
		{"ftp url", func(s *Server) { s.Type, s.URL = TypeHTTP, "ftp://example.com/" }, "url", "fs", "http"},
		{"url without host", func(s *Server) { s.Type, s.URL = TypeHTTP, "https:///mcp" }, "url", "fs", "host"},
		{"url only port", func(s *Server) { s.Type, s.URL = TypeHTTP, "https://:80/" }, "url", "fs", "host"},
		{"url secret not echoed", func(s *Server) {
			s.Type, s.URL = TypeHTTP, "https://u:"+urlSecret+"@/x"
		}, "url", "fs", "absolute"},
		{"bad url on local", func(s *Server) { s.URL = "nope" }, "url", "fs", "absolute"},
		{"bad header name", func(s *Server) { s.Headers = map[string]string{"X Key": headerSecret} }, `headers["X Key"]`, "fs", "header name"},
		{"header CRLF", func(s *Server) { s.Headers = map[string]string{"X-Key": headerSecret + "\r\nX: y"} }, "headers.X-Key", "fs", "control"},
		{"empty auth kind", func(s *Server) { s.Auth = &Auth{Token: tokenSecret} }, "auth.kind", "fs", "required"},
		{"unknown auth kind", func(s *Server) { s.Auth = &Auth{Kind: "basic"} }, "auth.kind", "fs", `unknown kind "basic"`},
		{"bearer without token", func(s *Server) { s.Auth = &Auth{Kind: AuthBearer} }, "auth.token", "fs", `required for kind "bearer"`},
		{"bearer token newline", func(s *Server) { s.Auth = &Auth{Kind: AuthBearer, Token: tokenSecret + "\n"} }, "auth.token", "fs", "control"},
		{"bearer with client secret", func(s *Server) {
			s.Auth = &Auth{Kind: AuthBearer, Token: tokenSecret, ClientSecret: clientSecret}
		}, "auth.client_secret", "fs", `not used with kind "bearer"`},
		{"bearer with scopes", func(s *Server) {
			s.Auth = &Auth{Kind: AuthBearer, Token: tokenSecret, Scopes: []string{"a"}}
		}, "auth.scopes", "fs", "not used"},
		{"none with token", func(s *Server) { s.Auth = &Auth{Kind: AuthNone, Token: tokenSecret} }, "auth.token", "fs", `not used with kind "none"`},
		{"none with client id", func(s *Server) { s.Auth = &Auth{Kind: AuthNone, ClientID: "c"} }, "auth.client_id", "fs", "not used"},
		{"oauth with token", onHTTP(&Auth{Kind: AuthOAuth, Token: tokenSecret}), "auth.token", "fs", `not used with kind "oauth"`},
		{"oauth secret without id", onHTTP(&Auth{Kind: AuthOAuth, ClientSecret: clientSecret}), "auth.client_secret", "fs", "requires auth.client_id"},
		{"oauth empty scope", onHTTP(&Auth{Kind: AuthOAuth, Scopes: []string{"a", ""}}), "auth.scopes[1]", "fs", "scope"},
		{"oauth scope with space", onHTTP(&Auth{Kind: AuthOAuth, Scopes: []string{"a b"}}), "auth.scopes[0]", "fs", "scope"},
		{"oauth on local", func(s *Server) { s.Auth = &Auth{Kind: AuthOAuth} }, "auth.kind", "fs", `OAuth works only with type "http", not "local"`},
		{"negative timeout", func(s *Server) { s.TimeoutSeconds = -1 }, "timeout_seconds", "fs", "between 1 and 3600"},
		{"absurd timeout", func(s *Server) { s.TimeoutSeconds = MaxTimeoutSeconds + 1 }, "timeout_seconds", "fs", "between"},
		{"explicit zero timeout", func(s *Server) { s.timeoutZero = true }, "timeout_seconds", "fs", "leave it out"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := localServer()
			tt.edit(&s)
			err := s.Validate()
			if err == nil {
				t.Fatal("Validate = nil, want error")
			}
			fe := fieldOf(t, err)
			if fe.Field != tt.field || fe.Server != tt.server {
				t.Errorf("error at server %q field %q, want %q %q (%v)", fe.Server, fe.Field, tt.server, tt.field, err)
			}
			if !strings.Contains(fe.Message, tt.msg) {
				t.Errorf("message %q does not contain %q", fe.Message, tt.msg)
			}
			assertNoSecret(t, "Validate error", err.Error())
		})
	}
}

// onHTTP returns an edit that makes the server an http one using a.
func onHTTP(a *Auth) func(*Server) {
	return func(s *Server) { s.Type, s.URL, s.Auth = TypeHTTP, "https://example.com/mcp", a }
}

func TestFieldErrorString(t *testing.T) {
	tests := []struct {
		err  FieldError
		want string
	}{
		{FieldError{Server: "fs", Field: "command", Message: `required for type "local"`}, `servers.fs.command: required for type "local"`},
		{FieldError{Field: "name", Message: "required"}, "name: required"},
		{FieldError{Server: "fs", Message: "must be a JSON object"}, "servers.fs: must be a JSON object"},
		{FieldError{Message: "invalid JSON"}, "invalid JSON"},
	}
	for _, tt := range tests {
		if got := tt.err.Error(); got != tt.want {
			t.Errorf("Error() = %q, want %q", got, tt.want)
		}
	}
}

func TestKeyPathQuotesOddKeys(t *testing.T) {
	tests := map[string]string{
		"PATH":                   "env.PATH",
		"A=B":                    `env["A=B"]`,
		"":                       `env[""]`,
		strings.Repeat("k", 100): `env["` + strings.Repeat("k", 64) + `"...]`,
	}
	for key, want := range tests {
		if got := keyPath("env", key); got != want {
			t.Errorf("keyPath(env, %q) = %q, want %q", key, got, want)
		}
	}
}
