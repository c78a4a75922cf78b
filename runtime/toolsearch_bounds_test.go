package runtime

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/openprogram/mcpvisor/internal/toolsearch"
	"github.com/openprogram/mcpvisor/tools"
)

// searchToolsAnswer calls search_tools and decodes its answer.
func searchToolsAnswer(t *testing.T, rt *testRuntime, args map[string]any) (string, searchAnswer) {
	t.Helper()
	res, err := rt.CallTool(context.Background(), SearchToolName, args)
	if err != nil || res.IsError || len(res.Content) != 1 {
		t.Fatalf("search_tools %v: %+v, %v", args, res, err)
	}
	var a searchAnswer
	if err := json.Unmarshal([]byte(res.Content[0].Text), &a); err != nil {
		t.Fatalf("search_tools answer is not JSON: %v", err)
	}
	return res.Content[0].Text, a
}

// A search_tools answer is bounded however large the matching tools are:
// ten tools with 1 MB descriptions (one with a 100 KB schema) give an
// answer within searchAnswerBytes, best match first, each description
// cut with a marker, the big schema replaced by a note, and the answer
// says what it left out.
func TestSearchToolsAnswerBounded(t *testing.T) {
	rt := start(t, Options{ToolSearch: ToolSearch{Enabled: true, Limit: 10}})
	huge := strings.Repeat("word ", 200<<10) // 1 MB
	var list []tools.Tool
	for i := range 10 {
		tl := searchTool(fmt.Sprintf("big__lookup_%d", i), "Look up the invoices. "+huge, nil)
		if i == 0 {
			props := map[string]any{}
			for p := range 1000 {
				props[fmt.Sprintf("field_%04d", p)] = map[string]any{"type": "string", "description": strings.Repeat("x", 80)}
			}
			tl.InputSchema, _ = json.Marshal(map[string]any{"type": "object", "properties": props})
		}
		list = append(list, tl)
	}
	if err := rt.Registry().SetServer("big", list); err != nil {
		t.Fatal(err)
	}
	awaitSearch(t, rt, "big__lookup_0", "big__lookup_0")
	text, a := searchToolsAnswer(t, rt, map[string]any{"query": "look up invoices"})
	if len(text) > searchAnswerBytes {
		t.Errorf("the answer is %d bytes, want at most %d", len(text), searchAnswerBytes)
	}
	if len(a.Tools) == 0 || len(a.Tools) == 10 || a.Note == "" || !strings.Contains(a.Note, "left out") {
		t.Fatalf("answer holds %d tools with note %q, want some and a note of the rest", len(a.Tools), a.Note)
	}
	for _, at := range a.Tools {
		if len(at.Description) > searchDescriptionBytes+100 || !strings.Contains(at.Description, "description cut") {
			t.Errorf("%s: a %d-byte description, want it cut with a marker", at.Name, len(at.Description))
		}
		if !json.Valid(at.InputSchema) {
			t.Errorf("%s: input schema %s is not JSON", at.Name, at.InputSchema)
		}
	}
	if i := slices.IndexFunc(a.Tools, func(at searchAnswerTool) bool { return at.Name == "big__lookup_0" }); i >= 0 &&
		(len(a.Tools[i].InputSchema) > 1024 || !strings.Contains(string(a.Tools[i].InputSchema), "left out")) {
		t.Errorf("the 100 KB schema is answered as %d bytes, want a note", len(a.Tools[i].InputSchema))
	}
}

