package toolsearch

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/openprogram/mcpvisor/tools"
)

func tool(name, desc, schema string) tools.Tool {
	server, original, _ := strings.Cut(name, "__")
	if schema == "" {
		schema = `{"type":"object"}`
	}
	return tools.NewTool(name, server, original, desc, json.RawMessage(schema), nil)
}

func names(ms []Match) []string {
	var out []string
	for _, m := range ms {
		out = append(out, m.Tool.Name)
	}
	return out
}

func TestWords(t *testing.T) {
	cases := map[string][]string{
		"browser_take_screenshot": {"browser", "take", "screenshot"},
		"getFileInfo":             {"get", "file", "info"},
		"API-post-search":         {"api", "post", "search"},
		"HTTPServer.listen":       {"http", "server", "listen"},
		"base64 héllo":            {"base", "64", "héllo"},
		"读取文件内容":                  {"读取", "取文", "文件", "件内", "内容"},
		"API文件 x":                 {"api", "文件", "x"},
		"文":                       {"文"},
		"":                        nil,
	}
	for in, want := range cases {
		if got := slices.Collect(words(in)); !slices.Equal(got, want) {
			t.Errorf("words(%q) = %q, want %q", in, got, want)
		}
	}
	if got := slices.Collect(words(strings.Repeat("x", maxWordBytes+1) + " ok")); !slices.Equal(got, []string{"ok"}) {
		t.Errorf("a word past maxWordBytes is kept: %q", got)
	}
}

func TestTerms(t *testing.T) {
	got := newAnalyzer().terms(nil, "Please could you read the Files in my directories", 100)
	if want := []string{"read", "file", "directori"}; !slices.Equal(got, want) {
		t.Errorf("terms = %q, want %q", got, want)
	}
	if got := newAnalyzer().terms(nil, "one two three four", 2); len(got) != 2 {
		t.Errorf("terms with max 2 = %q", got)
	}
}

// Every word of the synonym table is a term of its own (none is a stop
// word, which would silently drop out of its group), and every group keeps
// at least two distinct terms; every phrase of two words or more
// stands for a word that is a term.
func TestSynonymTable(t *testing.T) {
	a := newAnalyzer()
	for _, g := range synonymGroups() {
		terms := map[string]bool{}
		for _, w := range g {
			term := a.term(w)
			if term == "" {
				t.Errorf("synonym %q (group %v) is a stop word", w, g)
			}
			terms[term] = true
		}
		if len(terms) < 2 {
			t.Errorf("group %v has fewer than two distinct terms", g)
		}
	}
	for _, p := range queryPhrases() {
		if a.term(p.word) == "" || len(p.words) < 2 {
			t.Errorf("phrase %q stands for %q, a stop word, or is one word", p.words, p.word)
		}
	}
}

var catalogue = []tools.Tool{
	tool("fs__read_text_file", "Read the complete contents of a file as text.", `{"type":"object","properties":{"path":{"type":"string","description":"the location of it"}}}`),
	tool("fs__write_file", "Create a new file or overwrite one with new content.", `{"type":"object","properties":{"path":{"type":"string"},"content":{"type":"string"}}}`),
	tool("fs__delete_directory", "Delete a directory and everything in it.", ""),
	tool("web__browser_take_screenshot", "Take a screenshot of the current page.", `{"type":"object","properties":{"type":{"type":"string","enum":["png","jpeg"],"description":"image format"}}}`),
	tool("web__browser_navigate", "Navigate to a URL.", `{"type":"object","properties":{"url":{"type":"string","description":"the address to open"}}}`),
	tool("web__browser_type", "Type text into an editable element.", `{"type":"object","properties":{"text":{"type":"string"}}}`),
	tool("mail__send_message", "Send an email message.", `{"type":"object","properties":{"to":{"type":"string"},"attachment_path":{"type":"string","description":"a file to attach"}}}`),
}

func TestSearchRanks(t *testing.T) {
	idx := Build(catalogue)
	cases := []struct{ query, want string }{
		{"read a file", "fs__read_text_file"},               // stems, stop words
		{"screenshots", "web__browser_take_screenshot"},     // plural
		{"remove the folder", "fs__delete_directory"},       // only synonyms match
		{"go to a website", "web__browser_navigate"},        // synonyms
		{"fs__write_file", "fs__write_file"},                // the exact name
		{"browser_type", "web__browser_type"},               // the original name
		{"jpeg", "web__browser_take_screenshot"},            // an enum value
		{"location", "fs__read_text_file"},                  // a parameter description
		{"send an email with a file", "mail__send_message"}, // name beats a parameter's description
	}
	for _, c := range cases {
		got := names(idx.Search(c.query, 3))
		if len(got) == 0 || got[0] != c.want {
			t.Errorf("Search(%q) = %v, want %s first", c.query, got, c.want)
		}
	}
	if got := idx.Search("kubernetes", 5); got != nil {
		t.Errorf("a query matching nothing found %v", names(got))
	}
	if got := idx.Search("file", 2); len(got) != 2 {
		t.Errorf("limit 2 gave %d matches", len(got))
	}
	var empty *Index
	if empty.Search("file", 5) != nil || idx.Search("file", 0) != nil {
		t.Error("a nil index or a zero limit found something")
	}
}

