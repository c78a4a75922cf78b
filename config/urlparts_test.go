package config

import (
	"encoding/base64"
	"errors"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/openprogram/mcpvisor/internal/redact"
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
		s := assertViewURL(t, raw, want)
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
		assertViewURL(t, raw, want)
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

// A reference outside the scheme, host and port is shown as written only
// when it holds no secret of its own (no default, an [EnvShaped] name);
// its default and a pasted-looking name are masked, and both are secrets
// of the unexpanded server. In the host or the port a default shows.
func TestViewURLMasksUncleanReferences(t *testing.T) {
	const secret = "sk-live-SECRETSECRET1234"
	const pasted = "ghp_pastedTokenABCDEF123"
	cases := map[string]string{
		"https://x.example/mcp/${SEG:-" + secret + "}/sse":        "https://x.example/mcp/${SEG:-****}/sse",
		"https://x.example/mcp/${env:SEG:-" + secret + "}/sse":    "https://x.example/mcp/${env:SEG:-****}/sse",
		"https://x.example/mcp/${" + pasted + "}/sse":             "https://x.example/mcp/${****}/sse",
		"https://x.example/mcp/${" + pasted + ":-" + secret + "}": "https://x.example/mcp/${****:-****}",
		"https://x.example/${SEG:-" + secret + "}/mcp?k=v":        "https://x.example/${SEG:-****}/mcp?k=****",
		"https://x.example/mcp?${" + pasted + "}=1":               "https://x.example/mcp?${****}=****",
		"https://x.example/${SEG:-}/mcp":                          "https://x.example/${SEG:-}/mcp",
		"http://${HOST:-localhost}:${PORT:-8080}/mcp":             "http://${HOST:-localhost}:${PORT:-8080}/mcp",
	}
	for raw, want := range cases {
		s := assertViewURL(t, raw, want)
		got := s.Secrets()
		for _, w := range []string{secret, pasted} {
			if strings.Contains(raw, w) && !slices.Contains(got, w) {
				t.Errorf("Secrets of %q lacks %q: %q", raw, w, got)
			}
		}
	}
	if got := (Server{Name: "r", Type: TypeHTTP, URL: "http://${HOST:-localhost}:${PORT:-8080}/mcp"}).Secrets(); len(got) != 0 {
		t.Errorf("a host's or a port's default is a secret: %q", got)
	}
}

// A reference that the template puts in the host but whose value brings
// the path (https://${HOST}${P}) is a secret once expanded; one that is
// the host stays visible.
func TestExpandedPathFromHostReference(t *testing.T) {
	env := map[string]string{"HOST": "x.example", "P": "/seg-secret-91/mcp", "Q": "?k=seg-secret-93"}
	lk := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	for _, raw := range []string{"https://${HOST}${P}", "https://${HOST}${Q}"} {
		x, err := Server{Name: "r", Type: TypeHTTP, URL: raw}.Expand(lk)
		if err != nil {
			t.Fatal(err)
		}
		got := x.Secrets()
		if slices.Contains(got, "x.example") {
			t.Errorf("%q: the host is a secret: %q", raw, got)
		}
		if v := x.View().URL; strings.Contains(v, "seg-secret-9") || !strings.Contains(v, "https://x.") {
			t.Errorf("%q: expanded view = %q", raw, v)
		}
	}
	// The unexpanded template cannot tell: a default of the second is a
	// secret and masked.
	s := Server{Name: "r", Type: TypeHTTP, URL: "https://${HOST}${P:-/dflt-secret-92}"}
	if v := s.View().URL; v != "https://${HOST}${P:-****}" || !slices.Contains(s.Secrets(), "/dflt-secret-92") {
		t.Errorf("view = %q, secrets = %q", v, s.Secrets())
	}
}

// Secrets holds the userinfo and the fragment as Go's HTTP errors print
// them (Post "URL": the user escaped, the password stripped, the fragment
// as written): a redactor given them leaves none in such an error.
func TestSecretsURLPrintedSpellings(t *testing.T) {
	for raw, marker := range map[string]string{
		"http://tok,en%20USERSECRET-77@x.example/mcp":     "USERSECRET-77",
		"http://us%20er:pa%20PASSSECRET-78@x.example/mcp": "PASSSECRET-78",
		"http://x.example/mcp#%46RAG-SECRET-1a2b3c":       "RAG-SECRET-1a2b3c",
		"http://x.example/mcp#a b%20FRAGSECRET-79":        "FRAGSECRET-79",
	} {
		s := Server{Name: "r", Type: TypeHTTP, URL: raw}
		u, err := url.Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		red := redact.New(s.Secrets()...)
		for _, text := range []string{u.String(), u.Redacted(), (&url.Error{Op: "Post", URL: u.Redacted(), Err: errors.New("refused")}).Error()} {
			if got := red.String(text); strings.Contains(got, marker) {
				t.Errorf("%q: %q scrubs to %q", raw, text, got)
			}
		}
	}
}

// A bare query word (no '=') of 12 characters or more may be a key
// (?sk-live-…): the view masks it as a value and it is a secret; a
// shorter one (?flag, ?debug) is shown.
func TestViewURLBareQueryWord(t *testing.T) {
	s := Server{Name: "r", Type: TypeHTTP, URL: "https://x.example/mcp?sk-live-SECRETSECRET1234&flag&${KEY_WORD}"}
	if v := s.View().URL; v != "https://x.example/mcp?****1234&flag&${KEY_WORD}" {
		t.Errorf("view = %q", v)
	}
	got := s.Secrets()
	if !slices.Contains(got, "sk-live-SECRETSECRET1234") || slices.Contains(got, "flag") {
		t.Errorf("Secrets = %q", got)
	}
}

// A reference anywhere in the port (after the authority's last ':') or
// inside an IPv6 literal's brackets parses: the URL is shown, its query
// masked, its secrets found.
func TestViewURLReferencesInPortAndIPv6(t *testing.T) {
	for raw, want := range map[string]string{
		"http://[${V6}]:8080/mcp?key=abc":               "http://[${V6}]:8080/mcp?key=****",
		"http://[fe80::${V6}]:${PORT}/mcp":              "http://[fe80::${V6}]:${PORT}/mcp",
		"http://host:80${X}/mcp?key=LITERALSECRET123":   "http://host:80${X}/mcp?key=****T123",
		"http://host:${A}${B}/mcp?key=LITERALSECRET123": "http://host:${A}${B}/mcp?key=****T123",
		"http://u:p${PASS}@host:${PORT}/mcp":            "http://[redacted]@host:${PORT}/mcp",
	} {
		s := assertViewURL(t, raw, want)
		if strings.Contains(raw, "LITERALSECRET123") && !slices.Contains(s.Secrets(), "LITERALSECRET123") {
			t.Errorf("Secrets of %q = %q", raw, s.Secrets())
		}
	}
}

// assertViewURL checks the view of a server whose URL is raw, and
// returns that server.
func assertViewURL(t *testing.T, raw, want string) Server {
	t.Helper()
	s := Server{Name: "r", Type: TypeHTTP, URL: raw}
	if got := s.View().URL; got != want {
		t.Errorf("view of %q = %q, want %q", raw, got, want)
	}
	return s
}
