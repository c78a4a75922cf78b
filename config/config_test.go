package config

import (
	"slices"
	"testing"
	"time"
)

func TestTimeout(t *testing.T) {
	tests := []struct {
		seconds int
		want    time.Duration
	}{
		{0, 30 * time.Second},
		{-5, 30 * time.Second},
		{1, time.Second},
		{120, 2 * time.Minute},
		{MaxTimeoutSeconds + 1, MaxTimeoutSeconds * time.Second},
	}
	for _, tt := range tests {
		if got := (Server{TimeoutSeconds: tt.seconds}).Timeout(); got != tt.want {
			t.Errorf("Timeout(%d) = %v, want %v", tt.seconds, got, tt.want)
		}
	}
}

func TestCloneIsDeep(t *testing.T) {
	s := oauthServer()
	s.Command = []string{"a"}
	s.Env = map[string]string{"A": "1"}
	s.Headers = map[string]string{"H": "1"}
	s.unknown = []member{{key: "x", value: []byte(`1`)}}
	c := s.Clone()
	if !c.Equal(s) {
		t.Fatal("clone differs")
	}
	c.Command[0] = "b"
	c.Env["A"] = "2"
	c.Headers["H"] = "2"
	c.Auth.Scopes[0] = "z"
	c.Auth.ClientID = "z"
	c.unknown[0].value[0] = '2'
	if s.Command[0] != "a" || s.Env["A"] != "1" || s.Headers["H"] != "1" ||
		s.Auth.Scopes[0] != "read" || s.Auth.ClientID != "cid" || string(s.unknown[0].value) != "1" {
		t.Errorf("clone shares memory with the original: %#v", s)
	}
}

func TestEqual(t *testing.T) {
	base := remoteServer()
	same := base.Clone()
	same.Command = []string{} // empty equals nil
	same.Env = map[string]string{}
	if !base.Equal(same) {
		t.Error("nil and empty collections should be equal")
	}
	noAuth := localServer()
	noneAuth := localServer()
	noneAuth.Auth = &Auth{Kind: AuthNone}
	if !noAuth.Equal(noneAuth) {
		t.Error("nil auth should equal kind none")
	}
	edits := map[string]func(*Server){
		"name":         func(s *Server) { s.Name = "x" },
		"type":         func(s *Server) { s.Type = TypeSSE },
		"command":      func(s *Server) { s.Command = []string{"x"} },
		"env":          func(s *Server) { s.Env = map[string]string{"A": "b"} },
		"url":          func(s *Server) { s.URL += "/x" },
		"header value": func(s *Server) { s.Headers["X-Key"] = "other" },
		"token":        func(s *Server) { s.Auth.Token = "other" },
		"auth nil":     func(s *Server) { s.Auth = nil },
		"client id":    func(s *Server) { s.Auth.ClientID = "c" },
		"secret":       func(s *Server) { s.Auth.ClientSecret = "c" },
		"scopes":       func(s *Server) { s.Auth.Scopes = []string{"a"} },
		"private key":  func(s *Server) { s.Auth.PrivateKey = "k" },
		"auth method":  func(s *Server) { s.Auth.TokenEndpointAuthMethod = "m" },
		"signing alg":  func(s *Server) { s.Auth.SigningAlg = "a" },
		"metadata url": func(s *Server) { s.Auth.ClientMetadataURL = "u" },
		"enabled":      func(s *Server) { s.Enabled = false },
		"timeout":      func(s *Server) { s.TimeoutSeconds = 31 },
		"explicit 0":   func(s *Server) { s.timeoutZero = true },
		"max calls":    func(s *Server) { s.MaxConcurrentCalls = 1 },
	}
	for name, edit := range edits {
		o := base.Clone()
		edit(&o)
		if base.Equal(o) || o.Equal(base) {
			t.Errorf("%s: change not detected", name)
		}
	}
	extra := base.Clone()
	extra.unknown = []member{{key: "x", value: []byte("1")}}
	if !base.Equal(extra) {
		t.Error("unknown fields should not affect Equal")
	}
}

func TestFileGetPutRemove(t *testing.T) {
	f := &File{}
	f.Put(localServer())
	f.Put(remoteServer())
	f.Put(oauthServer())

	changed := remoteServer()
	changed.URL = "https://other.example/mcp"
	f.Put(changed)
	names := func() []string {
		var out []string
		for _, s := range f.Servers {
			out = append(out, s.Name)
		}
		return out
	}
	if want := []string{"fs", "remote", "oa"}; !slices.Equal(names(), want) {
		t.Fatalf("after replace: %v, want %v (position kept)", names(), want)
	}
	got, ok := f.Get("remote")
	if !ok || got.URL != changed.URL {
		t.Errorf("Get(remote) = %v, %v", got, ok)
	}
	got.Headers["X-Key"] = "mutated"
	if again, _ := f.Get("remote"); again.Headers["X-Key"] != headerSecret {
		t.Error("Get returned a value sharing memory with the File")
	}
	changed.Headers["X-Key"] = "mutated"
	if again, _ := f.Get("remote"); again.Headers["X-Key"] != headerSecret {
		t.Error("Put kept a reference to the caller's maps")
	}
	if _, ok := f.Get("nope"); ok {
		t.Error("Get(nope) found something")
	}

	c := f.Clone()
	if !f.Remove("remote") || f.Remove("remote") {
		t.Error("Remove should report true once, then false")
	}
	if want := []string{"fs", "oa"}; !slices.Equal(names(), want) {
		t.Errorf("after remove: %v, want %v", names(), want)
	}
	if len(c.Servers) != 3 || c.Servers[1].Name != "remote" {
		t.Errorf("Remove changed the clone: %v", c.Servers)
	}
	var nilFile *File
	if _, ok := nilFile.Get("fs"); ok || nilFile.Clone() != nil {
		t.Error("nil File should be empty")
	}
}
