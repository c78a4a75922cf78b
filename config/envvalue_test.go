package config

import (
	"errors"
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
