package config

import (
	"crypto/elliptic"
	"encoding/json"
	"strings"
	"testing"
)

// jsonQ returns s as a JSON string, for PEMs inside a patch.
func jsonQ(s string) string {
	b, err := json.Marshal(s)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// secretCC is ccServer with a client secret instead of the key.
func secretCC() Server {
	s := ccServer()
	s.Auth.PrivateKey, s.Auth.ClientSecret = "", clientSecret
	return s
}

func TestApplyPatchAuthKinds(t *testing.T) {
	p384 := pemOf(mustEC(elliptic.P384()))
	with := func(s Server, edit func(*Auth)) Server {
		edit(s.Auth)
		return s
	}
	read := []string{"read"}
	tests := []struct {
		name  string
		base  Server
		patch string
		want  Auth
	}{
		{"key absent keeps it", ccServer(), `{"auth":{"scopes":["x"]}}`,
			Auth{Kind: AuthClientCredentials, ClientID: "svc", PrivateKey: keyPEM, Scopes: []string{"x"}}},
		{"key replaces", ccServer(), `{"auth":{"private_key":` + jsonQ(p384) + `}}`,
			Auth{Kind: AuthClientCredentials, ClientID: "svc", PrivateKey: p384, Scopes: read}},
		{"key deleted for a secret", ccServer(), `{"auth":{"private_key":"","client_secret":"s2"}}`,
			Auth{Kind: AuthClientCredentials, ClientID: "svc", ClientSecret: "s2", Scopes: read}},
		{"secret deleted for a key", secretCC(), `{"auth":{"client_secret":"","private_key":` + jsonQ(keyPEM) + `}}`,
			Auth{Kind: AuthClientCredentials, ClientID: "svc", PrivateKey: keyPEM, Scopes: read}},
		{"algorithm reset to the default", with(ccServer(), func(a *Auth) { a.SigningAlg = AlgES256 }), `{"auth":{"signing_algorithm":""}}`,
			Auth{Kind: AuthClientCredentials, ClientID: "svc", PrivateKey: keyPEM, Scopes: read}},
		{"method set", secretCC(), `{"auth":{"token_endpoint_auth_method":"client_secret_post"}}`,
			Auth{Kind: AuthClientCredentials, ClientID: "svc", ClientSecret: clientSecret, TokenEndpointAuthMethod: AuthMethodClientSecretPost, Scopes: read}},
		{"cc to oauth keeps the shared client fields", with(secretCC(), func(a *Auth) { a.TokenEndpointAuthMethod = AuthMethodClientSecretPost }),
			`{"auth":{"kind":"oauth"}}`, Auth{Kind: AuthOAuth, ClientID: "svc", ClientSecret: clientSecret, Scopes: read}},
		{"cc to oauth drops key and algorithm", with(ccServer(), func(a *Auth) { a.SigningAlg = AlgES256 }),
			`{"auth":{"kind":"oauth","client_metadata_url":"https://e.com/c"}}`,
			Auth{Kind: AuthOAuth, ClientID: "svc", ClientMetadataURL: "https://e.com/c", Scopes: read}},
		{"oauth to cc drops the metadata URL", with(oauthServer(), func(a *Auth) { a.ClientMetadataURL = "https://e.com/c" }),
			`{"auth":{"kind":"client_credentials"}}`,
			Auth{Kind: AuthClientCredentials, ClientID: "cid", ClientSecret: clientSecret, Scopes: []string{"read", "write"}}},
		{"cc to bearer drops everything", ccServer(), `{"auth":{"token":"t","kind":"bearer"}}`, Auth{Kind: AuthBearer, Token: "t"}},
		{"cc to none drops everything", ccServer(), `{"auth":{"kind":"none"}}`, Auth{Kind: AuthNone}},
		{"bearer to cc drops the token", remoteServer(), `{"auth":{"kind":"client_credentials","client_id":"c","private_key":` + jsonQ(keyPEM) + `}}`,
			Auth{Kind: AuthClientCredentials, ClientID: "c", PrivateKey: keyPEM}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := tt.base.Clone()
			got, err := ApplyPatch(tt.base, []byte(tt.patch))
			if err != nil {
				t.Fatalf("ApplyPatch: %v", err)
			}
			if !got.Auth.equal(tt.want) {
				t.Errorf("auth = %+v\nwant   %+v", got.Auth.View(), tt.want.View())
			}
			if !tt.base.Equal(before) {
				t.Error("base was modified")
			}
		})
	}
}

