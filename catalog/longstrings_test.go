package catalog

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"
)

// A ~/.claude.json whose history holds one 20 MiB string (a pasted file)
// still lists its servers, before and after it, and reading it allocates
// a few MiB: the string is cut short, never held whole.
func TestHugePasteInHistoryListsServers(t *testing.T) {
	home := t.TempDir()
	paste := strings.Repeat(`line of a pasted file, \"quoted\" \\ \u00e9\n`, (20<<20)/46)
	path := writeFile(t, home, ".claude.json", `{"mcpServers": {"before": {"command": "node"}}, "projects": {"/p": {"history": [{"display": "x", "pastedContents": {"1": {"content": "`+
		paste+`"}}}], "mcpServers": {"local": {"command": "python"}}}}, "tipsHistory": {}, "mcpServers": {"after": {"type": "http", "url": "https://example.com/mcp"}}}`)
	got, allocated := listClaudeCode(t, home)
	// A later duplicate key wins, as in the hosts: "after", not "before".
	if got["after"] != path || got["local"] != path+"#projects//p" || len(got) != 2 {
		t.Errorf("entries %v", got)
	}
	// Held whole, the string alone would be 20 MiB, and the decoder's
	// doubling buffer some 60 MiB allocated; cut, the walk allocates
	// about 4*MaxStringBytes whatever the string's length.
	if limit := uint64(6 * MaxStringBytes); allocated > limit {
		t.Errorf("listing a file with a %d-byte string allocated %d bytes, want under %d", len(paste), allocated, limit)
	}
	t.Logf("%d-byte string, %d bytes allocated", len(paste), allocated)
}

// Wherever the cut falls in a string of escapes (in a \uXXXX, after a
// backslash), the decoder is given valid JSON: the walk reads on and
// keeps the servers after it.
func TestCutLeavesNoEscapeHalfWritten(t *testing.T) {
	body := strings.Repeat(`\u00e9\"\\x`, (2*MaxStringBytes)/11)
	for pad := range 11 {
		doc := `{"history":"` + strings.Repeat("a", pad) + body + `","mcpServers":{"x":{"command":"a"}}}`
		got, err := walkJSON(strings.NewReader(doc), keyPath{"mcpServers"})
		if err != nil || len(got) != 1 || string(got[0].value) != `{"x":{"command":"a"}}` {
			t.Fatalf("pad %d: walkJSON: %v, %v", pad, got, err)
		}
	}
}

// A control character in the part of a string that is cut is still
// corruption, and the error gives its byte in the file, not in the
// decoder's shortened input.
func TestCutStringCorruptionAtFileOffset(t *testing.T) {
	head := `{"history":"` + strings.Repeat("a", 3*MaxStringBytes)
	doc := head + "\x01" + `","mcpServers":{}}`
	_, err := walkJSON(strings.NewReader(doc), keyPath{"mcpServers"})
	if want := fmt.Sprintf("near byte %d", len(head)); err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("walkJSON: %v, want an error %s", err, want)
	}
}

// A key over MaxStringBytes is refused, not read cut short (a cut key
// could name a project that is not there); a kept value holding a string
// over it is refused as a kept value over MaxKeptBytes.
func TestLongKeyAndKeptStringRefused(t *testing.T) {
	long := strings.Repeat("k", 2*MaxStringBytes)
	_, err := walkJSON(strings.NewReader(`{"projects":{"/`+long+`":{"mcpServers":{}}}}`), keyPath{"projects", "*", "mcpServers"})
	if err == nil || !strings.Contains(err.Error(), "a key near byte 13 is over") {
		t.Errorf("long key: %v", err)
	}
	_, err = walkJSON(strings.NewReader(`{"mcpServers":{"x":{"command":"`+long+`"}}}`), keyPath{"mcpServers"})
	if err == nil || !strings.Contains(err.Error(), `the value of "mcpServers" is over`) {
		t.Errorf("long kept string: %v", err)
	}
}

// A long string's cut part is left out, the rest of the input passed as
// it is: output offsets map back to the file's.
func TestStringCutterOffsets(t *testing.T) {
	in := `{"h":"` + strings.Repeat("a", 3*MaxStringBytes) + `","k":1}`
	c := &stringCutter{r: strings.NewReader(in)}
	buf := make([]byte, 64<<10)
	n, err := c.Read(buf)
	if err != nil || n != len(buf) {
		t.Fatal(n, err)
	}
	c.begin(buf[len(`{"h":`):]) // as boundedReader does: the unread, unfinished token
	rest, err := io.ReadAll(c)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	out.Write(buf)
	out.Write(rest)
	if len(c.cuts) != 1 {
		t.Fatalf("%d cuts", len(c.cuts))
	}
	k := c.cuts[0]
	if !strings.HasSuffix(out.String(), `","k":1}`) || int64(out.Len())+k.dropped != int64(len(in)) {
		t.Fatalf("output of %d bytes, %d dropped, input %d", out.Len(), k.dropped, len(in))
	}
	if got, want := c.fileOffset(int64(out.Len())-1), int64(len(in)-1); got != want {
		t.Errorf("file offset of the last byte %d, want %d", got, want)
	}
	if c.fileOffset(k.at-1) != k.at-1 || !c.cutIn(0, k.at+1) || c.cutIn(k.at, int64(out.Len())) {
		t.Errorf("cut %+v: offsets or cutIn wrong", k)
	}
}

// Whatever a long skipped string holds (escapes of every kind, JSON's
// \u forms of <, > and &, runes of four bytes), it is cut where no escape
// is half written: the walk reads past it and keeps what follows.
func FuzzCutString(f *testing.F) {
	for _, s := range []string{"a", `"`, `\`, "é", "\U0001F600", "\n\t", `\u`, "<>&", "\u2028", "ab\"c\\d<"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if s == "" || len(s) > 64 {
			return
		}
		enc, err := json.Marshal(strings.Repeat(s, MaxStringBytes/len(s)+1))
		if err != nil {
			t.Fatal(err)
		}
		doc := `{"history":` + string(enc) + `,"mcpServers":{"x":{"command":"a"}}}`
		got, err := walkJSON(strings.NewReader(doc), keyPath{"mcpServers"})
		if err != nil || len(got) != 1 || string(got[0].value) != `{"x":{"command":"a"}}` {
			t.Fatalf("%q: walkJSON: %v, %v", s, got, err)
		}
	})
}