// A tool gone from the registry is never found, even by an index built
// before it went (the rebuild runs in the background): here an index of
// the old list is put back by hand after the registry changed.
func TestSearchToolsDropsStaleMatches(t *testing.T) {
	rt := start(t, Options{})
	old := []tools.Tool{searchTool("web__take_screenshot", "Take a screenshot of the page.", nil), searchTool("web__navigate", "Go to a page.", nil)}
	if err := rt.Registry().SetServer("web", old); err != nil {
		t.Fatal(err)
	}
	awaitSearch(t, rt, "take a screenshot", "web__take_screenshot")
	renamed := searchTool("web__take_screenshot", "Take a screenshot of the page.", nil)
	renamed.OriginalName = "screenshot_v2" // same registry name, another tool
	if err := rt.Registry().SetServer("web", []tools.Tool{old[1]}); err != nil {
		t.Fatal(err)
	}
	awaitSearch(t, rt, "take a screenshot", "")
	rt.search.Store(toolsearch.Build(old)) // as if the rebuild had not run yet
	if got := matchNames(rt.SearchTools("take a screenshot", 5)); len(got) != 0 {
		t.Errorf("SearchTools found %v, which the registry no longer holds", got)
	}
	if err := rt.Registry().SetServer("web", []tools.Tool{old[1], renamed}); err != nil {
		t.Fatal(err)
	}
	awaitSearch(t, rt, "take a screenshot", "web__take_screenshot")
	rt.search.Store(toolsearch.Build(old))
	if got := matchNames(rt.SearchTools("take a screenshot", 5)); len(got) != 0 {
		t.Errorf("SearchTools found %v, indexed as another tool than the one registered", got)
	}
}

// A tool a PATCH filters out is not found by SearchTools, the search
// route or search_tools once the PATCH has answered.
func TestSearchToolsAfterPatchDeny(t *testing.T) {
	rt := start(t, Options{ToolSearch: ToolSearch{Enabled: true}}, exampleServer("ex"))
	rt.waitReady(t, "ex")
	awaitSearch(t, rt, "ex__env", "ex__env")
	api := newAPI(t, rt)
	api.do("PATCH", "/api/mcp/servers/ex", `{"tools":{"deny":["env"]}}`).want(t, http.StatusOK)
	if got := matchNames(rt.SearchTools("ex__env", 5)); slices.Contains(got, "ex__env") {
		t.Errorf("SearchTools after the PATCH = %v", got)
	}
	if a := api.do("GET", "/api/mcp/tools/search?q=ex__env", ""); strings.Contains(string(a.body), `"ex__env"`) {
		t.Errorf("GET /api/mcp/tools/search after the PATCH = %s", a.body)
	}
	if text, _ := searchToolsAnswer(t, rt, map[string]any{"query": "ex__env"}); strings.Contains(text, `"ex__env"`) {
		t.Errorf("search_tools after the PATCH = %s", text)
	}
}

// search_tools leaves the pinned tools out (they are in the model's list)
// and still answers its limit of others; SearchTools keeps them. The
// runtime keeps its own copy of Pinned: the host changing its slice
// after Start changes nothing.
func TestSearchToolsLeavesOutPins(t *testing.T) {
	pins := []string{"fs__read_file"}
	rt := start(t, Options{ToolSearch: ToolSearch{Enabled: true, Pinned: pins, Limit: 2}})
	pins[0] = "fs__write_file"
	if err := rt.Registry().SetServer("fs", []tools.Tool{
		searchTool("fs__read_file", "Read a file.", nil), searchTool("fs__read_dir", "Read a directory.", nil),
		searchTool("fs__write_file", "Write a file.", nil),
	}); err != nil {
		t.Fatal(err)
	}
	awaitSearch(t, rt, "fs__read_file", "fs__read_file")
	if got := matchNames(toolMatches(rt.ModelTools())); !slices.Equal(got, []string{SearchToolName, "fs__read_file"}) {
		t.Errorf("ModelTools = %v after the host changed its Pinned slice, want search_tools and fs__read_file", got)
	}
	if got := matchNames(rt.SearchTools("read a file", 5)); !slices.Contains(got, "fs__read_file") {
		t.Errorf("SearchTools = %v, want the pinned fs__read_file among them", got)
	}
	_, a := searchToolsAnswer(t, rt, map[string]any{"query": "read a file"})
	var names []string
	for _, at := range a.Tools {
		names = append(names, at.Name)
	}
	if slices.Contains(names, "fs__read_file") || len(names) != 2 {
		t.Errorf("search_tools = %v, want the limit (2) of tools other than the pinned fs__read_file", names)
	}
}

