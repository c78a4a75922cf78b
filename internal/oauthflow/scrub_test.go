package oauthflow

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/openprogram/mcpvisor/internal/redact"
)

// The client_secret_basic credential (the form-escaped pair, in base64)
// is scrubbed also when a server echoes the whole Authorization header
// encoded once more.
func TestClientSecretBasicHeaderScrubbedEncoded(t *testing.T) {
	const id, secret = "client id+1", "cs-BASIC-planted/4a7e"
	scrub := redact.New()
	if _, err := NewClientCredentialsHandler(ClientCredentials{ClientID: id, Method: MethodClientSecretBasic, ClientSecret: secret, Scrubber: scrub}); err != nil {
		t.Fatal(err)
	}
	header := "Basic " + base64.StdEncoding.EncodeToString([]byte(url.QueryEscape(id)+":"+url.QueryEscape(secret)))
	for name, echo := range map[string]string{
		"header":                header,
		"header in base64":      base64.StdEncoding.EncodeToString([]byte(header)),
		"header in base64url":   base64.RawURLEncoding.EncodeToString([]byte(header)),
		"header JSON in base64": base64.StdEncoding.EncodeToString([]byte(`{"authorization":"` + header + `"}`)),
	} {
		got := scrub.String("echo " + echo + " end")
		if strings.Contains(got, echo) || !strings.Contains(got, redact.Marker) {
			t.Errorf("%s: not scrubbed", name) // (its text would show the secret)
		}
	}
}

// A client-credentials token request that failed below the token endpoint
// (a refused address, a cancel) is scrubbed like every other error of
// this package: no secret in its text, and the sentinels a caller matches
// still match.
func TestClientCredentialsTransportErrorKeepsSentinels(t *testing.T) {
	f := &tokenFetcher{h: &ClientCredentialsHandler{scrub: redact.New("MARKER-assertion")}, tokenURL: "https://as.example.com/token?k=MARKER-query"}
	for _, cause := range []error{ErrPrivateOAuthHost, context.Canceled, context.DeadlineExceeded} {
		err := f.sanitize(fmt.Errorf("Post %q: sending MARKER-assertion: %w", f.tokenURL, cause))
		if !errors.Is(err, cause) {
			t.Errorf("sanitize(%v) = %v, which no longer matches it", cause, err)
		}
		if strings.Contains(err.Error(), "MARKER") {
			t.Errorf("a secret survived: %v", err)
		}
	}
}
