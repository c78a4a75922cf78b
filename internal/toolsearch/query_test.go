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