// A word said literally outranks a tool that matches it through a
// synonym, and a synonym weighs no more than the word itself: "type" is in
// every schema here (so common, low idf), "write" rare, yet the tool
// named type wins.
func TestSynonymWeighsLess(t *testing.T) {
	list := []tools.Tool{
		tool("a__type_text", "Type text.", ""),
		tool("b__write_file", "Write a file.", ""),
	}
	for i := range 20 {
		list = append(list, tool(fmt.Sprintf("c__other_%d", i), "Something else.", `{"type":"object","properties":{"type":{"type":"string"}}}`))
	}
	if got := names(Build(list).Search("type", 2)); len(got) == 0 || got[0] != "a__type_text" {
		t.Errorf("Search(type) = %v, want a__type_text first", got)
	}
	if got := names(Build(catalogue).Search("write", 2)); len(got) == 0 || got[0] != "fs__write_file" {
		t.Errorf("Search(write) = %v, want fs__write_file (said literally) first", got)
	}
}

// A query is read up to MaxQueryBytes and MaxQueryTerms distinct terms.
func TestQueryBounds(t *testing.T) {
	idx := Build(catalogue)
	long := strings.Repeat(" ", MaxQueryBytes) + "screenshot"
	if got := idx.Search(long, 5); got != nil {
		t.Errorf("a word past MaxQueryBytes counted: %v", names(got))
	}
	var many []string
	for i := range MaxQueryTerms {
		many = append(many, fmt.Sprintf("zz%c%c", 'a'+i/26, 'a'+i%26))
	}
	if got := idx.Search(strings.Join(many, " ")+" screenshot", 5); got != nil {
		t.Errorf("a term past MaxQueryTerms counted: %v", names(got))
	}
	if got := idx.Search(strings.Join(many[1:], " ")+" screenshot", 5); len(got) == 0 {
		t.Error("the last term within MaxQueryTerms did not count")
	}
}

// The schema walk reads at most maxSchemaProps properties, no deeper than
// maxSchemaDepth.
func TestWalkSchemaBounds(t *testing.T) {
	props := map[string]any{}
	for i := range 2 * maxSchemaProps {
		props[fmt.Sprintf("p%04d", i)] = map[string]any{"type": "string"}
	}
	raw, _ := json.Marshal(map[string]any{"properties": props})
	if got := len(walkSchema(raw).names); got != maxSchemaProps {
		t.Errorf("walked %d properties, want %d", got, maxSchemaProps)
	}
	var node any = map[string]any{"type": "string", "description": "deepest"}
	for i := range maxSchemaDepth + 3 {
		node = map[string]any{"properties": map[string]any{fmt.Sprintf("level%d", i): node}}
	}
	raw, _ = json.Marshal(node)
	st := walkSchema(raw)
	if len(st.names) != maxSchemaDepth+1 || slices.Contains(st.descs, "deepest") {
		t.Errorf("deep schema walked to %v %v, want %d levels", st.names, st.descs, maxSchemaDepth+1)
	}
	if st := walkSchema(json.RawMessage(`not json`)); st.names != nil {
		t.Errorf("bad schema gave %v", st.names)
	}
}

// An index is read-only once built: concurrent searches share it.
func TestSearchConcurrent(t *testing.T) {
	idx := Build(catalogue)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 100 {
				if got := idx.Search("take a screenshot of the page", 1); len(got) != 1 {
					t.Errorf("concurrent search found %d", len(got))
					return
				}
			}
		})
	}
	wg.Wait()
}

func TestNameHint(t *testing.T) {
	for w, want := range map[string]string{
		"notes.txt": "file", "src/main.go": "file", "(report.docx)": "file", "archive.tar.gz,": "file",
		"photo.JPG": "file image", "talk.mp3": "file audio", "clip.mp4": "file video",
		"example.com": "web", "docs.python.org.": "web",
		"e.g.": "", "3.14": "", "v1.2.3": "", "https://x.com/a": "", "hello": "", ".bashrc": "", "end.": "", "a.verylongext": "",
	} {
		if got := nameHint(w); got != want {
			t.Errorf("nameHint(%q) = %q, want %q", w, got, want)
		}
	}
	// A file name asks for files even when the query does not say "file".
	idx := Build(catalogue)
	if got := names(idx.Search("open notes.txt", 1)); len(got) == 0 || got[0] != "fs__read_text_file" {
		t.Errorf("Search(open notes.txt) = %v, want fs__read_text_file", got)
	}
}

// A tool whose whole name the query says (here through synonyms: show →
// list, folder → directory) outranks one that says the query's words
// again and again in its description and half its name (show → open).
func TestNameCoverage(t *testing.T) {
	list := []tools.Tool{
		tool("a__open_nodes", "Show a folder: show the folder, folder by folder, and show each.", ""),
		tool("b__list_directory", "Get a detailed listing of the entries at a path.", ""),
	}
	for i := range 10 {
		list = append(list, tool(fmt.Sprintf("x__other_%d", i), "Something unrelated.", ""))
	}
	if got := names(Build(list).Search("show the folder", 2)); len(got) == 0 || got[0] != "b__list_directory" {
		t.Errorf("Search(show the folder) = %v, want b__list_directory first", got)
	}
}
