package toolsearch

import (
	"testing"

	"github.com/openprogram/mcpvisor/tools"
)

// A word in the name of nearly every tool of a server (Notion's "API-")
// is the server's prefix: it does not make a query that says it ("API
// requests") about that server's tools, whose names say "page" too.
func TestNamePrefixIsServerContext(t *testing.T) {
	list := []tools.Tool{
		tool("n__API-retrieve-a-page", "Retrieve a page", ""),
		tool("n__API-move-page", "Move a page", ""),
		tool("n__API-post-page", "Create a page", ""),
		tool("n__API-get-user", "Retrieve a user", ""),
		tool("n__API-post-search", "Search by title", ""),
		tool("b__browser_network_requests", "Returns a numbered list of network requests since loading the page.", ""),
		tool("b__browser_click", "Perform click on a web page", ""),
	}
	idx := Build(list)
	if got := names(idx.Search("what API requests did the page send", 3)); len(got) == 0 || got[0] != "b__browser_network_requests" {
		t.Errorf("Search = %v, want b__browser_network_requests first", got)
	}
	if got := idx.nameTerms[0]; len(got) != 2 || got[0] != "retriev" || got[1] != "page" {
		t.Errorf("name terms of n__API-retrieve-a-page = %q, want the prefix left out", got)
	}
}

// A query that names a server ("in wiki") prefers that server's tools to
// another's that match the rest of it better.
func TestNamedServerPreferred(t *testing.T) {
	list := []tools.Tool{
		tool("wiki__search", "Search the articles for text.", ""),
		tool("wiki__edit", "Edit an article.", ""),
		tool("wiki__history", "The changes of an article.", ""),
		tool("docs__search_pages", "Search the pages of the documentation for text.", ""),
		tool("docs__read_page", "Read a page.", ""),
	}
	idx := Build(list)
	if got := names(idx.Search("search pages in the wiki", 2)); len(got) == 0 || got[0] != "wiki__search" {
		t.Errorf("Search = %v, want wiki__lookup first", got)
	}
}

// Text in a script without spaces between words is found by its words,
// however long the run (before, a run past 64 bytes was dropped whole).
func TestCJKText(t *testing.T) {
	long := "读取文件内容并返回给调用者，文件路径必须在允许的目录之内，否则返回错误信息给用户" // one run, over 64 bytes
	idx := Build([]tools.Tool{tool("fs__read", long, ""), tool("fs__write", "Write a file.", "")})
	if got := names(idx.Search("文件", 1)); len(got) != 1 || got[0] != "fs__read" {
		t.Errorf("Search(文件) = %v, want fs__read", got)
	}
}

// A word that nearly every tool of a server says outside its name (the
// "Error Responses: 400: Bad request" ending every description of a
// server generated from an API spec) is its boilerplate: it does not make
// every tool of that server match a query that says it ("were there
// any errors"), while a word its tool names tell tools apart by ("file" on a
// filesystem server) keeps its weight.
func TestServerBoilerplate(t *testing.T) {
	const tail = "\nError Responses:\n400: Bad request"
	list := []tools.Tool{
		tool("n__retrieve-a-page", "Retrieve a page"+tail, ""),
		tool("n__move-page", "Move a page"+tail, ""),
		tool("n__get-user", "Retrieve a user"+tail, ""),
		tool("n__post-search", "Search by title"+tail, ""),
		tool("n__delete-block", "Delete a block"+tail, ""),
		tool("b__console_messages", "Returns all console messages: errors, warnings and logs of the page.", ""),
		tool("b__click", "Perform click on a web page", ""),
		tool("f__read_file", "Read a file.", ""),
		tool("f__write_file", "Write a file.", ""),
		tool("f__list_directory", "List the files of a directory.", ""),
		tool("f__move_file", "Move a file.", ""),
	}
	idx := Build(list)
	if got := names(idx.Search("were there any errors", 1)); len(got) == 0 || got[0] != "b__console_messages" {
		t.Errorf("Search = %v, want b__console_messages first", got)
	}
	a := newAnalyzer()
	var docs []*doc
	for _, tl := range list {
		docs = append(docs, analyse(a, tl))
	}
	_, common := serverCommon(docs)
	if !common["n"]["error"] || !common["n"]["request"] || common["f"]["file"] {
		t.Errorf("boilerplate = %v, want n's error and request, not f's file", common)
	}
}
