package config

import (
	"crypto/ecdh"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"strings"
	"sync"
	"testing"
)

// rsaPEM returns a PKCS #8 PEM of a new RSA key; keys of the same size are
// generated once, since RSA generation is slow.
var rsaPEM = func() func(bits int) string {
	var mu sync.Mutex
	keys := map[int]string{}
	return func(bits int) string {
		mu.Lock()
		defer mu.Unlock()
		if keys[bits] == "" {
			k, err := rsa.GenerateKey(rand.Reader, bits)
			if err != nil {
				panic(err)
			}
			keys[bits] = pemOf(k)
		}
		return keys[bits]
	}
}()

// reparse sends s through the file (Marshal, then Parse), as a server read
// back from disk.
func reparse(t *testing.T, s Server) Server {
	t.Helper()
	f := &File{}
	f.Put(s)
	out, err := Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	again, err := Parse(out)
	if err != nil {
		t.Fatalf("Parse: %v\n%s", err, out)
	}
	return again.Servers[0]
}

func withAuth(typ string, a Auth) Server {
	s := ccServer()
	s.Type, s.Auth = typ, &a
	if typ == TypeLocal {
		s.Command = []string{"server"}
	}
	return s
}

func TestAuthValid(t *testing.T) {
	p384 := pemOf(mustEC(elliptic.P384()))
	tests := []struct {
		name        string
		auth        Auth
		method, alg string // effective values
	}{
		{"cc secret, default method", Auth{Kind: AuthClientCredentials, ClientID: "svc", ClientSecret: clientSecret},
			AuthMethodClientSecretBasic, ""},
		{"cc secret, post", Auth{Kind: AuthClientCredentials, ClientID: "svc", ClientSecret: clientSecret,
			TokenEndpointAuthMethod: AuthMethodClientSecretPost, Scopes: []string{"a:b"}}, AuthMethodClientSecretPost, ""},
		{"cc P-256 key, defaults", Auth{Kind: AuthClientCredentials, ClientID: "svc", PrivateKey: keyPEM}, AuthMethodPrivateKeyJWT, AlgES256},
		{"cc P-256 key, explicit", Auth{Kind: AuthClientCredentials, ClientID: "svc", PrivateKey: keyPEM,
			TokenEndpointAuthMethod: AuthMethodPrivateKeyJWT, SigningAlg: AlgES256}, AuthMethodPrivateKeyJWT, AlgES256},
		{"cc P-384 key", Auth{Kind: AuthClientCredentials, ClientID: "svc", PrivateKey: p384}, AuthMethodPrivateKeyJWT, AlgES384},
		{"cc RSA key", Auth{Kind: AuthClientCredentials, ClientID: "svc", PrivateKey: rsaPEM(2048)}, AuthMethodPrivateKeyJWT, AlgRS256},
		{"cc RSA key, PS256", Auth{Kind: AuthClientCredentials, ClientID: "svc", PrivateKey: rsaPEM(2048), SigningAlg: AlgPS256},
			AuthMethodPrivateKeyJWT, AlgPS256},
		{"cc CRLF key", Auth{Kind: AuthClientCredentials, ClientID: "svc", PrivateKey: strings.ReplaceAll(keyPEM, "\n", "\r\n")},
			AuthMethodPrivateKeyJWT, AlgES256},
		{"oauth metadata URL", Auth{Kind: AuthOAuth, ClientMetadataURL: "https://example.com/oauth/client.json?v=1"}, "", ""},
		{"oauth everything", Auth{Kind: AuthOAuth, ClientID: "cid", ClientSecret: clientSecret,
			ClientMetadataURL: "https://example.com/c", Scopes: []string{"x"}}, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := reparse(t, withAuth(TypeHTTP, tt.auth))
			if !s.Equal(withAuth(TypeHTTP, tt.auth)) {
				t.Errorf("the file changed the auth: %+v", s.Auth)
			}
			if err := s.Validate(); err != nil {
				t.Fatalf("Validate = %v", err)
			}
			if got := s.Auth.TokenAuthMethod(); got != tt.method {
				t.Errorf("TokenAuthMethod = %q, want %q", got, tt.method)
			}
			if got := s.Auth.SigningAlgorithm(); got != tt.alg {
				t.Errorf("SigningAlgorithm = %q, want %q", got, tt.alg)
			}
		})
	}
}

