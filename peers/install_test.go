//go:build unix

package peers_test

import (
	"os"
	"path/filepath"
	"testing"
)

// A package whose dependencies an interrupted install left out is not
// taken for installed (the tests would run a broken server forever
// instead of repairing it); nested and hoisted dependencies both count.
func TestInstalledVersionNeedsDependencies(t *testing.T) {
	dir := t.TempDir()
	write := func(rel, content string) {
		t.Helper()
		p := filepath.Join(dir, "node_modules", rel, "package.json")
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("@scope/server", `{"version":"1.2.3","dependencies":{"left":"^1","@dep/nested":"^2"}}`)
	if got := installedVersion(dir, "@scope/server"); got != "" {
		t.Errorf("with no dependency installed: %q, want \"\"", got)
	}
	write("left", `{"version":"1.0.0"}`)
	if got := installedVersion(dir, "@scope/server"); got != "" {
		t.Errorf("with one of two dependencies: %q, want \"\"", got)
	}
	write("@scope/server/node_modules/@dep/nested", `{"version":"2.0.0"}`)
	if got := installedVersion(dir, "@scope/server"); got != "1.2.3" {
		t.Errorf("with every dependency: %q, want 1.2.3", got)
	}
}
