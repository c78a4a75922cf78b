package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/openprogram/mcpvisor/catalog"
	"github.com/openprogram/mcpvisor/config"
	"github.com/openprogram/mcpvisor/runtime"
)

// runImport is `demo import`: it diffs the servers of other hosts (all of
// them, one host, or one file) against the state dir's config, prints the
// diff masked (field names, never values), and unless -dry-run adds the
// servers the diff calls "add", saying what it skipped and why. It edits
// the file at rest, as a user would by hand: a `demo run` on the same
// state dir takes the new servers on at its next reload (SIGHUP); a save
// it makes before then keeps them, since its manager re-reads the file
// before each edit. A save of its that falls between import's read and
// write is caught (see importInto).
func runImport(stdout, stderr io.Writer, args []string) int {
	fs := flag.NewFlagSet("import", flag.ContinueOnError)
	fs.SetOutput(stderr)
	from := fs.String("from", "", "a `host` ("+hostList()+") or a FILE of one; default: every host")
	format := fs.String("format", "", "the format of a -from FILE: mcpvisor or a host (default: guessed from its name)")
	stateDir := fs.String("state-dir", "", "directory holding mcp_servers.json (default: as demo run resolves it)")
	home := fs.String("home", "", "the home `directory` the hosts' files are under (default $HOME)")
	var projects stringList
	fs.Var(&projects, "project", "a project `folder` whose hosts' project files are read too; repeatable")
	dryRun := fs.Bool("dry-run", false, "print the diff, change nothing")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "demo import: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	if *home == "" {
		*home, _ = os.UserHomeDir()
	}
	copts := catalog.Options{Home: *home, Projects: projects}
	entries, warnings, err := importCandidates(copts, *from, *format)
	if err != nil {
		fmt.Fprintf(stderr, "demo import: %v\n", err)
		return 2
	}
	dir, err := runtime.Options{StateDir: *stateDir}.ResolveStateDir()
	if err != nil {
		fmt.Fprintf(stderr, "demo import: resolving the state dir: %v\n", err)
		return 1
	}
	store := config.Store{Dir: func() (string, error) { return dir, nil }}
	if err := importInto(stdout, store, entries, warnings, *dryRun, nil); err != nil {
		fmt.Fprintf(stderr, "demo import: %v\n", err)
		return 1
	}
	return 0
}

// importInto diffs entries against the store's file, prints the diff and,
// unless dryRun, saves the file with the servers the diff calls "add".
// A running runtime that saves the file between this read and this write
// would have its save overwritten, so the file is stat'ed before the read
// and again before the write: if it changed, the import starts over once
// on the new file, and a second change refuses with nothing saved. (The
// window left is the moment between that stat and the rename.)
// beforeCheck, for tests, runs just before that second stat.
func importInto(stdout io.Writer, store config.Store, entries []catalog.Entry, warnings []catalog.SourceWarning, dryRun bool, beforeCheck func()) error {
	path, err := store.Path()
	if err != nil {
		return err
	}
	printed := ""
	for attempt := 0; ; attempt++ {
		seen, err := statFile(path)
		if err != nil {
			return err
		}
		current, err := store.Load()
		if err != nil {
			return err
		}
		diff := runtime.DiffCatalog(current, entries, warnings)
		// On the retry the diff is printed again only if the new file
		// changed it.
		var text strings.Builder
		printDiff(&text, diff, entries)
		switch {
		case attempt == 0:
			fmt.Fprint(stdout, text.String())
		case text.String() != printed:
			fmt.Fprintln(stdout, "the diff against it changed:")
			fmt.Fprint(stdout, text.String())
		default:
			fmt.Fprintln(stdout, "the diff against it is the same")
		}
		printed = text.String()
		if dryRun {
			fmt.Fprintln(stdout, "dry run: nothing changed")
			return nil
		}
		added, skipped := addNew(current, entries, diff)
		if len(added) > 0 {
			if beforeCheck != nil {
				beforeCheck()
			}
			now, err := statFile(path)
			if err != nil {
				return err
			}
			if !sameFile(seen, now) {
				if attempt == 0 {
					fmt.Fprintf(stdout, "%s changed while importing (a running demo run saved it?): reading it again\n", path)
					continue
				}
				return fmt.Errorf("%s changed again while importing: nothing saved; run demo import again", path)
			}
		}
		for _, s := range skipped {
			fmt.Fprintln(stdout, "skipped", s)
		}
		if len(added) == 0 {
			fmt.Fprintln(stdout, "nothing to add")
			return nil
		}
		if err := store.Save(current); err != nil {
			return fmt.Errorf("saving: %w", err)
		}
		fmt.Fprintf(stdout, "added %s to %s (a running demo run takes them on at its next reload: SIGHUP)\n", strings.Join(added, ", "), path)
		return nil
	}
}

// statFile is what a change of the config file shows in; nil when there
// is no file.
func statFile(path string) (fs.FileInfo, error) {
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("checking %s: %w", path, err)
	}
	return fi, nil
}

// sameFile reports whether a and b are one unchanged file: a save renames
// a new file over the old one (another identity), an edit in place changes
// the size or the modification time.
func sameFile(a, b fs.FileInfo) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return os.SameFile(a, b) && a.Size() == b.Size() && a.ModTime().Equal(b.ModTime())
}

