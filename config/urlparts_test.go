package config

import (
	"encoding/base64"
	"slices"
	"strings"
	"testing"
)

// The view of a URL masks its userinfo, every query value and the
// fragment, keeps the parameter names, scheme, host, port and path, and
// shows a value made only of references as it is, as secret fields do.
func TestViewURLMasksSecretParts(t *testing.T) {
	const marker = "MARKER-url-3f9a2c7d"
	cases := map[string]string{
		"https://x.example/mcp?token=" + marker:                    "https://x.example/mcp?token=****2c7d",
		"https://x.example/mcp?api_key=" + marker + "&profile=abc": "https://x.example/mcp?api_key=****2c7d&profile=****",
		"https://x.example/mcp?key=${API_KEY}&v=2":                 "https://x.example/mcp?key=${API_KEY}&v=****",
		"https://x.example/mcp?key=abc${API_KEY}":                  "https://x.example/mcp?key=****KEY%7D",
		"https://x.example/mcp#" + marker:                          "https://x.example/mcp#****2c7d",
		"https://x.example/mcp#${FRAG}":                            "https://x.example/mcp#${FRAG}",
		"https://" + marker + "@x.example/mcp":                     "https://[redacted]@x.example/mcp",
		"https://${TOKEN}@x.example/mcp":                           "https://[redacted]@x.example/mcp",
		"https://x.example/mcp?flag":                               "https://x.example/mcp?flag",
		"https://x.example/mcp?":                                   "https://x.example/mcp?",
		"https://x.example/${PATH_PART}/mcp":                       "https://x.example/${PATH_PART}/mcp",
		"${REF_URL}/mcp?k=" + marker:                               "${REF_URL}/mcp?k=****2c7d",
		"https://x.example/mcp?q=a%20" + marker:                    "https://x.example/mcp?q=****2c7d",
	}
	for raw, want := range cases {
		s := Server{Name: "r", Type: TypeHTTP, URL: raw}
		if got := s.View().URL; got != want {
			t.Errorf("view of %q = %q, want %q", raw, got, want)
		}
		if strings.Contains(s.String(), marker) {
			t.Errorf("%q: the view shows the value: %s", raw, s)
		}
	}
}

// A URL whose port or host is a reference is valid and is shown as
// written (it used to be "<unparsable URL>": ${PORT} is no port).
func TestViewURLReferencesInHostAndPort(t *testing.T) {
	for raw, want := range map[string]string{
		"http://localhost:${PORT}/mcp":                 "http://localhost:${PORT}/mcp",
		"http://${HOST}:${PORT}/mcp?k=v":               "http://${HOST}:${PORT}/mcp?k=****",
		"https://${HOST}/mcp":                          "https://${HOST}/mcp",
		"https://u:${PASS}@${HOST}:${PORT}/mcp?k=${K}": "https://[redacted]@${HOST}:${PORT}/mcp?k=${K}",
		"http://[::1]:${PORT}/mcp":                     "http://[::1]:${PORT}/mcp",
		"http://localhost:${PORT:-8080}/mcp":           "http://localhost:${PORT:-8080}/mcp",
	} {
		s := Server{Name: "r", Type: TypeHTTP, URL: raw}
		if got := s.View().URL; got != want {
			t.Errorf("view of %q = %q, want %q", raw, got, want)
		}
	}
}

// Secrets holds every secret part of the URL, and, on the expanded copy,
// what a reference outside its scheme, host and port became; the host
// and the port never.
func TestSecretsURLParts(t *testing.T) {
	s := Server{Name: "r", Type: TypeHTTP, URL: "https://user-3f9a:pass-8c1d@x.example/mcp?key=key-77aa01&flag&e=a%2Bb-value#frag-00bb11"}
	got := s.Secrets()
	pair := "user-3f9a:pass-8c1d"
	for _, want := range []string{"user-3f9a", "pass-8c1d", pair, base64.StdEncoding.EncodeToString([]byte(pair)), "key-77aa01", "a%2Bb-value", "a+b-value", "frag-00bb11"} {
		if !slices.Contains(got, want) {
			t.Errorf("Secrets lacks %q: %q", want, got)
		}
	}
	for _, not := range []string{"x.example", "https", "flag"} {
		if slices.Contains(got, not) {
			t.Errorf("Secrets holds %q: %q", not, got)
		}
	}
	// Unexpanded, a query value made only of references holds no secret.
	r := Server{Name: "r", Type: TypeHTTP, URL: "http://${HOST}:${PORT}/${SEG}/mcp?key=${KEY}"}
	if got := r.Secrets(); len(got) != 0 {
		t.Errorf("Secrets of references = %q", got)
	}
	env := map[string]string{"HOST": "host-aa.example", "PORT": "18443", "SEG": "seg-secret-91", "KEY": "key-secret-42"}
	x, err := r.Expand(func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	if err != nil {
		t.Fatal(err)
	}
	got = x.Secrets()
	for _, want := range []string{"seg-secret-91", "key-secret-42"} {
		if !slices.Contains(got, want) {
			t.Errorf("expanded Secrets lacks %q: %q", want, got)
		}
	}
	for _, not := range []string{"host-aa.example", "18443"} {
		if slices.Contains(got, not) {
			t.Errorf("expanded Secrets holds %q: %q", not, got)
		}
	}
	if v := x.View().URL; strings.Contains(v, "seg-secret-91") || strings.Contains(v, "key-secret-42") || !strings.Contains(v, "host-aa.example:18443") {
		t.Errorf("expanded view = %q", v)
	}
	// A reference that is the whole origin is no secret once expanded.
	b := Server{Name: "b", Type: TypeHTTP, URL: "${BASE_URL}/mcp"}
	bx, err := b.Expand(func(string) (string, bool) { return "https://base.example", true })
	if err != nil {
		t.Fatal(err)
	}
	if got := bx.Secrets(); slices.Contains(got, "https://base.example") {
		t.Errorf("the origin is a secret: %q", got)
	}
}
