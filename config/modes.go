package config

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
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
	if s := ModeProblem(filepath.Dir(path), "state dir", 0o022, "writable"); s != "" {
		out = append(out, s)
	}
	if s := ModeProblem(path, "config file", 0o044, "readable"); s != "" {
		out = append(out, s)
	}
	return out
}

// ModeProblem says how path (followed if a link) is open beyond its owner
// through the permission bits in mask (0o022: group/other write, 0o044:
// group/other read), as "<what> <path> is <how> by group and others (mode
// 0755)", or "" when it is not, does not exist, or on Windows.
func ModeProblem(path, what string, mask fs.FileMode, how string) string {
	if runtime.GOOS == "windows" {
		return ""
	}
	fi, err := os.Stat(path)
	if err != nil {
		return ""
	}
	perm := fi.Mode().Perm()
	bits := perm & mask
	var who string
	switch {
	case bits == 0:
		return ""
	case bits&0o070 != 0 && bits&0o007 != 0:
		who = "group and others"
	case bits&0o070 != 0:
		who = "group"
	default:
		who = "others"
	}
	return fmt.Sprintf("%s %s is %s by %s (mode %04o)", what, path, how, who, perm)
}
