package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/openprogram/mcpvisor/catalog"
	"github.com/openprogram/mcpvisor/config"
	"github.com/openprogram/mcpvisor/runtime"
)

// runImport is `demo import`: it diffs the servers of other hosts (all of
// them, one host, or one file) against the state dir's config, prints the
// diff masked (field names, never values), and unless -dry-run adds the
// servers the diff calls "add", saying what it skipped and why. It edits
// the file at rest, as a user would by hand: a `demo run` on the same
// state dir takes the new servers on at its next reload (SIGHUP), and a
// save it makes before that would not keep them.
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
	current, err := store.Load()
	if err != nil {
		fmt.Fprintf(stderr, "demo import: %v\n", err)
		return 1
	}
	diff := runtime.DiffCatalog(current, entries, warnings)
	printDiff(stdout, diff)
	if *dryRun {
		fmt.Fprintln(stdout, "dry run: nothing changed")
		return 0
	}
	added, skipped := addNew(current, entries, diff)
	for _, s := range skipped {
		fmt.Fprintln(stdout, "skipped", s)
	}
	if len(added) == 0 {
		fmt.Fprintln(stdout, "nothing to add")
		return 0
	}
	if err := store.Save(current); err != nil {
		fmt.Fprintf(stderr, "demo import: saving: %v\n", err)
		return 1
	}
	path, _ := store.Path()
	fmt.Fprintf(stdout, "added %s to %s (a running demo run takes them on at its next reload: SIGHUP)\n", strings.Join(added, ", "), path)
	return 0
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
	data, err := readBounded(from, catalog.MaxSettingsBytes)
	if err != nil {
		return nil, nil, err
	}
	if format == "" {
		if format = guessFormat(from); format == "" {
			return nil, nil, fmt.Errorf("cannot tell the format of %s from its name: give -format (mcpvisor or %s)", from, hostList())
		}
	}
	switch {
	case format == "mcpvisor":
		f, err := config.Parse(data)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", from, err)
		}
		e, err := runtime.FileEntries(f, from)
		return e, nil, err
	case slices.Contains(hosts, catalog.Source(format)):
		e, w := catalog.ReadContent(opts, catalog.Source(format), from, data)
		return e, w, nil
	default:
		return nil, nil, fmt.Errorf("unknown -format %q: want mcpvisor or %s", format, hostList())
	}
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

func readBounded(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%s is over %d bytes: not read", path, limit)
	}
	return data, nil
}

// printDiff writes one line per server: status, name, source and file,
// and the changed fields or why it cannot be applied; then the warnings.
func printDiff(w io.Writer, d runtime.CatalogDiff) {
	for _, s := range d.Servers {
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
