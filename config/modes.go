package config

import (
	"path/filepath"

	"github.com/openprogram/mcpvisor/internal/atomicfile"
)

// OpenModes lists how the state dir and the configuration file are open
// to other users, for a warning at start: the directory writable by group
// or others (they could replace the file), the file readable by group or
// others (it holds credentials). Each entry names the path and its mode;
// none is an error, and a missing file or directory is not listed. On
// Windows, where permission bits do not describe access, it lists nothing.
// [Store.Save] writes the file 0600 whatever its mode was; the directory's
// mode is the user's to fix.
func (st Store) OpenModes() []string {
	path, err := st.Path()
	if err != nil {
		return nil
	}
	var out []string
	if s := atomicfile.ModeProblem(filepath.Dir(path), "state dir", 0o022, "writable"); s != "" {
		out = append(out, s)
	}
	if s := atomicfile.ModeProblem(path, "config file", 0o044, "readable"); s != "" {
		out = append(out, s)
	}
	return out
}
