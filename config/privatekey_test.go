package config

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// A private key is parsed once, when the configuration is decoded: every
// later Signer is that key, a copy whose PEM changed parses its own, and
// no response or log form shows the parsed key.
func TestPrivateKeyParsedOnce(t *testing.T) {
	body, err := json.Marshal(map[string]any{"name": "cc", "type": "http", "url": "https://mcp.example.com/mcp",
		"auth": map[string]any{"kind": "client_credentials", "client_id": "svc", "private_key": keyPEM}})
	if err != nil {
		t.Fatal(err)
	}
	s, err := DecodeServer(body)
	if err != nil {
		t.Fatal(err)
	}
	k := s.Auth.Signer()
	if k == nil || s.Auth.Signer() != k || s.Clone().Auth.Signer() != k {
		t.Fatalf("Signer() = %p, then %p, and %p for a clone: want one key parsed at decoding", k, s.Auth.Signer(), s.Clone().Auth.Signer())
	}
	other := *s.Auth
	other.PrivateKey = pemOf(mustEC(elliptic.P384()))
	if o, ok := other.Signer().(*ecdsa.PrivateKey); !ok || o.Curve != elliptic.P384() {
		t.Fatalf("a copy with another PEM signs with %T, want its own P-384 key", other.Signer())
	}
	if (Auth{}).Signer() != nil {
		t.Error("an Auth without a key has a signer")
	}

	d := k.(*ecdsa.PrivateKey).D.String() // the key's secret scalar
	stored, err := Marshal(&File{Servers: []Server{s}})
	if err != nil {
		t.Fatal(err)
	}
	view, _ := json.Marshal(s)
	for name, out := range map[string]string{"view": string(view), "String": s.String(), "%+v": fmt.Sprintf("%+v", s), "stored": string(stored)} {
		if strings.Contains(out, d) {
			t.Errorf("the %s form shows the parsed key", name)
		}
	}
	if strings.Contains(string(view), "PRIVATE KEY") {
		t.Errorf("the view shows the PEM: %s", view)
	}
}
