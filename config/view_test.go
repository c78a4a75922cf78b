package config

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"
)

func TestMask(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", ""},
		{"a", "****"},
		{"12345678901", "****"},      // 11 characters: nothing revealed
		{"123456789012", "****9012"}, // 12: the last 4
		{tokenSecret, "****6c5b"},
		{"ééééééééééé€", "****ééé€"}, // characters, not bytes
		{"ééééé", "****"},            // 10 bytes but 5 characters
	}
	for _, tt := range tests {
		if got := Mask(tt.in); got != tt.want {
			t.Errorf("Mask(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestView(t *testing.T) {
	s := remoteServer()
	s.URL = "https://user:" + urlSecret + "@example.com/mcp"
	s.Headers["X-Empty"] = ""
	v := s.View()
	if v.Name != "remote" || v.Type != TypeHTTP || !v.Enabled || v.TimeoutSeconds != DefaultTimeoutSeconds {
		t.Errorf("view = %+v", v)
	}
	if got := v.Headers["X-Key"]; got != (SecretView{HasValue: true, Masked: Mask(headerSecret)}) {
		t.Errorf("X-Key = %+v", got)
	}
	if got := v.Headers["X-Empty"]; got != (SecretView{}) {
		t.Errorf("X-Empty = %+v, want no value", got)
	}
	if v.Auth.Kind != AuthBearer || !v.Auth.HasToken || v.Auth.TokenMasked != Mask(tokenSecret) || v.Auth.HasClientSecret {
		t.Errorf("auth = %+v", v.Auth)
	}
	if v.URL != "https://[redacted]@example.com/mcp" {
		t.Errorf("url = %q, want the userinfo redacted (a username may be a token)", v.URL)
	}
	if v.Env == nil {
		t.Error("env must be an empty map, not nil")
	}

	o := oauthServer().View()
	if !o.Auth.HasClientSecret || o.Auth.ClientSecretMasked != Mask(clientSecret) || o.Auth.ClientID != "cid" || len(o.Auth.Scopes) != 2 {
		t.Errorf("oauth view = %+v", o.Auth)
	}
	l := localServer()
	l.TimeoutSeconds = 90
	if lv := l.View(); lv.Auth.Kind != AuthNone || lv.TimeoutSeconds != 90 || !lv.Env["TOKEN"].HasValue {
		t.Errorf("local view = %+v", lv)
	}
}

func TestViewJSON(t *testing.T) {
	s := Server{Name: "fs", Type: TypeLocal, Command: []string{"npx", "x"},
		Env: map[string]string{"TOKEN": envSecret, "SHORT": "abc"}, Enabled: true}
	b, err := json.Marshal(s.View())
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"name":"fs","type":"local","command":["npx","x"],` +
		`"env":{"SHORT":{"has_value":true,"masked":"****"},"TOKEN":{"has_value":true,"masked":"****9e2b"}},` +
		`"headers":{},"auth":{"kind":"none","has_token":false,"has_client_secret":false,"has_private_key":false},"enabled":true,"timeout_seconds":30,"max_concurrent_calls":0,` +
		`"connect_timeout_seconds":30,"max_call_seconds":300,"max_output_bytes":262144,"max_media_bytes":5242880,"tools":{"allow":[],"deny":[]}}`
	if string(b) != want {
		t.Errorf("view JSON =\n%s\nwant\n%s", b, want)
	}
}

// TestNoSecretInAnyResponseForm plants secrets everywhere and checks every
// way a Server or Auth can be printed, encoded or logged.
func TestNoSecretInAnyResponseForm(t *testing.T) {
	s := remoteServer()
	s.URL = "https://u:" + urlSecret + "@example.com/mcp"
	s.Env = map[string]string{"E": envSecret}
	o := oauthServer()
	cc := ccServer()
	f := &File{}
	f.Put(s)
	f.Put(o)
	f.Put(cc)

	var outputs []string
	for _, v := range []any{s, &s, o, *o.Auth, o.Auth, cc, *cc.Auth, f, *f} {
		for _, verb := range []string{"%v", "%+v", "%#v", "%s"} {
			outputs = append(outputs, fmt.Sprintf(verb, v))
		}
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		outputs = append(outputs, string(b))
	}
	for _, v := range []any{s.View(), o.View(), cc.View()} {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		outputs = append(outputs, string(b), fmt.Sprintf("%+v", v))
	}
	var logs bytes.Buffer
	slog.New(slog.NewJSONHandler(&logs, nil)).Info("server", "s", s, "o", o, "auth", o.Auth, "cc", cc)
	slog.New(slog.NewTextHandler(&logs, nil)).Info("server", "s", s, "o", o, "auth", *o.Auth)
	outputs = append(outputs, logs.String())

	for _, out := range outputs {
		assertNoSecret(t, "response form", out)
	}
	if !strings.Contains(logs.String(), "has_value") || !strings.Contains(outputs[0], `"name":"remote"`) {
		t.Errorf("response form missing expected content: %s / %s", logs.String(), outputs[0])
	}
}

func TestSecrets(t *testing.T) {
	s := remoteServer()
	s.URL = "https://u:" + urlSecret + "@example.com/"
	s.Env = map[string]string{"B": envSecret, "A": envSecret, "C": ""}
	s.Auth.ClientSecret = clientSecret // invalid for bearer, but still a secret
	s.Auth.ClientID = "id:1"
	basic := "id%3A1:" + clientSecret // form-escaped, as HTTP Basic client auth sends it
	want := []string{envSecret, headerSecret, tokenSecret, clientSecret, basic,
		// The userinfo's user counts too (https://TOKEN@host/ is common);
		// the scrubber ignores one as short as "u" (redact.MinLen).
		base64.StdEncoding.EncodeToString([]byte(basic)), "u", urlSecret, "u:" + urlSecret,
		base64.StdEncoding.EncodeToString([]byte("u:" + urlSecret))}
	got := s.Secrets()
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("Secrets = %q, want %q", got, want)
	}
	if got := (Server{Name: "x", Type: TypeLocal}).Secrets(); len(got) != 0 {
		t.Errorf("Secrets of a server without secrets = %q", got)
	}
}

func TestViewClientCredentials(t *testing.T) {
	s := ccServer()
	s.Auth.SigningAlg = AlgES256
	v := s.View().Auth
	want := AuthView{Kind: AuthClientCredentials, ClientID: "svc", HasPrivateKey: true, PrivateKeyMasked: "****",
		SigningAlgorithm: AlgES256, Scopes: []string{"read"}}
	if fmt.Sprint(v) != fmt.Sprint(want) {
		t.Errorf("view = %+v\nwant   %+v", v, want)
	}
	b, err := json.Marshal(s.View())
	if err != nil {
		t.Fatal(err)
	}
	const wantAuth = `"auth":{"kind":"client_credentials","has_token":false,"client_id":"svc","has_client_secret":false,` +
		`"has_private_key":true,"private_key_masked":"****","signing_algorithm":"ES256","scopes":["read"]}`
	if !strings.Contains(string(b), wantAuth) {
		t.Errorf("view JSON =\n%s\nwant it to contain\n%s", b, wantAuth)
	}
	assertNoSecret(t, "view JSON", string(b))

	// Defaults are not shown: the view says what is configured.
	sec := ccServer()
	sec.Auth.PrivateKey, sec.Auth.ClientSecret = "", clientSecret
	if v := sec.View().Auth; v.TokenEndpointAuthMethod != "" || v.HasPrivateKey || v.PrivateKeyMasked != "" || v.ClientSecretMasked != Mask(clientSecret) {
		t.Errorf("secret view = %+v", v)
	}
	o := oauthServer()
	o.Auth.ClientMetadataURL = "https://example.com/c.json"
	if v := o.View().Auth; v.ClientMetadataURL != "https://example.com/c.json" {
		t.Errorf("oauth view = %+v", v)
	}
}

func TestSecretsPrivateKey(t *testing.T) {
	s := ccServer()
	got := s.Secrets()
	want := append([]string{keyPEM}, keyBodyLines(keyPEM)...)
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("Secrets = %q\nwant %q", got, want)
	}
	// What the stderr redactor does: replace secrets, longest first, in
	// each line. A key printed line by line or as an escaped JSON string
	// must come out without any line of its body.
	slices.SortFunc(got, func(a, b string) int { return len(b) - len(a) })
	var pairs []string
	for _, v := range got {
		pairs = append(pairs, v, "[redacted]")
	}
	r := strings.NewReplacer(pairs...)
	printed := keyPEM + jsonQ(keyPEM) + "\n" + strings.ReplaceAll(keyPEM, "\n", "\r\n")
	var out strings.Builder
	for line := range strings.Lines(printed) {
		out.WriteString(r.Replace(line))
	}
	assertNoSecret(t, "redacted output", out.String())
	if !strings.Contains(out.String(), "-----BEGIN PRIVATE KEY-----") {
		t.Errorf("the armour is not a secret, yet was redacted:\n%s", out.String())
	}
}
