package config

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
)

// fakeEnv is a lookup over a fixed map.
func fakeEnv(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

func TestExpandValue(t *testing.T) {
	env := fakeEnv(map[string]string{"A": "x", "B": "y z", "EMPTY": "", "_U1": "u"})
	for _, c := range []struct {
		in, want string
		names    []string
	}{
		{"", "", nil},
		{"plain", "plain", nil},
		{"pa$$w0rd", "pa$$w0rd", nil},
		{"$", "$", nil},
		{"$A", "$A", nil},
		{"{A}", "{A}", nil},
		{"cost: 5$", "cost: 5$", nil},
		{"${A}", "x", []string{"A"}},
		{"${env:A}", "x", []string{"A"}},
		{"pre-${A}-post", "pre-x-post", []string{"A"}},
		{"${A}${B}${A}", "xy zx", []string{"A", "B"}},
		{"Bearer ${B}", "Bearer y z", []string{"B"}},
		{"${_U1}", "u", []string{"_U1"}},
		{"${UNSET:-dflt}", "dflt", []string{"UNSET"}},
		{"${env:UNSET:-d}", "d", []string{"UNSET"}},
		{"${EMPTY:-d}", "d", []string{"EMPTY"}},
		{"${EMPTY}", "", []string{"EMPTY"}},
		{"${A:-d}", "x", []string{"A"}},
		{"${UNSET:-}", "", []string{"UNSET"}},
		{"${UNSET:-a$b{c}", "a$b{c", []string{"UNSET"}},
		{"${A:-}}", "x}", []string{"A"}},
		{"$${A}", "${A}", nil},
		{"$$${A}", "$${A}", nil},
		{"$$$${A}", "$$${A}", nil},
		{"$${A}${A}", "${A}x", []string{"A"}},
		{"$$", "$$", nil},
		{"$${", "${", nil},
		{"a$}", "a$}", nil},
	} {
		got, err := ExpandValue(c.in, env)
		if err != nil || got != c.want {
			t.Errorf("ExpandValue(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
		names, err := ReferencedNames(c.in)
		if err != nil || !slices.Equal(names, c.names) {
			t.Errorf("ReferencedNames(%q) = %q, %v; want %q", c.in, names, err, c.names)
		}
	}
}

func TestMalformedReferences(t *testing.T) {
	for _, in := range []string{
		"${", "${A", "x${A", "${}", "${1A}", "${A-B}", "${A:B}", "${A :-x}", "${ A}",
		"${input:tok}", "${env:}", "${env:1}", "${A:-${B}}", "${A:-$${B}}", "${A}${", "${é}",
	} {
		if _, err := ExpandValue(in, fakeEnv(nil)); err == nil || !strings.Contains(err.Error(), "malformed reference at byte") {
			t.Errorf("ExpandValue(%q): err = %v, want a malformed reference", in, err)
		}
		if _, err := ReferencedNames(in); err == nil {
			t.Errorf("ReferencedNames(%q): no error", in)
		}
	}
}

func TestUnsetVariable(t *testing.T) {
	_, err := ExpandValue("Bearer ${GITHUB_TOKEN}", fakeEnv(nil))
	var unset *UnsetVariableError
	if !errors.As(err, &unset) || unset.Name != "GITHUB_TOKEN" || !strings.Contains(err.Error(), "${GITHUB_TOKEN}") {
		t.Fatalf("err = %v, want an UnsetVariableError naming GITHUB_TOKEN", err)
	}
}

func TestRequiredNames(t *testing.T) {
	got, err := RequiredNames("${A} $${B} ${C:-x} ${env:D} ${A} ${E:-}")
	if want := []string{"A", "D"}; err != nil || !slices.Equal(got, want) {
		t.Errorf("got %q, %v; want %q", got, err, want)
	}
	if _, err := RequiredNames("${input:e}"); err == nil {
		t.Error("a malformed reference gave no error")
	}
}

func TestEscapeLiteral(t *testing.T) {
	for _, s := range []string{"", "pa$$w0rd", "${A}", "$${A}", "${", "$", "${${", "a$${b}$"} {
		esc := EscapeLiteral(s)
		got, err := ExpandValue(esc, fakeEnv(map[string]string{"A": "no", "b": "no"}))
		if err != nil || got != s {
			t.Errorf("ExpandValue(EscapeLiteral(%q) = %q) = %q, %v", s, esc, got, err)
		}
	}
	if got := EscapeLiteral("pa$$w0rd"); got != "pa$$w0rd" {
		t.Errorf("EscapeLiteral changed a value without ${: %q", got)
	}
}

func FuzzReferences(f *testing.F) {
	for _, s := range []string{"", "${A}", "$${A}", "pa$$w0rd", "${A:-d}", "${env:A}", "${", "$$${A}", "Bearer ${T}", "${A:-${B}}"} {
		f.Add(s)
	}
	env := fakeEnv(map[string]string{"A": "${B}", "T": "t"})
	f.Fuzz(func(t *testing.T, s string) {
		// A literal always comes back from its escape, and holds no
		// reference.
		esc := EscapeLiteral(s)
		if got, err := ExpandValue(esc, env); err != nil || got != s {
			t.Fatalf("ExpandValue(EscapeLiteral(%q)) = %q, %v", s, got, err)
		}
		if names, err := ReferencedNames(esc); err != nil || len(names) != 0 {
			t.Fatalf("ReferencedNames(EscapeLiteral(%q)) = %q, %v", s, names, err)
		}
		names, nerr := ReferencedNames(s)
		got, err := ExpandValue(s, env)
		if (nerr == nil) != (err == nil || errors.As(err, new(*UnsetVariableError))) {
			t.Fatalf("%q: ReferencedNames error %v but ExpandValue error %v", s, nerr, err)
		}
		if nerr != nil {
			if strings.Contains(nerr.Error(), s) && len(s) > 8 {
				t.Fatalf("the error quotes the value: %v", nerr)
			}
			return
		}
		if !strings.Contains(s, "${") && (got != s || len(names) != 0) {
			t.Fatalf("%q without ${ changed: %q %q", s, got, names)
		}
		if referenceOnly(s) && !hasRefs(s) {
			t.Fatalf("%q is reference-only without a reference", s)
		}
	})
}

func TestReferenceOnly(t *testing.T) {
	for in, want := range map[string]bool{
		"${GITHUB_TOKEN}":                     true,
		"Bearer ${GITHUB_TOKEN}":              true,
		"${env:T}":                            true,
		"${USER}${PASS}":                      true,
		"token ${A}${B}":                      true,
		"${A:-}":                              true,
		"${A:-fallback-secret}":               false,
		"Bearer  ${T}":                        false,
		"sk-live1 ${T}":                       false,
		"correcthorsebatterystaple ${SUFFIX}": false,
		"hunter ${T}":                         false,
		"bearer ${T}":                         true,
		"BASIC ${T}":                          true,
		"ApiKey ${T}":                         true,
		"Bot ${T}":                            true,
		"Digest ${T}":                         true,
		"${A}:${B}":                           false,
		"s3cret${T}":                          false,
		"${T} trailing":                       false,
		"$${T}":                               false,
		"Bearer":                              false,
		"":                                    false,
		"${":                                  false,
	} {
		if got := referenceOnly(in); got != want {
			t.Errorf("referenceOnly(%q) = %v, want %v", in, got, want)
		}
	}
}

// refServer is a server whose every reference field holds a reference.
func refServer(t *testing.T) Server {
	t.Helper()
	f, err := Parse([]byte(`{"servers": {"gh": {"type": "local",
		"command": ["${BIN}", "--flag=${FLAG:-on}", "pa$$w0rd"],
		"cwd": "${HOME}/work",
		"env": {"TOKEN": "${GITHUB_TOKEN}", "MIX": "lit-${GITHUB_TOKEN}", "LIT": "pa$$w0rd"},
		"url": "https://${HOST}/mcp", "headers": {"Authorization": "Bearer ${GITHUB_TOKEN}"}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	s := f.Servers[0]
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	return s
}

func TestServerExpand(t *testing.T) {
	s := refServer(t)
	env := fakeEnv(map[string]string{"BIN": "/bin/srv", "HOME": "/home/u", "GITHUB_TOKEN": envSecret, "HOST": "h.example"})
	x, err := s.Expand(env)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(x.Command, []string{"/bin/srv", "--flag=on", "pa$$w0rd"}) || x.Cwd != "/home/u/work" ||
		x.Env["TOKEN"] != envSecret || x.Env["MIX"] != "lit-"+envSecret || x.Env["LIT"] != "pa$$w0rd" ||
		x.URL != "https://h.example/mcp" || x.Headers["Authorization"] != "Bearer "+envSecret {
		t.Fatalf("expanded: %#v", x.Command)
	}
	if s.Env["TOKEN"] != "${GITHUB_TOKEN}" || s.Cwd != "${HOME}/work" {
		t.Fatal("Expand changed its receiver")
	}
	if !x.Expanded() || s.Expanded() {
		t.Fatal("Expanded")
	}
	// Expanded values are final: a value that looks like a reference is
	// not expanded again, and the expanded view masks it.
	env2 := fakeEnv(map[string]string{"BIN": "/b", "HOME": "/h", "GITHUB_TOKEN": "${OTHER}", "HOST": "h"})
	x2, err := s.Expand(env2)
	if err != nil {
		t.Fatal(err)
	}
	if x2.Env["TOKEN"] != "${OTHER}" || x2.View().Env["TOKEN"].Reference != "" {
		t.Fatalf("expanded value re-read as a reference: %+v", x2.View().Env["TOKEN"])
	}
	if again, _ := x2.Expand(env); again.Env["TOKEN"] != "${OTHER}" {
		t.Fatal("Expand of an expanded server expanded again")
	}
	// The expanded secrets are the secrets; the unexpanded server has
	// none for its reference-only values.
	if !slices.Contains(x.Secrets(), envSecret) || !slices.Contains(x.Secrets(), "Bearer "+envSecret) {
		t.Fatalf("expanded secrets: %d values", len(x.Secrets()))
	}
	if slices.Contains(s.Secrets(), "${GITHUB_TOKEN}") {
		t.Fatal("a reference counted as a secret")
	}
	// Each variable's value in a secret field is a secret alone too (a
	// server may echo the token without "Bearer "); one only in the
	// command or the cwd is not.
	hdr := Server{Name: "h", Type: TypeHTTP, URL: "https://h/", Headers: map[string]string{"Authorization": "Bearer ${T}"}, Command: []string{"${C}"}}
	xh, err := hdr.Expand(fakeEnv(map[string]string{"T": tokenSecret, "C": "/usr/bin/not-secret"}))
	if err != nil {
		t.Fatal(err)
	}
	if got := xh.Secrets(); !slices.Contains(got, tokenSecret) || !slices.Contains(got, "Bearer "+tokenSecret) || slices.Contains(got, "/usr/bin/not-secret") {
		t.Fatalf("secrets of an expanded header: %d values", len(got))
	}
	// Never stored.
	if _, err := Marshal(&File{Servers: []Server{x}}); err == nil {
		t.Fatal("Marshal wrote an expanded server")
	}
	out, err := Marshal(&File{Servers: []Server{s}})
	if err != nil || strings.Contains(string(out), envSecret) || !strings.Contains(string(out), `"Bearer ${GITHUB_TOKEN}"`) ||
		!strings.Contains(string(out), `"cwd": "${HOME}/work"`) {
		t.Fatalf("Marshal: %v\n%s", err, out)
	}
}

func TestServerExpandErrors(t *testing.T) {
	s := refServer(t)
	for _, c := range []struct {
		env        map[string]string
		field, msg string
	}{
		{map[string]string{"HOME": "/h", "GITHUB_TOKEN": "t", "HOST": "h"}, "command[0]", "${BIN}"},
		{map[string]string{"BIN": "b", "HOME": "/h", "HOST": "h"}, "env.MIX", "${GITHUB_TOKEN}"},
		{map[string]string{"BIN": "b", "HOME": "rel", "GITHUB_TOKEN": "t", "HOST": "h"}, "cwd", "after expanding references"},
		{map[string]string{"BIN": "b", "HOME": "/h", "GITHUB_TOKEN": "t", "HOST": "bad host/"}, "url", "after expanding references"},
		{map[string]string{"BIN": "b", "HOME": "/h", "GITHUB_TOKEN": envSecret + "\n", "HOST": "h"}, "env.MIX", ""},
	} {
		_, err := s.Expand(fakeEnv(c.env))
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Field != c.field || fe.Server != "gh" || !strings.Contains(fe.Message, c.msg) || !errors.Is(err, ErrInvalid) {
			// The header value with a newline fails on headers, not env:
			// env values only refuse NUL.
			if c.field == "env.MIX" && fe != nil && fe.Field == `headers.Authorization` {
				continue
			}
			t.Errorf("env %v: err = %v, want on %s with %q", c.env, err, c.field, c.msg)
		}
		if err != nil && strings.Contains(err.Error(), envSecret) {
			t.Errorf("the error quotes a value: %v", err)
		}
	}
}

func TestReferenceValidation(t *testing.T) {
	for body, field := range map[string]string{
		`{"name":"a","type":"local","command":["x","${"]}`:                                            "command[1]",
		`{"name":"a","type":"local","command":["x"],"cwd":"${1}"}`:                                    "cwd",
		`{"name":"a","type":"local","command":["x"],"cwd":"rel/dir"}`:                                 "cwd",
		`{"name":"a","type":"local","command":["x"],"env":{"K":"se${cret"}}`:                          "env.K",
		`{"name":"a","type":"http","url":"https://${H/"}`:                                             "url",
		`{"name":"a","type":"http","url":"https://h/","headers":{"X":"${input:t}"}}`:                  "headers.X",
		`{"name":"a","type":"http","url":"https://h/","auth":{"kind":"bearer","token":"${A:-${B}}"}}`: "auth.token",
	} {
		_, err := DecodeServer([]byte(body))
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Field != field {
			t.Errorf("%s: err = %v, want on %s", body, err, field)
		}
		if err != nil && strings.Contains(err.Error(), "cret") {
			t.Errorf("the error quotes a secret: %v", err)
		}
	}
	// Fields made with references are checked once expanded.
	for _, body := range []string{
		`{"name":"a","type":"http","url":"${BASE_URL}/mcp"}`,
		`{"name":"a","type":"local","command":["x"],"cwd":"${PROJECT}"}`,
		`{"name":"a","type":"http","url":"https://h/","auth":{"kind":"client_credentials","client_id":"c","private_key":"${KEY_PEM}"}}`,
		`{"name":"a","type":"http","url":"https://h/","auth":{"kind":"bearer","token":"pa$$w0rd"}}`,
	} {
		if _, err := DecodeServer([]byte(body)); err != nil {
			t.Errorf("%s: %v", body, err)
		}
	}
}

func TestFileEntryWithMalformedReferenceLoadsInvalid(t *testing.T) {
	f, err := Parse([]byte(`{"servers": {"bad": {"type": "local", "command": ["x"], "env": {"K": "${"}}, "good": {"type": "local", "command": ["y"]}}}`))
	if err != nil {
		t.Fatalf("one malformed reference failed the whole file: %v", err)
	}
	var fe *FieldError
	if err := f.Servers[0].Validate(); !errors.As(err, &fe) || fe.Field != "env.K" {
		t.Fatalf("bad: %v", err)
	}
	if err := f.Servers[1].Validate(); err != nil {
		t.Fatalf("good: %v", err)
	}
}

func TestReferenceView(t *testing.T) {
	s := refServer(t)
	s.Env["SHORT"] = "s3cret${GITHUB_TOKEN}"
	s.Auth = &Auth{Kind: AuthBearer, Token: "${env:TOK}"}
	v := s.View()
	if got := v.Headers["Authorization"]; got != (SecretView{HasValue: true, Reference: "Bearer ${GITHUB_TOKEN}"}) {
		t.Errorf("header view = %+v", got)
	}
	if got := v.Env["MIX"]; got.Reference != "" || got.Masked == "" || !got.HasValue {
		t.Errorf("a mixed value is not masked: %+v", got)
	}
	if got := v.Env["SHORT"]; got.Reference != "" || got.Masked != "****KEN}" {
		t.Errorf("a mixed value is not masked: %+v", got)
	}
	if v.Auth.TokenReference != "${env:TOK}" || !v.Auth.HasToken || v.Auth.TokenMasked != "" {
		t.Errorf("token view = %+v", v.Auth)
	}
	if v.Cwd != "${HOME}/work" || v.URL != "https://${HOST}/mcp" {
		t.Errorf("cwd %q url %q", v.Cwd, v.URL)
	}
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	js := string(b)
	for _, want := range []string{
		`"Authorization":{"has_value":true,"reference":"Bearer ${GITHUB_TOKEN}"}`,
		`"TOKEN":{"has_value":true,"reference":"${GITHUB_TOKEN}"}`,
		`"LIT":{"has_value":true,"masked":"****"}`,
		`"token_reference":"${env:TOK}"`,
		`"cwd":"${HOME}/work"`,
	} {
		if !strings.Contains(js, want) {
			t.Errorf("view lacks %s:\n%s", want, js)
		}
	}
	if strings.Contains(js, "s3cret") || strings.Contains(js, "pa$$w0rd\"") && strings.Contains(js, `"LIT":{"has_value":true,"reference"`) {
		t.Errorf("view shows a literal secret:\n%s", js)
	}
	// A URL whose userinfo is a reference is still redacted.
	s.URL = "https://${USER}:${PASS}@${HOST}/mcp?k=${K}"
	if got := s.View().URL; got != "https://[redacted]@${HOST}/mcp?k=${K}" {
		t.Errorf("url view = %q", got)
	}
	s.URL = "https://user:" + urlSecret + "@${HOST}/mcp"
	if got := s.View().URL; strings.Contains(got, urlSecret) {
		t.Errorf("url view = %q", got)
	}
}

func TestPatchKeepsReferences(t *testing.T) {
	s := refServer(t)
	p, err := ApplyPatch(s, []byte(`{"env": {"NEW": "${NEW_VAR:-x}"}, "cwd": "/srv/${PROJECT}", "headers": {"X-Key": "$${literal}"}}`))
	if err != nil {
		t.Fatal(err)
	}
	if p.Env["NEW"] != "${NEW_VAR:-x}" || p.Env["TOKEN"] != "${GITHUB_TOKEN}" || p.Cwd != "/srv/${PROJECT}" || p.Headers["X-Key"] != "$${literal}" {
		t.Fatalf("patched: %v %q %q", p.Env, p.Cwd, p.Headers)
	}
	if _, err := ApplyPatch(s, []byte(`{"headers": {"X-Key": "${"}}`)); err == nil || !strings.Contains(err.Error(), "headers.X-Key") {
		t.Fatalf("malformed in a patch: %v", err)
	}
	if p, err := ApplyPatch(s, []byte(`{"cwd": ""}`)); err != nil || p.Cwd != "" {
		t.Fatalf(`cwd "": %v %q`, err, p.Cwd)
	}
}

// A name that is not shaped like an environment variable may be a pasted
// secret: the value stays masked, counts as a secret (the name alone
// too), and the unset-variable error does not quote it.
func TestPastedSecretNames(t *testing.T) {
	for _, name := range []string{"ghp_abc123def456", "sk_live_51Habc", "AKIAIOSFODNN7EXAMPLE", "lower_case", strings.Repeat("A", 65)} {
		if EnvShaped(name) {
			t.Errorf("EnvShaped(%q)", name)
		}
		v := "Bearer ${" + name + "}"
		if referenceOnly(v) {
			t.Errorf("referenceOnly(%q)", v)
		}
		s := Server{Name: "s", Type: TypeLocal, Command: []string{"x"}, Env: map[string]string{"T": v}}
		if sv := s.View().Env["T"]; sv.Reference != "" || sv.Masked == "" {
			t.Errorf("view of %q = %+v", v, sv)
		}
		if secrets := s.Secrets(); !slices.Contains(secrets, v) || !slices.Contains(secrets, name) {
			t.Errorf("Secrets of %q = %q", v, secrets)
		}
		_, err := s.Expand(fakeEnv(nil))
		if err == nil || strings.Contains(err.Error(), name) || !strings.Contains(err.Error(), "env.T") || !strings.Contains(err.Error(), "unset variable") {
			t.Errorf("Expand %q: %v", v, err)
		}
	}
	var unset *UnsetVariableError
	if _, err := ExpandValue("${ghp_abc}", fakeEnv(nil)); !errors.As(err, &unset) || unset.Name != "" {
		t.Errorf("ExpandValue of a pasted name: %v", err)
	}
	for _, name := range []string{"GITHUB_TOKEN", "A", "_X", "AWS_SECRET_ACCESS_KEY", "HOME", "PATH2"} {
		if !EnvShaped(name) || !referenceOnly("Bearer ${"+name+"}") {
			t.Errorf("%q is not taken for a variable", name)
		}
	}
}

// A cwd made of references that expand to "" is an error naming cwd, not
// mcpvisor's own directory.
func TestCwdExpandingToEmpty(t *testing.T) {
	s := Server{Name: "s", Type: TypeLocal, Enabled: true, Command: []string{"x"}, Cwd: "${WORKDIR}${SUB:-}"}
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	_, err := s.Expand(fakeEnv(map[string]string{"WORKDIR": ""}))
	var fe *FieldError
	if !errors.As(err, &fe) || fe.Field != "cwd" {
		t.Fatalf("Expand: %v, want an error naming cwd", err)
	}
	x, err := s.Expand(fakeEnv(map[string]string{"WORKDIR": "/srv"}))
	if err != nil || x.Cwd != "/srv" {
		t.Fatalf("Expand: %q, %v", x.Cwd, err)
	}
}