// badKeys are invalid private_key values, each with a distinctive body that
// an error must not quote.
func badKeys() map[string]struct{ pem, msg string } {
	block := func(typ string, der []byte, h map[string]string) string {
		return string(pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der, Headers: h}))
	}
	ec := mustEC(elliptic.P256())
	sec1, _ := x509.MarshalECPrivateKey(ec)
	der, _ := x509.MarshalPKCS8PrivateKey(ec)
	_, ed, _ := ed25519.GenerateKey(rand.Reader)
	x, _ := ecdh.X25519().GenerateKey(rand.Reader)
	short, _ := rsa.GenerateKey(rand.Reader, 1024)
	junk := []byte("PLANTED-MARKER-31337 not DER at all, padded to be long enough")
	return map[string]struct{ pem, msg string }{
		"not PEM":          {"PLANTED-MARKER-31337-not-a-pem-at-all", "must be a PEM-encoded PKCS #8"},
		"text before":      {"PLANTED-MARKER-31337\n" + keyPEM, "starting with"},
		"truncated":        {keyPEM[:len(keyPEM)/2], "not a complete PEM block"},
		"two blocks":       {keyPEM + keyPEM, "one PEM block"},
		"SEC 1":            {block("EC PRIVATE KEY", sec1, nil), "convert it to PKCS #8"},
		"PKCS 1":           {block("RSA PRIVATE KEY", x509.MarshalPKCS1PrivateKey(short), nil), "convert it to PKCS #8"},
		"encrypted":        {block("ENCRYPTED PRIVATE KEY", der, nil), "must not be encrypted"},
		"legacy encrypted": {block("PRIVATE KEY", der, map[string]string{"Proc-Type": "4,ENCRYPTED"}), "must not be encrypted"},
		"certificate":      {block("CERTIFICATE", der, nil), "another type"},
		"junk DER":         {block("PRIVATE KEY", junk, nil), "not a valid PKCS #8 private key"},
		"P-521":            {pemOf(mustEC(elliptic.P521())), "curve P-521 is not supported"},
		"RSA 1024":         {pemOf(short), "1024 bits is too short"},
		"Ed25519":          {pemOf(ed), "Ed25519 keys are not supported"},
		"X25519":           {pemOf(x), "cannot sign"},
	}
}

