package tokenstore

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const marker = "tok-MARKER-8f3a9c"

func TestSaveLoadDelete(t *testing.T) {
	dir := t.TempDir()
	st := Store{Dir: func() (string, error) { return dir, nil }}
	if r, err := st.Load("svc"); r != nil || err != nil {
		t.Fatalf("Load of nothing = %v, %v; want nil, nil", r, err)
	}
	exp := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	in := &Record{
		ServerURL:  "https://mcp.example/mcp",
		Token:      &Token{AccessToken: marker, RefreshToken: marker + "r", ExpiresAt: exp},
		Client:     &Client{ClientID: "id", ClientSecret: marker + "s", RedirectURI: "http://127.0.0.1:4711/callback"},
		AuthServer: &AuthServer{Issuer: "https://as.example", TokenEndpoint: "https://as.example/token"},
	}
	if err := st.Save("svc", in); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "oauth", "svc.json")
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("record mode %v, want 0600", fi.Mode().Perm())
	}
	if di, _ := os.Stat(filepath.Dir(path)); di.Mode().Perm() != 0o700 {
		t.Errorf("oauth dir mode %v, want 0700", di.Mode().Perm())
	}
	data, _ := os.ReadFile(path)
	if !strings.Contains(string(data), `"expires_at": "2030-01-02T03:04:05Z"`) {
		t.Errorf("expires_at not stored as an absolute time:\n%s", data)
	}
	out, err := st.Load("svc")
	if err != nil {
		t.Fatal(err)
	}
	if out.Token.AccessToken != marker || !out.Token.ExpiresAt.Equal(exp) || out.Client.RedirectURI != in.Client.RedirectURI {
		t.Errorf("round trip lost data: %+v %+v", out.Token, out.Client)
	}
	if s := fmt.Sprint(*out) + fmt.Sprintf("%v %+v", out, *out); strings.Contains(s, marker) {
		t.Errorf("formatting a record shows a secret: %s", s)
	}
	if err := st.Delete("svc"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("record still there after Delete: %v", err)
	}
	if err := st.Delete("svc"); err != nil {
		t.Errorf("second Delete: %v", err)
	}
}

func TestDamagedRecordErrorHidesContent(t *testing.T) {
	dir := t.TempDir()
	st := Store{Dir: func() (string, error) { return dir, nil }}
	os.MkdirAll(filepath.Join(dir, "oauth"), 0o700)
	os.WriteFile(filepath.Join(dir, "oauth", "svc.json"), []byte(`{"token": {"access_token": "`+marker), 0o600)
	_, err := st.Load("svc")
	if err == nil {
		t.Fatal("damaged record loaded")
	}
	if strings.Contains(err.Error(), marker) {
		t.Errorf("error shows the file's content: %v", err)
	}
}

func TestBadNameRefused(t *testing.T) {
	st := Store{Dir: func() (string, error) { return t.TempDir(), nil }}
	if err := st.Save("../x", &Record{}); err == nil {
		t.Error("Save with a path in the name succeeded")
	}
}
