//go:build unix

package tokenstore

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func dirStore(dir string) Store { return Store{Dir: func() (string, error) { return dir, nil }} }

// TestOversizedRecordRefused: a record file over MaxRecordSize is reported
// (the server then needs a login again) without quoting it, and Save
// refuses to write one.
func TestOversizedRecordRefused(t *testing.T) {
	dir := t.TempDir()
	st := dirStore(dir)
	if err := os.MkdirAll(filepath.Join(dir, "oauth"), 0o700); err != nil {
		t.Fatal(err)
	}
	big := `{"token":{"access_token":"` + marker + strings.Repeat("a", MaxRecordSize) + `"}}`
	if err := os.WriteFile(filepath.Join(dir, "oauth", "svc.json"), []byte(big), 0o600); err != nil {
		t.Fatal(err)
	}
	r, err := st.Load("svc")
	if r != nil || err == nil || !strings.Contains(err.Error(), "2 MiB") {
		t.Fatalf("Load = %v, %v; want an error naming the 2 MiB limit", r, err)
	}
	if strings.Contains(err.Error(), marker) {
		t.Errorf("error quotes the record: %v", err)
	}
	huge := &Record{ServerURL: "https://mcp.example/mcp", AuthServer: &AuthServer{
		Metadata: json.RawMessage(`"` + strings.Repeat("m", MaxRecordSize) + `"`)}}
	if err := st.Save("other", huge); err == nil || !strings.Contains(err.Error(), "limit") {
		t.Errorf("Save of an oversized record = %v, want refused", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "oauth", "other.json")); !os.IsNotExist(err) {
		t.Errorf("oversized record written: %v", err)
	}
}

// TestRecordThroughSymlink: a record file that is a symbolic link is read
// and written through (the link stays a link, the target becomes 0600)
// and deleted with its target.
func TestRecordThroughSymlink(t *testing.T) {
	dir, elsewhere := t.TempDir(), t.TempDir()
	st := dirStore(dir)
	if err := os.MkdirAll(filepath.Join(dir, "oauth"), 0o700); err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(elsewhere, "svc.json")
	if err := os.WriteFile(target, []byte(`{"server_url":"https://old.example/mcp"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "oauth", "svc.json")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	if r, err := st.Load("svc"); err != nil || r.ServerURL != "https://old.example/mcp" {
		t.Fatalf("Load through the link = %v, %v", r, err)
	}
	if err := st.Save("svc", &Record{ServerURL: "https://new.example/mcp", Token: &Token{AccessToken: marker}}); err != nil {
		t.Fatal(err)
	}
	if dest, err := os.Readlink(link); err != nil || dest != target {
		t.Fatalf("link = %q, %v; want still a link to %s", dest, err, target)
	}
	if fi, err := os.Stat(target); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("target = %v, %v; want 0600", fi, err)
	}
	if data, _ := os.ReadFile(target); !strings.Contains(string(data), marker) {
		t.Errorf("target does not hold the new record: %s", data)
	}
	if err := st.Delete("svc"); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{link, target} {
		if _, err := os.Lstat(p); !os.IsNotExist(err) {
			t.Errorf("%s still there after Delete: %v", p, err)
		}
	}
}

// TestOpenModes: a record readable by others and a login dir writable by
// the group are listed; a private record is not, nor a missing one.
func TestOpenModes(t *testing.T) {
	dir := t.TempDir()
	st := dirStore(dir)
	for _, name := range []string{"open", "private"} {
		if err := st.Save(name, &Record{ServerURL: "https://mcp.example/mcp"}); err != nil {
			t.Fatal(err)
		}
	}
	if got := st.OpenModes([]string{"open", "private", "missing"}); len(got) != 0 {
		t.Fatalf("OpenModes on private files = %v", got)
	}
	if err := os.Chmod(filepath.Join(dir, "oauth", "open.json"), 0o604); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(dir, "oauth"), 0o770); err != nil {
		t.Fatal(err)
	}
	got := st.OpenModes([]string{"open", "private", "missing"})
	if len(got) != 2 || !strings.Contains(got[0], "login dir") || !strings.Contains(got[0], "writable by group (mode 0770)") ||
		!strings.Contains(got[1], "open.json is readable by others (mode 0604)") {
		t.Errorf("OpenModes = %q", got)
	}
}
