package atomicfile

import (
	"fmt"
	"io/fs"
	"os"
	"runtime"
)

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