func TestAuthErrors(t *testing.T) {
	cc := func(a Auth) Auth {
		a.Kind, a.ClientID = AuthClientCredentials, "svc"
		return a
	}
	p384 := pemOf(mustEC(elliptic.P384()))
	type row struct {
		name  string
		typ   string
		auth  Auth
		field string
		msg   string
	}
	tests := []row{
		{"cc without client id", TypeHTTP, Auth{Kind: AuthClientCredentials, ClientSecret: clientSecret}, "auth.client_id", `required for kind "client_credentials"`},
		{"cc without credential", TypeHTTP, cc(Auth{}), "auth.client_secret", "needs a credential"},
		{"cc with both credentials", TypeHTTP, cc(Auth{ClientSecret: clientSecret, PrivateKey: keyPEM}), "auth.private_key", "not both"},
		{"private_key_jwt with a secret", TypeHTTP, cc(Auth{ClientSecret: clientSecret, TokenEndpointAuthMethod: AuthMethodPrivateKeyJWT}),
			"auth.token_endpoint_auth_method", `"private_key_jwt" needs auth.private_key`},
		{"basic with a key", TypeHTTP, cc(Auth{PrivateKey: keyPEM, TokenEndpointAuthMethod: AuthMethodClientSecretBasic}),
			"auth.token_endpoint_auth_method", `"client_secret_basic" needs auth.client_secret`},
		{"post with a key", TypeHTTP, cc(Auth{PrivateKey: keyPEM, TokenEndpointAuthMethod: AuthMethodClientSecretPost}),
			"auth.token_endpoint_auth_method", `"client_secret_post" needs auth.client_secret`},
		{"unknown method", TypeHTTP, cc(Auth{ClientSecret: clientSecret, TokenEndpointAuthMethod: "tls_client_auth"}),
			"auth.token_endpoint_auth_method", `unknown method "tls_client_auth"`},
		{"algorithm without key", TypeHTTP, cc(Auth{ClientSecret: clientSecret, SigningAlg: AlgES256}), "auth.signing_algorithm", "requires auth.private_key"},
		{"unknown algorithm", TypeHTTP, cc(Auth{PrivateKey: keyPEM, SigningAlg: "HS256"}), "auth.signing_algorithm", `unknown algorithm "HS256"`},
		{"RS256 on P-256", TypeHTTP, cc(Auth{PrivateKey: keyPEM, SigningAlg: AlgRS256}), "auth.signing_algorithm", `"RS256" does not fit an EC P-256 key: use "ES256"`},
		{"ES256 on P-384", TypeHTTP, cc(Auth{PrivateKey: p384, SigningAlg: AlgES256}), "auth.signing_algorithm", `use "ES384"`},
		{"ES256 on RSA", TypeHTTP, cc(Auth{PrivateKey: rsaPEM(2048), SigningAlg: AlgES256}), "auth.signing_algorithm", `use "RS256" or "PS256"`},
		{"bad scope", TypeHTTP, cc(Auth{ClientSecret: clientSecret, Scopes: []string{"a b"}}), "auth.scopes[0]", "scope"},
		{"cc on sse", TypeSSE, cc(Auth{ClientSecret: clientSecret}), "auth.kind", `Streamable HTTP: OAuth works only with type "http", not "sse"`},
		{"cc on local", TypeLocal, cc(Auth{ClientSecret: clientSecret}), "auth.kind", `not "local"`},
		{"oauth on sse", TypeSSE, Auth{Kind: AuthOAuth}, "auth.kind", `kind "oauth" needs Streamable HTTP`},
		{"cc with token", TypeHTTP, cc(Auth{ClientSecret: clientSecret, Token: tokenSecret}), "auth.token", `not used with kind "client_credentials"`},
		{"cc with metadata URL", TypeHTTP, cc(Auth{ClientSecret: clientSecret, ClientMetadataURL: "https://e.com/c"}), "auth.client_metadata_url", "not used"},
		{"oauth with key", TypeHTTP, Auth{Kind: AuthOAuth, PrivateKey: keyPEM}, "auth.private_key", `not used with kind "oauth"`},
		{"oauth with method", TypeHTTP, Auth{Kind: AuthOAuth, TokenEndpointAuthMethod: AuthMethodClientSecretPost}, "auth.token_endpoint_auth_method", "not used"},
		{"oauth with algorithm", TypeHTTP, Auth{Kind: AuthOAuth, SigningAlg: AlgES256}, "auth.signing_algorithm", "not used"},
		{"bearer with key", TypeHTTP, Auth{Kind: AuthBearer, Token: tokenSecret, PrivateKey: keyPEM}, "auth.private_key", `not used with kind "bearer"`},
		{"none with metadata URL", TypeSSE, Auth{Kind: AuthNone, ClientMetadataURL: "https://e.com/c"}, "auth.client_metadata_url", "not used"},
	}
	for _, u := range []struct{ name, url, msg string }{
		{"http", "http://example.com/client.json", "https://"},
		{"root path", "https://example.com/", "must have a path"},
		{"no path", "https://example.com", "must have a path"},
		{"relative", "/client.json", "https://"},
		{"fragment", "https://example.com/c#x", "fragment"},
		{"empty fragment", "https://example.com/c#", "fragment"},
		{"userinfo", "https://u:" + urlSecret + "@example.com/c", "user name or password"},
		{"dot segment", "https://example.com/a/../c", `".."`},
	} {
		tests = append(tests, row{"metadata URL " + u.name, TypeHTTP, Auth{Kind: AuthOAuth, ClientMetadataURL: u.url}, "auth.client_metadata_url", u.msg})
	}
	for name, k := range badKeys() {
		tests = append(tests, row{"key " + name, TypeHTTP, cc(Auth{PrivateKey: k.pem}), "auth.private_key", k.msg})
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := reparse(t, withAuth(tt.typ, tt.auth))
			err := s.Validate()
			if err == nil {
				t.Fatal("Validate = nil, want error")
			}
			fe := fieldOf(t, err)
			if fe.Field != tt.field || fe.Server != "m2m" || !strings.Contains(fe.Message, tt.msg) {
				t.Errorf("got %v\nwant field %q, message containing %q", err, tt.field, tt.msg)
			}
			assertNoSecret(t, "Validate error", err.Error())
			for _, line := range append(keyBodyLines(tt.auth.PrivateKey), "PLANTED-MARKER") {
				if strings.Contains(err.Error(), line) {
					t.Errorf("error quotes the key: %v", err)
				}
			}
		})
	}
}

func TestEffectiveMethodAndAlgorithm(t *testing.T) {
	tests := []struct {
		auth        Auth
		method, alg string
	}{
		{Auth{Kind: AuthOAuth, ClientSecret: "s"}, "", ""},
		{Auth{Kind: AuthBearer, PrivateKey: keyPEM}, "", AlgES256}, // invalid, but the key is there
		{Auth{Kind: AuthClientCredentials}, AuthMethodClientSecretBasic, ""},
		{Auth{Kind: AuthClientCredentials, TokenEndpointAuthMethod: "x"}, "x", ""},
		{Auth{Kind: AuthClientCredentials, PrivateKey: "not a key"}, AuthMethodPrivateKeyJWT, ""},
		{Auth{Kind: AuthClientCredentials, PrivateKey: "not a key", SigningAlg: AlgPS256}, AuthMethodPrivateKeyJWT, AlgPS256},
		{Auth{Kind: AuthClientCredentials, SigningAlg: AlgPS256}, AuthMethodClientSecretBasic, ""},
	}
	for i, tt := range tests {
		if m, a := tt.auth.TokenAuthMethod(), tt.auth.SigningAlgorithm(); m != tt.method || a != tt.alg {
			t.Errorf("%d: got %q %q, want %q %q", i, m, a, tt.method, tt.alg)
		}
	}
}
