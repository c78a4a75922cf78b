package config

import (
	"bytes"
	"strings"
	"testing"
)

func FuzzParse(f *testing.F) {
	for _, seed := range []string{
		sampleFile,
		"",
		"   ",
		"{}",
		`{"servers":null}`,
		`{"servers":{"a":{}}}`,
		`{"servers":{"a":{"type":"local","command":["x"],"timeout_seconds":0}}}`,
		`{"servers":{"a":{"auth":{"kind":"oauth","scopes":[],"x":null}},"b":{"env":{"":"\u0000"}}}}`,
		`{"servers":{"a":{"url":"\ud800","headers":{"\xff":"<&>"}}}}`,
		`{"servers":{"a":{},"a":{}}}`,
		`{"servers":{"a":{"type":"local","command":["${BIN}","pa$$w0rd"],"cwd":"${HOME}/x","env":{"T":"$${x}${Y:-d}"}}}}`,
		`{"servers":{"a":{"type":"http","url":"https://${H}/","headers":{"A":"Bearer ${T}","B":"${"}}}}`,
		`{"servers":[]}`,
		`{"x":[{"y":1e400}]}`,
		"\xef\xbb\xbf{}",
		`{"servers":{"a":{"enabled":null,"name":1}}} `,
		`{"servers":{"a":{"type":"http","url":"https://h/","auth":{"kind":"client_credentials","client_id":"c","client_secret":"s","token_endpoint_auth_method":"client_secret_post"}}}}`,
		`{"servers":{"a":{"type":"http","url":"https://h/","auth":{"kind":"client_credentials","client_id":"c","private_key":` + jsonQ(keyPEM) + `,"signing_algorithm":"ES256"}}}}`,
		`{"servers":{"a":{"type":"sse","url":"https://h/","auth":{"kind":"oauth","client_metadata_url":"https://h/c.json","private_key":"-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----"}}}}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := Parse(data)
		if err != nil {
			if file != nil {
				t.Fatal("Parse returned a File and an error")
			}
			return
		}
		out, err := Marshal(file)
		if err != nil {
			t.Fatalf("Marshal of a parsed File: %v", err)
		}
		again, err := Parse(out)
		if err != nil {
			t.Fatalf("Parse(Marshal(f)): %v\n%s", err, out)
		}
		if !filesEqual(file, again) {
			t.Fatalf("round trip changed the File:\n%q\n%s", data, out)
		}
		// Marshal is deterministic, so a second round trip is a fixed point.
		out2, err := Marshal(again)
		if err != nil || !bytes.Equal(out, out2) {
			t.Fatalf("Marshal not stable: %v\n%s\n%s", err, out, out2)
		}
		// Validate must not echo secrets: plant a marker in each one (which
		// keeps its validity) and look for it in the error.
		const marker = "PLANTED-MARKER-31337"
		for _, s := range file.Servers {
			p := s.Clone()
			plant := func(m map[string]string) {
				for k, v := range m {
					m[k] = marker + v
				}
			}
			plant(p.Env)
			plant(p.Headers)
			if p.Auth != nil && p.Auth.Token != "" {
				p.Auth.Token = marker + p.Auth.Token
			}
			if p.Auth != nil && p.Auth.ClientSecret != "" {
				p.Auth.ClientSecret = marker + p.Auth.ClientSecret
			}
			err, perr := s.Validate(), p.Validate()
			if (err == nil) != (perr == nil) {
				t.Fatalf("planting changed validity: %v / %v", err, perr)
			}
			if perr != nil && strings.Contains(perr.Error(), marker) && !bytes.Contains(data, []byte(marker)) {
				t.Fatalf("Validate error leaks a secret: %v", perr)
			}
		}
	})
}

func FuzzApplyPatch(f *testing.F) {
	for _, seed := range []string{
		`{}`,
		`{"name":"remote"}`,
		`{"name":"other"}`,
		`{"env":{"TOKEN":"","NEW":"v"},"headers":{"X-Key":""}}`,
		`{"auth":{"kind":"oauth","client_id":"c","client_secret":"s","scopes":["a"]}}`,
		`{"auth":{"kind":"none"}}`,
		`{"auth":{"kind":"bearer","token":""}}`,
		`{"auth":{"kind":"client_credentials","client_id":"c","client_secret":"s"}}`,
		`{"auth":{"kind":"client_credentials","client_id":"c","private_key":` + jsonQ(keyPEM) + `}}`,
		`{"auth":{"private_key":"","client_secret":"s","token_endpoint_auth_method":"client_secret_basic"}}`,
		`{"auth":{"signing_algorithm":"RS256"}}`,
		`{"auth":{"kind":"oauth","client_metadata_url":"https://h/c.json"}}`,
		`{"type":"sse"}`,
		`{"auth":{"token":null}}`,
		`{"type":"local","command":["x",""]}`,
		`{"type":"sse","url":"http://[::1]:80/sse"}`,
		`{"timeout_seconds":0}`,
		`{"timeout_seconds":1e3}`,
		`{"enabled":false,"url":"https://h/"}`,
		`{"env":{"A=B":"x"}}`,
		`{"zzz":1}`,
		`[]`,
		`{"url":`,
		`null`,
	} {
		for base := range 4 {
			f.Add(base, []byte(seed))
		}
	}
	f.Fuzz(func(t *testing.T, which int, patch []byte) {
		bases := []Server{remoteServer(), oauthServer(), localServer(), ccServer()}
		base := bases[uint(which)%uint(len(bases))]
		before := base.Clone()
		got, err := ApplyPatch(base, patch)
		if !base.Equal(before) {
			t.Fatal("ApplyPatch modified base")
		}
		if err != nil {
			if _, ok := err.(*FieldError); !ok {
				t.Fatalf("error %v is a %T, not a *FieldError", err, err)
			}
			for _, s := range base.Secrets() {
				// A secret the patch itself sends may be echoed as a field name.
				if strings.Contains(err.Error(), s) && !bytes.Contains(patch, []byte(s)) {
					t.Fatalf("error %q leaks base secret %q", err, s)
				}
			}
			return
		}
		if err := got.Validate(); err != nil {
			t.Fatalf("patched server does not validate: %v", err)
		}
		if got.Name != base.Name {
			t.Fatalf("name changed to %q", got.Name)
		}
		// A patch result must survive the file.
		file := &File{}
		file.Put(got)
		out, err := Marshal(file)
		if err != nil {
			t.Fatalf("Marshal: %v", err)
		}
		again, err := Parse(out)
		if err != nil || !filesEqual(file, again) {
			t.Fatalf("round trip of the patched server failed: %v\n%s", err, out)
		}
	})
}
