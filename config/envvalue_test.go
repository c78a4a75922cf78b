package config

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

// An env value may hold tab, newline and CRLF (a PEM key); every other
// control character is refused, as written and as a reference brings it
// in, with a FieldError at env.NAME that does not quote the value.
func TestEnvValueControlCharacters(t *testing.T) {
	const pem = "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n-----END PRIVATE KEY-----\n"
	for _, v := range []string{pem, strings.ReplaceAll(pem, "\n", "\r\n"), "a\tb", "plain"} {
		s := Server{Name: "s", Type: TypeLocal, Command: []string{"x"}, Env: map[string]string{"KEY": v}}
		if err := s.Validate(); err != nil {
			t.Errorf("Validate(%q): %v", v, err)
		}
	}
	const marker = "envvalue-marker-3141"
	for _, bad := range []string{"\a", "\x1b", "\x7f", "\x01", "\r", "\v", "\f"} {
		v := marker + bad + "x"
		s := Server{Name: "s", Type: TypeLocal, Command: []string{"x"}, Env: map[string]string{"KEY": v}}
		checkEnvErr(t, "Validate", s.Validate(), marker)
		s.Env["KEY"] = "${VAL}"
		if err := s.Validate(); err != nil {
			t.Fatalf("Validate of a reference: %v", err)
		}
		_, err := s.Expand(fakeEnv(map[string]string{"VAL": v}))
		checkEnvErr(t, "Expand", err, marker)
	}
}

func checkEnvErr(t *testing.T, what string, err error, marker string) {
	t.Helper()
	var fe *FieldError
	if !errors.As(err, &fe) || fe.Field != "env.KEY" || !strings.Contains(fe.Message, "control characters") || strings.Contains(err.Error(), marker) {
		t.Errorf("%s: %v, want a FieldError at env.KEY", what, err)
	}
}

// ExpandedSecrets knows what each secret field expanded to even when the
// expansion fails as a whole: a value that does not validate, or another
// field's unset variable, does not hide the others; a field that failed
// brings nothing in, and no reference-only text counts as a secret.
func TestExpandedSecrets(t *testing.T) {
	s := Server{Name: "s", Type: TypeLocal, Command: []string{"x"}, Cwd: "${TOK}",
		Env: map[string]string{"A": "Bearer ${TOK}", "B": "${UNSET}", "C": "${BELL}"}}
	env := fakeEnv(map[string]string{"TOK": "tok-secret-value", "BELL": "bell\asecret"})
	if _, err := s.Expand(env); err == nil {
		t.Fatal("Expand succeeded")
	}
	got := s.ExpandedSecrets(env)
	for _, want := range []string{"Bearer tok-secret-value", "tok-secret-value", "bell\asecret"} {
		if !slices.Contains(got, want) {
			t.Errorf("ExpandedSecrets lacks %q: %q", want, got)
		}
	}
	for _, v := range got {
		if strings.Contains(v, "${") {
			t.Errorf("ExpandedSecrets holds the reference text %q", v)
		}
	}
	x, err := Server{Name: "s", Type: TypeLocal, Command: []string{"x"}, Env: map[string]string{"A": "${TOK}"}}.Expand(env)
	if err != nil || !slices.Equal(x.ExpandedSecrets(env), x.Secrets()) {
		t.Errorf("ExpandedSecrets of an expanded server: %v %q", err, x.ExpandedSecrets(env))
	}
}
