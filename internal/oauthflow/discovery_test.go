package oauthflow

import (
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

func TestCheckSecureURL(t *testing.T) {
	ok := []string{
		"https://as.example.com/token",
		"https://as.example.com:8443/oauth/token?x=1",
		"http://127.0.0.1:8080/token",
		"http://127.42.0.7/token",
		"http://[::1]:9000/token",
		"http://localhost/token",
		"http://LOCALHOST:1234/token",
		"http://[::ffff:127.0.0.1]/token",
	}
	for _, u := range ok {
		if err := checkSecureURL("token endpoint", u); err != nil {
			t.Errorf("checkSecureURL(%q) = %v, want nil", u, err)
		}
	}
	bad := []string{
		"http://as.example.com/oauth/token?client_secret=MARKER-q#frag",
		"http://user:MARKER-pw@as.example.com/oauth/token",
		"http://10.0.0.1/oauth/token",
		"http://localhost.evil.com/oauth/token",
		"http://127.0.0.1.nip.io/oauth/token",
		"ftp://as.example.com/oauth/token",
		"//as.example.com/oauth/token",
		"https:///oauth/token",
	}
	for _, u := range bad {
		err := checkSecureURL("token endpoint", u)
		if err == nil {
			t.Errorf("checkSecureURL(%q) = nil, want an error", u)
			continue
		}
		msg := err.Error()
		if !strings.Contains(msg, "token endpoint") || !strings.Contains(msg, "/oauth/token") {
			t.Errorf("checkSecureURL(%q) = %q: should name the URL and its role", u, msg)
		}
		if strings.Contains(msg, "MARKER") || strings.Contains(msg, "frag") {
			t.Errorf("checkSecureURL(%q) = %q: leaks query, fragment or user info", u, msg)
		}
	}
}

func TestProtectedResourceMetadataURLs(t *testing.T) {
	got := protectedResourceMetadataURLs("https://rs.example.com/meta", "https://rs.example.com/v1/mcp")
	want := []prmCandidate{
		{"https://rs.example.com/meta", "https://rs.example.com/v1/mcp"},
		{"https://rs.example.com/.well-known/oauth-protected-resource/v1/mcp", "https://rs.example.com/v1/mcp"},
		{"https://rs.example.com/.well-known/oauth-protected-resource", "https://rs.example.com"},
	}
	if !slices.Equal(got, want) {
		t.Errorf("got %v\nwant %v", got, want)
	}
	if got := protectedResourceMetadataURLs("", "https://rs.example.com/mcp"); len(got) != 2 {
		t.Errorf("without hint: got %v, want the two well-known URLs", got)
	}
}

func TestChallengeHelpers(t *testing.T) {
	cs, err := oauthex.ParseWWWAuthenticate([]string{
		`Basic realm="x", Bearer error="insufficient_scope", scope="a b", resource_metadata="https://rs.example.com/m"`,
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := resourceMetadataURLFromChallenges(cs); got != "https://rs.example.com/m" {
		t.Errorf("resource_metadata = %q", got)
	}
	if got := scopesFromChallenges(cs); !slices.Equal(got, []string{"a", "b"}) {
		t.Errorf("scopes = %q", got)
	}
	if got := errorFromChallenges(cs); got != "insufficient_scope" {
		t.Errorf("error = %q", got)
	}
	if got := unionScopes([]string{"a", "b"}, []string{"b", "c"}); !slices.Equal(got, []string{"a", "b", "c"}) {
		t.Errorf("unionScopes = %q", got)
	}
}
