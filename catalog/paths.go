package catalog

import "path/filepath"

// appConfigDir is the per-OS folder where desktop applications keep their
// settings: ~/Library/Application Support on darwin, %APPDATA% (that is
// ~/AppData/Roaming) on windows, ~/.config elsewhere.
func (o Options) appConfigDir() string {
	switch {
	case o.Home == "":
		return ""
	case o.goos() == "darwin":
		return filepath.Join(o.Home, "Library", "Application Support")
	case o.goos() == "windows":
		return filepath.Join(o.Home, "AppData", "Roaming")
	default:
		return filepath.Join(o.Home, ".config")
	}
}

// xdgConfigDir is ~/.config, which the command-line hosts (goose, Zed,
// opencode) use on darwin too; on windows they use %APPDATA%.
func (o Options) xdgConfigDir() string {
	if o.Home == "" {
		return ""
	}
	if o.goos() == "windows" {
		return filepath.Join(o.Home, "AppData", "Roaming")
	}
	return filepath.Join(o.Home, ".config")
}

// pathSeparator is the host's ${pathSeparator}.
func (o Options) pathSeparator() string {
	if o.goos() == "windows" {
		return `\`
	}
	return "/"
}

// join is filepath.Join, except that no dir (no home) gives no path.
func join(dir string, elem ...string) string {
	if dir == "" {
		return ""
	}
	return filepath.Join(append([]string{dir}, elem...)...)
}
