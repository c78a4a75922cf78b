package catalog

import (
	"cmp"
	"encoding/json"
	"path/filepath"
	"runtime"
	"slices"
)

// Source names where an entry comes from.
type Source string

// The sources of the catalog: the built-in templates and each host.
const (
	SourceBuiltin       Source = "builtin"
	SourceClaudeDesktop Source = "claude-desktop"
	SourceClaudeCode    Source = "claude-code"
	SourceCursor        Source = "cursor"
	SourceVSCode        Source = "vscode"
	SourceWindsurf      Source = "windsurf"
	SourceOpencode      Source = "opencode"
	SourceGoose         Source = "goose"
	SourceZed           Source = "zed"
	SourceCodex         Source = "codex"
	SourceGemini        Source = "gemini"
)

// Sources lists every source in the order [List] reads them.
func Sources() []Source {
	return []Source{SourceBuiltin, SourceClaudeDesktop, SourceClaudeCode, SourceCursor,
		SourceVSCode, SourceWindsurf, SourceOpencode, SourceGoose, SourceZed, SourceCodex, SourceGemini}
}

// Options says where to look.
type Options struct {
	// Home is the user's home directory; the caller resolves the default
	// ($HOME). Empty means no host file is read, only the templates.
	Home string
	// Projects are project folders searched for each host's project files
	// (.mcp.json, .cursor/mcp.json, .vscode/mcp.json, ...). A relative
	// folder (and a relative Home) is taken against the working
	// directory. A file is read once: a user file that is also a
	// project's (a project folder that is Home, or holds it) is listed
	// as the user's only.
	Projects []string
	// GOOS picks the per-OS config folders (Claude Desktop, VS Code,
	// goose, Zed); empty means runtime.GOOS.
	GOOS string
	// Sources restricts the listing to these sources; empty means all.
	Sources []Source
}

func (o Options) goos() string {
	if o.GOOS == "" {
		return runtime.GOOS
	}
	return o.GOOS
}

// absolute returns o with Home and the project folders absolute and
// clean, and each project once: a relative folder (demo's -project .)
// would make the files of the entries, and the cwd resolved against a
// project, relative, and mcpvisor takes only an absolute cwd. A folder
// that cannot be made absolute (no working directory) is kept as given.
func (o Options) absolute() Options {
	abs := func(dir string) string {
		if dir == "" {
			return ""
		}
		if a, err := filepath.Abs(dir); err == nil {
			return a
		}
		return dir
	}
	o.Home = abs(o.Home)
	var projects []string
	for _, dir := range o.Projects {
		if dir = abs(dir); dir != "" && !slices.Contains(projects, dir) {
			projects = append(projects, dir)
		}
	}
	o.Projects = projects
	return o
}

func (o Options) wants(s Source) bool {
	return len(o.Sources) == 0 || slices.Contains(o.Sources, s)
}

// Entry is one server of the catalog. An entry is identified by Source,
// File and Name together: Claude Code and VS Code each have user and
// project entries of the same name.
type Entry struct {
	// Source is the host the entry comes from, or SourceBuiltin.
	Source Source `json:"source"`
	// File is the file that holds the entry; empty for a template. A
	// Claude Code project entry kept in ~/.claude.json is
	// "<home>/.claude.json#projects/<project path>".
	File string `json:"file"`
	// Name is the server's name in that file (it may not be a valid
	// mcpvisor name: a warning says so, and applying it needs a new name).
	Name string `json:"name"`
	// Config is the mapped mcpvisor entry in the storage form: "type",
	// "command", "cwd", "env", "url", "headers", "auth", "enabled",
	// "timeout_seconds", "connect_timeout_seconds", "tools". It holds the
	// host's values, secrets included: mask it before answering
	// ([MaskedConfig]). Formatting the Entry itself (fmt, encoding/json,
	// log/slog) masks it.
	Config json.RawMessage `json:"config"`
	// Requires lists the environment variables the config refers to
	// without a default: a template's values the user must supply, or a
	// host entry's secrets that it reads from the environment. Applying
	// the entry needs each one set, or the field overlaid.
	Requires []string `json:"requires,omitempty"`
	// Description says what a template is for; empty for a host entry.
	Description string `json:"description,omitempty"`
	// Warnings say what of the host's entry could not be mapped. They name
	// fields, never values.
	Warnings []string `json:"warnings,omitempty"`
}

// SourceWarning is a problem with one file of a source as a whole: it is
// corrupt, unreadable, too large, or outside the allowed folders.
type SourceWarning struct {
	// Source and File name the file; Message says what is wrong with it,
	// never quoting it.
	Source  Source `json:"source"`
	File    string `json:"file"`
	Message string `json:"message"`
}

// String is the warning as one line: source, file, message.
func (w SourceWarning) String() string {
	return string(w.Source) + ": " + w.File + ": " + w.Message
}

// List returns the catalog: the built-in templates and every server
// configured in the hosts' files that opts points at, sorted by source,
// file and name, and a warning for each file that could not be read. It
// never fails as a whole: a bad file costs only its own entries.
func List(opts Options) ([]Entry, []SourceWarning) {
	opts = opts.absolute()
	c := &collector{opts: opts, fs: newFileReader(opts)}
	for _, r := range allReaders() {
		if opts.wants(r.source) {
			r.read(c)
		}
	}
	slices.SortFunc(c.entries, compareEntries)
	slices.SortStableFunc(c.warnings, func(a, b SourceWarning) int {
		return cmp.Or(cmp.Compare(a.Source, b.Source), cmp.Compare(a.File, b.File))
	})
	return c.entries, c.warnings
}

func compareEntries(a, b Entry) int {
	return cmp.Or(cmp.Compare(a.Source, b.Source), cmp.Compare(a.File, b.File), cmp.Compare(a.Name, b.Name))
}

// reader lists the entries of one source.
type reader struct {
	source Source
	read   func(c *collector)
	// limit is the largest file of the source's format the reader reads:
	// MaxFileBytes for JSON, walked as a stream, MaxSettingsBytes for a
	// format parsed whole (JSON with comments, YAML, TOML).
	limit int64
}

// allReaders is every source in listing order (a function, so that no
// package-level table can be changed).
func allReaders() []reader {
	return []reader{
		{SourceBuiltin, readBuiltin, 0},
		{SourceClaudeDesktop, readClaudeDesktop, MaxFileBytes},
		{SourceClaudeCode, readClaudeCode, MaxFileBytes},
		{SourceCursor, readCursor, MaxSettingsBytes},
		{SourceVSCode, readVSCode, MaxSettingsBytes},
		{SourceWindsurf, readWindsurf, MaxSettingsBytes},
		{SourceOpencode, readOpencode, MaxSettingsBytes},
		{SourceGoose, readGoose, MaxSettingsBytes},
		{SourceZed, readZed, MaxSettingsBytes},
		{SourceCodex, readCodex, MaxSettingsBytes},
		{SourceGemini, readGemini, MaxSettingsBytes},
	}
}
