package runtime

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// A relative Home or project folder (`demo run -home h -project .`) is
// made absolute against the working directory, so that the catalog names
// its files absolutely and resolves a project's cwd to an absolute path;
// an absolute one is kept as given, and the caller's slice is not
// changed.
func TestSetDefaultsMakesCatalogFoldersAbsolute(t *testing.T) {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	projects := []string{".", "sub/proj", "/abs/proj"}
	o := Options{Home: "h", Projects: projects}
	o.setDefaults()
	if o.Home != filepath.Join(wd, "h") {
		t.Errorf("Home = %q, want %q", o.Home, filepath.Join(wd, "h"))
	}
	if want := []string{wd, filepath.Join(wd, "sub", "proj"), "/abs/proj"}; !slices.Equal(o.Projects, want) {
		t.Errorf("Projects = %q, want %q", o.Projects, want)
	}
	if projects[0] != "." {
		t.Errorf("the caller's Projects changed: %q", projects)
	}
}
