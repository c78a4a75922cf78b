package config

import "testing"

// ${env:NAME} is written ${NAME}, with its default; an escaped "$${env:"
// stays literal text, and a value without a reference is kept as is.
func TestCanonicalRefs(t *testing.T) {
	for in, want := range map[string]string{
		"${env:TOK}":               "${TOK}",
		"Bearer ${env:T:-x}/y":     "Bearer ${T:-x}/y",
		"$${env:LIT} ${env:A}${B}": "$${env:LIT} ${A}${B}",
		"plain":                    "plain",
		"${env:":                   "${env:",
	} {
		if got := canonicalRefs(in); got != want {
			t.Errorf("canonicalRefs(%q) = %q, want %q", in, got, want)
		}
	}
	s := Server{Name: "s", Type: TypeHTTP, URL: "https://x.example/${env:P}", Auth: &Auth{Kind: AuthNone}, TimeoutSeconds: DefaultTimeoutSeconds,
		Headers: map[string]string{"A": "${env:H}"}}
	c := s.Canonical()
	if c.Auth != nil || c.TimeoutSeconds != 0 || c.URL != "https://x.example/${P}" || c.Headers["A"] != "${H}" || s.Headers["A"] != "${env:H}" {
		t.Errorf("Canonical = %#v (of %#v)", c, s)
	}
}
