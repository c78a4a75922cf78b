package exampleserver

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestServerInfoHasTitleIconsAndVersion(t *testing.T) {
	res := connectInMemory(t, Options{}).InitializeResult()
	info := res.ServerInfo
	if info.Name != DefaultName || info.Title != Title || info.Version != version || info.WebsiteURL != WebsiteURL {
		t.Errorf("server info = %+v, want %s / %s / %s / %s", info, DefaultName, Title, version, WebsiteURL)
	}
	if len(info.Icons) != 2 || !strings.HasPrefix(info.Icons[0].Source, "data:image/svg+xml;base64,") || info.Icons[1].Source != IconURL || info.Icons[1].Theme != "dark" {
		t.Errorf("icons = %+v, want the data: SVG and the dark %s", info.Icons, IconURL)
	}
	if res.Instructions != instructions {
		t.Errorf("instructions without a file = %q, want the fixed text", res.Instructions)
	}
}

// The instructions file is read at each start: a server started after
// the file changed says the new text; a missing file adds nothing.
func TestInstructionsFileIsReadAtStart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "instructions.txt")
	if got := connectInMemory(t, Options{InstructionsFile: path}).InitializeResult().Instructions; got != instructions {
		t.Errorf("instructions with a missing file = %q, want the fixed text", got)
	}
	for _, text := range []string{"first text", "second text"} {
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		if got := connectInMemory(t, Options{InstructionsFile: path}).InitializeResult().Instructions; got != instructions+"\n"+text {
			t.Errorf("instructions = %q, want the fixed text and %q", got, text)
		}
	}
}