// importCandidates reads what -from names.
func importCandidates(opts catalog.Options, from, format string) ([]catalog.Entry, []catalog.SourceWarning, error) {
	hosts := catalog.Sources()[1:] // every source but the templates
	switch {
	case from == "":
		opts.Sources = hosts
		e, w := catalog.List(opts)
		return e, w, nil
	case slices.Contains(hosts, catalog.Source(from)):
		opts.Sources = []catalog.Source{catalog.Source(from)}
		e, w := catalog.List(opts)
		return e, w, nil
	}
	if format == "" {
		if format = guessFormat(from); format == "" {
			return nil, nil, fmt.Errorf("cannot tell the format of %s from its name: give -format (mcpvisor or %s)", from, hostList())
		}
	}
	if format != "mcpvisor" && !slices.Contains(hosts, catalog.Source(format)) {
		return nil, nil, fmt.Errorf("unknown -format %q: want mcpvisor or %s", format, hostList())
	}
	data, err := readBounded(from, format, fromFileLimit(format))
	if err != nil {
		return nil, nil, err
	}
	if format == "mcpvisor" {
		f, err := config.Parse(data)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", from, err)
		}
		e, err := runtime.FileEntries(f, from)
		return e, nil, err
	}
	e, w := catalog.ReadContent(opts, catalog.Source(format), from, data)
	return e, w, nil
}

// fromFileLimit is the most of a -from FILE read: an mcpvisor file's own
// limit, else the bound the catalog applies to that host's own file
// (catalog.ContentLimit): a ~/.claude.json with its history, walked as a
// stream, may be tens of MB, while a JSONC, YAML or TOML file, parsed
// whole, is refused over catalog.MaxSettingsBytes before it is read.
func fromFileLimit(format string) int64 {
	if format == "mcpvisor" {
		return config.MaxFileSize
	}
	return catalog.ContentLimit(catalog.Source(format))
}

// guessFormat names the format of a host file by its name, "" when the
// name does not tell.
func guessFormat(path string) string {
	switch base := filepath.Base(path); {
	case base == config.FileName:
		return "mcpvisor"
	case base == "claude_desktop_config.json":
		return string(catalog.SourceClaudeDesktop)
	case base == ".claude.json" || base == ".mcp.json":
		return string(catalog.SourceClaudeCode)
	case base == "mcp_config.json":
		return string(catalog.SourceWindsurf)
	case strings.HasPrefix(base, "opencode.json"):
		return string(catalog.SourceOpencode)
	case base == "config.yaml" || base == "config.yml":
		return string(catalog.SourceGoose)
	case base == "config.toml":
		return string(catalog.SourceCodex)
	}
	return ""
}

// readBounded reads the file at path, of format, if it is a regular file
// of at most limit bytes: a larger one is refused by its size before it
// is read, and one that grows past limit while read is refused too.
func readBounded(path, format string, limit int64) ([]byte, error) {
	// Non-blocking, as the catalog opens host files: opening a FIFO
	// would otherwise wait for a writer, forever. On a regular file the
	// flag changes nothing.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat() // the open file: what is read is what is checked
	switch {
	case err != nil:
		return nil, fmt.Errorf("reading %s: %w", path, err)
	case !st.Mode().IsRegular():
		return nil, fmt.Errorf("%s is not a regular file (%s): not read", path, st.Mode().Type())
	case st.Size() > limit:
		return nil, fmt.Errorf("%s is %d bytes, over the limit of %d bytes for a %s file: not read", path, st.Size(), limit, format)
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%s is over the limit of %d bytes for a %s file: not read", path, limit, format)
	}
	return data, nil
}

// printDiff writes one line per server: status, name, source and file,
// and the changed fields or why it cannot be applied; under it the
// variables its references need set and its entry's warnings (entries are
// the diff's, row for row); then the files' warnings.
func printDiff(w io.Writer, d runtime.CatalogDiff, entries []catalog.Entry) {
	for i, s := range d.Servers {
		line := fmt.Sprintf("%-8s %s", s.Status, s.Name)
		if s.Source != "" {
			line += " (" + string(s.Source) + " " + s.File + ")"
		} else {
			line += " (" + s.File + ")"
		}
		if len(s.Fields) > 0 {
			line += ": " + strings.Join(s.Fields, ", ")
		}
		if s.Error != "" {
			line += ": " + s.Error
		}
		fmt.Fprintln(w, line)
		if i < len(entries) {
			if len(entries[i].Requires) > 0 {
				fmt.Fprintln(w, "         requires", strings.Join(entries[i].Requires, ", "), "(set each in the environment)")
			}
			for _, warning := range entries[i].Warnings {
				fmt.Fprintln(w, "         warning", warning)
			}
		}
	}
	for _, sw := range d.Warnings {
		fmt.Fprintln(w, "warning", sw.String())
	}
}

// addNew puts into f the entries the diff calls "add", the first of each
// name; it returns the names added and a line for each entry skipped.
func addNew(f *config.File, entries []catalog.Entry, d runtime.CatalogDiff) (added, skipped []string) {
	for i, row := range d.Servers {
		where := fmt.Sprintf("%s (%s %s)", row.Name, row.Source, row.File)
		switch {
		case row.Status != runtime.DiffAdd:
			skipped = append(skipped, where+": "+row.Status)
			continue
		case slices.Contains(added, row.Name):
			skipped = append(skipped, where+": an entry of that name is added already")
			continue
		}
		s, err := runtime.CatalogServer(entries[i], row.Name, nil)
		if err != nil {
			skipped = append(skipped, where+": "+err.Error())
			continue
		}
		f.Put(s)
		added = append(added, row.Name)
	}
	return added, skipped
}

func hostList() string {
	var names []string
	for _, s := range catalog.Sources()[1:] {
		names = append(names, string(s))
	}
	return strings.Join(names, ", ")
}