func TestApplyPatchAuthErrors(t *testing.T) {
	dyn := oauthServer()
	dyn.Auth = &Auth{Kind: AuthOAuth}
	tests := []struct {
		name  string
		base  Server
		patch string
		field string
		msg   string
	}{
		{"key deleted with no other credential", ccServer(), `{"auth":{"private_key":""}}`, "auth.client_secret", "needs a credential"},
		{"key null", ccServer(), `{"auth":{"private_key":null}}`, "auth.private_key", "null"},
		{"key not a string", ccServer(), `{"auth":{"private_key":["-----BEGIN"]}}`, "auth.private_key", "must be a string"},
		{"bad key", secretCC(), `{"auth":{"client_secret":"","private_key":` + jsonQ(badKeys()["SEC 1"].pem) + `}}`, "auth.private_key", "PKCS #8"},
		{"algorithm that does not fit", ccServer(), `{"auth":{"signing_algorithm":"PS256"}}`, "auth.signing_algorithm", "does not fit"},
		{"type to sse", ccServer(), `{"type":"sse"}`, "auth.kind", "Streamable HTTP"},
		{"dynamic oauth to cc needs a client id", dyn, `{"auth":{"kind":"client_credentials"}}`, "auth.client_id", "required"},
		{"key sent with kind oauth", ccServer(), `{"auth":{"kind":"oauth","private_key":` + jsonQ(keyPEM) + `}}`, "auth.private_key", "not used"},
		{"metadata URL over http", oauthServer(), `{"auth":{"client_metadata_url":"http://e.com/c"}}`, "auth.client_metadata_url", "https://"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ApplyPatch(tt.base, []byte(tt.patch))
			if err == nil {
				t.Fatal("ApplyPatch succeeded, want error")
			}
			fe := fieldOf(t, err)
			if fe.Field != tt.field || !strings.Contains(fe.Message, tt.msg) {
				t.Errorf("got %v\nwant field %q, message containing %q", err, tt.field, tt.msg)
			}
			assertNoSecret(t, "ApplyPatch error", err.Error())
		})
	}
}

func TestDecodeServerClientCredentials(t *testing.T) {
	s, err := DecodeServer([]byte(`{"name":"m2m","type":"http","url":"https://example.com/mcp",
		"auth":{"kind":"client_credentials","client_id":"svc","private_key":` + jsonQ(keyPEM) + `,"scopes":["read"]}}`))
	if err != nil {
		t.Fatal(err)
	}
	if !s.Equal(ccServer()) {
		t.Errorf("got %v, want %v", s, ccServer())
	}
}

func TestMarshalAuthFieldOrder(t *testing.T) {
	f, err := Parse([]byte(`{"servers":{"a":{"auth":{"x-future":{"b":1},"scopes":["x"],"client_metadata_url":"u",
		"signing_algorithm":"a","token_endpoint_auth_method":"m","private_key":"k","client_secret":"s","client_id":"c",
		"token":"t","kind":"client_credentials"}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	got, err := marshalAuth(*f.Servers[0].Auth)
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"kind":"client_credentials","token":"t","client_id":"c","client_secret":"s","private_key":"k",` +
		`"token_endpoint_auth_method":"m","signing_algorithm":"a","client_metadata_url":"u","scopes":["x"],"x-future":{"b":1}}`
	if string(got) != want {
		t.Errorf("storage form =\n%s\nwant\n%s", got, want)
	}
}

func TestMarshalRoundTripClientCredentials(t *testing.T) {
	f, err := Parse([]byte(`{"servers":{"m2m":{"type":"http","url":"https://example.com/mcp","auth":{"kind":"client_credentials",
		"client_id":"svc","private_key":` + jsonQ(keyPEM) + `,"signing_algorithm":"ES256","later":[true]}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	oa := oauthServer()
	oa.Auth.ClientMetadataURL = "https://example.com/oauth/client.json"
	f.Put(oa)
	sec := secretCC()
	sec.Name = "m2m-secret"
	f.Put(sec)
	for _, s := range f.Servers {
		if err := s.Validate(); err != nil {
			t.Errorf("%s: %v", s.Name, err)
		}
	}
	out, err := Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{jsonQ(keyPEM), clientSecret, `"later": [`, `"client_metadata_url": "https://example.com/oauth/client.json"`} {
		if !strings.Contains(string(out), want) {
			t.Errorf("storage form lacks %s:\n%s", want, out)
		}
	}
	again, err := Parse(out)
	if err != nil {
		t.Fatal(err)
	}
	if !filesEqual(f, again) {
		t.Error("Parse(Marshal(f)) differs from f")
	}
	if out2, err := Marshal(again); err != nil || string(out2) != string(out) {
		t.Errorf("Marshal is not stable: %v", err)
	}
}
