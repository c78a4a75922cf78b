package toolsearch

import (
	"testing"

	"github.com/openprogram/mcpvisor/tools"
)

// A phrase stands for its word of the synonym table, and its words apart
// do not count: "logged in" is about signing in, not about logs.
func TestQueryPhrases(t *testing.T) {
	list := []tools.Tool{
		tool("app__get_current_account", "Return the account you are authenticated as.", ""),
		tool("app__toggle_logging", "Turn logging on or off.", ""),
		tool("app__list_users", "List the users.", ""),
	}
	idx := Build(list)
	if got := names(idx.Search("who am I logged in as", 1)); len(got) == 0 || got[0] != "app__get_current_account" {
		t.Errorf("Search = %v, want app__get_current_account first", got)
	}
	terms := queryTerms(newAnalyzer(), "how big is it", idx.phrases, idx.knows)
	if len(terms) != 1 || terms[0] != (queryTerm{"size", 1}) {
		t.Errorf("terms of %q = %v, want size alone", "how big is it", terms)
	}
}

// Two words of a query that spell a compound the index knows ("drop
// down") also ask for it, at a synonym's weight; one it does not know
// adds nothing.
func TestQueryCompounds(t *testing.T) {
	list := []tools.Tool{
		tool("web__select_option", "Select an option in a dropdown.", ""),
		tool("web__drag", "Drag an element and drop it onto another.", ""),
		tool("web__scroll_down", "Scroll the page down.", ""),
	}
	idx := Build(list)
	if got := names(idx.Search("pick Canada from the drop down", 1)); len(got) == 0 || got[0] != "web__select_option" {
		t.Errorf("Search = %v, want web__select_option first", got)
	}
	terms := queryTerms(newAnalyzer(), "scroll down", idx.phrases, idx.knows)
	if len(terms) != 1 || terms[0].term != "scroll" {
		t.Errorf("terms of %q = %v, want scroll alone", "scroll down", terms)
	}
}

// A question about how things are prefers the tools whose hints say they
// only read ("when was it changed" is not a request to change it); a
// request, polite or not, is left alone.
func TestQuestionsPreferReading(t *testing.T) {
	yes, no := true, false
	edit := tool("fs__edit_file", "Edit the lines of a text file.", "")
	edit.Annotations = &tools.Annotations{ReadOnlyHint: &no}
	info := tool("fs__file_info", "Size of a file and when it was last changed.", "")
	info.Annotations = &tools.Annotations{ReadOnlyHint: &yes}
	idx := Build([]tools.Tool{edit, info, tool("fs__list", "List a directory.", "")})
	if got := names(idx.Search("when was the file changed", 1)); len(got) == 0 || got[0] != "fs__file_info" {
		t.Errorf("Search = %v, want fs__file_info first", got)
	}
	for _, q := range []string{"change the file", "can you change the file?"} {
		if got := names(idx.Search(q, 1)); len(got) == 0 || got[0] != "fs__edit_file" {
			t.Errorf("Search(%q) = %v, want fs__edit_file first", q, got)
		}
	}
	for q, want := range map[string]bool{
		"what files are here": true, "how big is it": true, "do you know Carol": true, "is it done?": true,
		"delete it": false, "can you delete it": false, "how do I rename a file": false, "do a backup": false,
		"can you delete it?": false, "could you create a new branch?": false, "please remove the file?": false,
		"how do I delete a file?": false, "would you rename it?": false, "how can I undo that?": false,
		"the build failed?": true, "how many files are there?": true,
	} {
		if got := asksForFacts(q); got != want {
			t.Errorf("asksForFacts(%q) = %v, want %v", q, got, want)
		}
	}
}
