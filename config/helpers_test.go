package config

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"strings"
	"testing"
)

// Planted secrets: long, distinctive values that must never show up in an
// error, a view or a formatted value.
const (
	envSecret    = "ENV-SECRET-7d1c0f9e2b"
	headerSecret = "HDR-SECRET-4a8b3c2d1e"
	tokenSecret  = "TOK-SECRET-9f8e7d6c5b"
	clientSecret = "CLI-SECRET-1a2b3c4d5e"
	urlSecret    = "URL-SECRET-5e6f7a8b9c"
)

// keyPEM is a planted P-256 private key. Each line of its body is a planted
// secret too: a leak of one line is a leak.
var keyPEM = pemOf(mustEC(elliptic.P256()))

var plantedSecrets = append([]string{envSecret, headerSecret, tokenSecret, clientSecret, urlSecret, keyPEM}, keyBodyLines(keyPEM)...)

func mustEC(c elliptic.Curve) *ecdsa.PrivateKey {
	k, err := ecdsa.GenerateKey(c, rand.Reader)
	if err != nil {
		panic(err)
	}
	return k
}

// pemOf encodes key as a PKCS #8 "PRIVATE KEY" PEM block.
func pemOf(key any) string {
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		panic(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}))
}

// keyBodyLines returns the base64 lines of a PEM, armour and lines too
// short to be distinctive left out.
func keyBodyLines(p string) []string {
	var out []string
	for _, line := range strings.Split(p, "\n") {
		if len(line) > 16 && !strings.HasPrefix(line, "-----") {
			out = append(out, line)
		}
	}
	return out
}

// localServer returns a valid local server carrying planted secrets.
func localServer() Server {
	return Server{
		Name:    "fs",
		Type:    TypeLocal,
		Command: []string{"npx", "-y", "server-fs", "/tmp"},
		Env:     map[string]string{"TOKEN": envSecret, "OTHER": "other-value-0042"},
		Enabled: true,
	}
}

// remoteServer returns a valid http server with a bearer token.
func remoteServer() Server {
	return Server{
		Name:    "remote",
		Type:    TypeHTTP,
		URL:     "https://example.com/mcp",
		Headers: map[string]string{"X-Key": headerSecret},
		Auth:    &Auth{Kind: AuthBearer, Token: tokenSecret},
		Enabled: true,
	}
}

// oauthServer returns a valid http server using OAuth.
func oauthServer() Server {
	return Server{
		Name:    "oa",
		Type:    TypeHTTP,
		URL:     "https://example.com/mcp",
		Auth:    &Auth{Kind: AuthOAuth, ClientID: "cid", ClientSecret: clientSecret, Scopes: []string{"read", "write"}},
		Enabled: true,
	}
}

// ccServer returns a valid http server using the client credentials grant
// with the planted private key.
func ccServer() Server {
	return Server{
		Name:    "m2m",
		Type:    TypeHTTP,
		URL:     "https://example.com/mcp",
		Auth:    &Auth{Kind: AuthClientCredentials, ClientID: "svc", PrivateKey: keyPEM, Scopes: []string{"read"}},
		Enabled: true,
	}
}

// assertNoSecret fails if text contains any planted secret.
func assertNoSecret(t *testing.T, what, text string) {
	t.Helper()
	for _, s := range plantedSecrets {
		if strings.Contains(text, s) {
			t.Errorf("%s leaks secret %q: %s", what, s, text)
		}
	}
}

// filesEqual compares two Files completely, including the unknown fields
// kept for round trips (compared as compact JSON).
func filesEqual(a, b *File) bool {
	if len(a.Servers) != len(b.Servers) || !membersEqual(a.unknown, b.unknown) {
		return false
	}
	for i := range a.Servers {
		sa, sb := a.Servers[i], b.Servers[i]
		if !sa.Equal(sb) || !membersEqual(sa.unknown, sb.unknown) {
			return false
		}
		if (sa.Auth == nil) != (sb.Auth == nil) {
			return false
		}
		if sa.Auth != nil && !membersEqual(sa.Auth.unknown, sb.Auth.unknown) {
			return false
		}
	}
	return true
}

func membersEqual(a, b []member) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].key != b[i].key || !jsonEqual(a[i].value, b[i].value) {
			return false
		}
	}
	return true
}

func jsonEqual(a, b []byte) bool {
	var ca, cb bytes.Buffer
	if json.Compact(&ca, a) != nil || json.Compact(&cb, b) != nil {
		return false
	}
	return bytes.Equal(ca.Bytes(), cb.Bytes())
}

// fieldOf returns the Field of err if it is a *FieldError, or fails.
func fieldOf(t *testing.T, err error) *FieldError {
	t.Helper()
	fe, ok := err.(*FieldError)
	if !ok {
		t.Fatalf("error %v (%T) is not a *FieldError", err, err)
	}
	return fe
}
