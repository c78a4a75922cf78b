package catalog

import (
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/openprogram/mcpvisor/config"
)

// repeatReader yields head, then body n times, then tail, without holding
// them: a file of hundreds of MiB at no memory.
type repeatReader struct {
	head, body, tail string
	n                int // bodies left
	cur              string
	read             int64
}

func newRepeatReader(head, body string, n int, tail string) *repeatReader {
	return &repeatReader{cur: head, body: body, n: n, tail: tail}
}

func (r *repeatReader) Read(p []byte) (int, error) {
	for r.cur == "" {
		switch {
		case r.n > 0:
			r.n--
			r.cur = r.body
		case r.tail != "":
			r.cur, r.tail = r.tail, ""
		default:
			return 0, io.EOF
		}
	}
	n := copy(p, r.cur)
	r.cur = r.cur[n:]
	r.read += int64(n)
	return n, nil
}

// A kept value over MaxKeptBytes (200 MiB of empty args) stops the walk
// soon after the cap, as an error naming the key, not its content.
func TestKeptValueBounded(t *testing.T) {
	r := newRepeatReader(`{"mcpServers":{"x":{"command":"a","args":[`, `"",`, (200<<20)/3, `""]}}}`)
	var err error
	allocated := bytesAllocated(func() { _, err = walkJSON(r, keyPath{"mcpServers"}) })
	if err == nil || !strings.Contains(err.Error(), `"mcpServers"`) {
		t.Fatalf("walkJSON: %v", err)
	}
	if limit := int64(MaxKeptBytes + 64<<10); r.read > limit {
		t.Errorf("read %d bytes of a kept value, want at most %d", r.read, limit)
	}
	if limit := uint64(12 * MaxKeptBytes); allocated > limit {
		t.Errorf("allocated %d bytes, want at most %d", allocated, limit)
	}
}

// A skipped string of 200 MiB (a history paste) is read cut short: the
// servers after it are kept, and the walk allocates a few MiB, not the
// string.
func TestLongSkippedStringRead(t *testing.T) {
	r := newRepeatReader(`{"history":"`, strings.Repeat("a", 1<<10), 200<<10, `","mcpServers":{"x":{"command":"a"}}}`)
	var got []found
	var err error
	allocated := bytesAllocated(func() { got, err = walkJSON(r, keyPath{"mcpServers"}) })
	if err != nil || len(got) != 1 || string(got[0].value) != `{"x":{"command":"a"}}` {
		t.Fatalf("walkJSON: %v, %v", got, err)
	}
	if limit := uint64(6 * MaxStringBytes); allocated > limit {
		t.Errorf("allocated %d bytes, want at most %d", allocated, limit)
	}
	t.Logf("read %d, allocated %d", r.read, allocated)
}

// One token over MaxTokenBytes that is not a string (a 200 MiB number)
// stops the walk: the decoder would hold it whole.
func TestTokenBounded(t *testing.T) {
	r := newRepeatReader(`{"history":1`, strings.Repeat("0", 1<<10), 200<<10, `,"mcpServers":{}}`)
	var err error
	allocated := bytesAllocated(func() { _, err = walkJSON(r, keyPath{"mcpServers"}) })
	if err == nil || !strings.Contains(err.Error(), "over") {
		t.Fatalf("walkJSON: %v", err)
	}
	if limit := int64(2*MaxTokenBytes + 64<<10); r.read > limit {
		t.Errorf("read %d bytes of one token, want at most %d", r.read, limit)
	}
	if limit := uint64(6 * MaxTokenBytes); allocated > limit {
		t.Errorf("allocated %d bytes, want at most %d", allocated, limit)
	}
	t.Logf("read %d, allocated %d", r.read, allocated)
}

// A kept value and a token just under their bounds are read.
func TestUnderBoundsRead(t *testing.T) {
	r := newRepeatReader(`{"history":"`, strings.Repeat("a", 1<<10), (MaxTokenBytes>>10)-1, `","mcpServers":{"x":{"args":["`+strings.Repeat("b", MaxKeptBytes-100)+`"]}}}`)
	got, err := walkJSON(r, keyPath{"mcpServers"})
	if err != nil || len(got) != 1 {
		t.Fatalf("walkJSON: %d values, %v", len(got), err)
	}
}

// A JSON file that grows after its size check is read no further than
// its limit, and is a warning saying so.
func TestGrowingJSONFileStopsAtLimit(t *testing.T) {
	home := t.TempDir()
	path := writeFile(t, home, ".claude.json", `{"history": "`)
	f, err := newFileReader(Options{Home: home}).open(path, 64) // 13 bytes: passes
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	w.WriteString(strings.Repeat("a", 1<<20) + `", "mcpServers": {"x": {"command": "a"}}}`)
	w.Close()
	found, err := walkLimited(f, 64, keyPath{"mcpServers"})
	if err == nil || !strings.Contains(err.Error(), "grew") || len(found) != 0 {
		t.Fatalf("walkLimited: %d values, %v", len(found), err)
	}
	if off, _ := f.(io.Seeker).Seek(0, io.SeekCurrent); off > 65 {
		t.Errorf("read %d bytes of a file opened under a limit of 64", off)
	}
}

// A relative cwd (Gemini CLI documents "./mcp_tools") is resolved against
// the project folder of a project file, so the mapped entry is valid; in
// a user file it cannot be, and is dropped with a warning.
func TestRelativeCwdResolved(t *testing.T) {
	home, project := t.TempDir(), t.TempDir()
	const entry = `{"mcpServers": {"s": {"command": "python", "args": ["mcp_server.py"], "cwd": "./mcp_tools"}}}`
	writeFile(t, project, ".gemini/settings.json", entry)
	writeFile(t, home, ".gemini/settings.json", entry)
	entries, warnings := List(Options{Home: home, Projects: []string{project}, GOOS: "linux", Sources: []Source{SourceGemini}})
	if len(entries) != 2 || len(warnings) != 0 {
		t.Fatalf("entries %v warnings %v", entries, warnings)
	}
	for _, e := range entries {
		s, err := config.DecodeServer([]byte(`{"name":"s",` + string(e.Config)[1:]))
		if err != nil {
			t.Errorf("%s: mapped entry %s is invalid: %v", e.File, e.Config, err)
			continue
		}
		user := strings.HasPrefix(e.File, home)
		switch {
		case user && (s.Cwd != "" || !slices.ContainsFunc(e.Warnings, func(w string) bool { return strings.HasPrefix(w, "cwd:") })):
			t.Errorf("user file: cwd %q, warnings %q", s.Cwd, e.Warnings)
		case !user && s.Cwd != filepath.Join(project, "mcp_tools"):
			t.Errorf("project file: cwd %q", s.Cwd)
		}
	}
}