// escapedTool is a tool whose description is 8 KiB of c and whose input
// schema is just under searchSchemaBytes raw, its description made of
// '<': characters that take more bytes in JSON than raw.
func escapedTool(name string, c string) ToolMatch {
	schema := json.RawMessage(`{"type":"object","description":"` + strings.Repeat("<", searchSchemaBytes-40) + `"}`)
	return ToolMatch{Tool: tools.Tool{Name: name, Description: strings.Repeat(c, searchDescriptionBytes), InputSchema: schema}}
}

// The bounds of a search_tools answer hold for its encoding: characters
// that JSON escapes into six bytes ('<', '>' and '&' under the HTML
// escapes, control bytes, invalid UTF-8) count as such, for the first
// tool too, and the note counts only the cuts of the tools it holds.
func TestSearchToolsAnswerBoundedEncoded(t *testing.T) {
	for _, c := range []string{"<", "&", "\x01", "\xff"} {
		t.Run(fmt.Sprintf("%q", c), func(t *testing.T) {
			var matches []ToolMatch
			for i := range 10 {
				matches = append(matches, escapedTool(fmt.Sprintf("x__t%d", i), c))
			}
			text := answerText(matches[:1])
			if len(text) > searchAnswerBytes {
				t.Errorf("the answer of one tool is %d bytes, want at most %d", len(text), searchAnswerBytes)
			}
			text = answerText(matches)
			if len(text) > searchAnswerBytes {
				t.Errorf("the answer of ten tools is %d bytes, want at most %d", len(text), searchAnswerBytes)
			}
			var a searchAnswer
			if err := json.Unmarshal(text, &a); err != nil {
				t.Fatalf("the answer is not JSON: %v", err)
			}
			if len(a.Tools) == 0 || len(a.Tools) == 10 {
				t.Fatalf("answer holds %d tools, want some, not all", len(a.Tools))
			}
			cuts := 0
			for _, at := range a.Tools {
				if strings.Contains(at.Description, "description cut") {
					cuts++
				}
				if strings.Contains(string(at.InputSchema), "left out of this answer") {
					cuts++
				}
				enc, _ := encodeJSON(at.Description)
				if len(enc) > searchDescriptionBytes+100 {
					t.Errorf("%s: a description of %d bytes encoded, want at most about %d", at.Name, len(enc), searchDescriptionBytes)
				}
				if enc, _ := encodeJSON(at.InputSchema); len(enc) > searchSchemaBytes {
					t.Errorf("%s: a schema of %d bytes encoded, want at most %d", at.Name, len(enc), searchSchemaBytes)
				}
			}
			want := fmt.Sprintf("%d more matching tools left out", 10-len(a.Tools))
			saysCuts := strings.Contains(a.Note, fmt.Sprintf("; %d descriptions or input schemas cut", cuts))
			if !strings.Contains(a.Note, want) || saysCuts != (cuts > 0) || (cuts == 0 && strings.Contains(a.Note, "cut")) {
				t.Errorf("note %q, want %q and the %d cuts of the %d tools answered", a.Note, want, cuts, len(a.Tools))
			}
		})
	}
}

// A '<' reaches the model as one byte, not as the six of \u003c.
func TestSearchToolsAnswerKeepsHTMLCharacters(t *testing.T) {
	text := answerText([]ToolMatch{{Tool: tools.Tool{Name: "x__a", Description: "a <b> & c", InputSchema: json.RawMessage(`{"description":"<x>"}`)}}})
	if !strings.Contains(string(text), `"a <b> & c"`) || !strings.Contains(string(text), `"<x>"`) {
		t.Errorf("answer %s, want '<', '>' and '&' as they are", text)
	}
}
