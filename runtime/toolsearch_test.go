package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/openprogram/mcpvisor/internal/testutil"
	"github.com/openprogram/mcpvisor/tools"
)

// searchWait bounds the wait for the background index to follow the
// registry (a rebuild takes milliseconds).
const searchWait = 10 * time.Second

func searchTool(name, desc string, called *string) tools.Tool {
	server, original, _ := strings.Cut(name, "__")
	return tools.NewTool(name, server, original, desc, json.RawMessage(`{"type":"object","properties":{"path":{"type":"string","description":"which one"}}}`),
		tools.ExecutorFunc(func(context.Context, any) (tools.Result, error) {
			if called != nil {
				*called = name
			}
			return tools.Result{Content: []tools.Content{{Type: tools.ContentText, Text: "called " + name}}}, nil
		}))
}

func matchNames(ms []ToolMatch) []string {
	var out []string
	for _, m := range ms {
		out = append(out, m.Name)
	}
	return out
}

// awaitSearch waits until SearchTools(query) puts want first ("" : finds
// nothing).
func awaitSearch(t *testing.T, rt *testRuntime, query, want string) {
	t.Helper()
	var got []string
	if !testutil.Within(searchWait, func() bool {
		got = matchNames(rt.SearchTools(query, 5))
		return (want == "" && got == nil) || (len(got) > 0 && got[0] == want)
	}) {
		t.Fatalf("SearchTools(%q) = %v, want %q first", query, got, want)
	}
}

// The index follows the registry (a tool registered is found, one gone is
// not), holds only the model's tools, and limit takes its default and its
// cap.
func TestSearchToolsFollowsRegistry(t *testing.T) {
	rt := start(t, Options{})
	appOnly := searchTool("web__refresh_screenshot", "Refresh the screenshot panel of the app.", nil)
	appOnly.Visibility = []string{tools.VisibleToApp}
	if err := rt.Registry().SetServer("web", []tools.Tool{searchTool("web__take_screenshot", "Take a screenshot of the page.", nil), appOnly}); err != nil {
		t.Fatal(err)
	}
	awaitSearch(t, rt, "capture the screen", "web__take_screenshot")
	if got := matchNames(rt.SearchTools("web__refresh_screenshot", 5)); slices.Contains(got, appOnly.Name) {
		t.Errorf("an app-only tool is found: %v", got)
	}
	rt.Registry().RemoveServer("web")
	awaitSearch(t, rt, "capture the screen", "")

	var many []tools.Tool
	for i := range MaxSearchLimit + 10 {
		many = append(many, searchTool(fmt.Sprintf("fs__read_file_%02d", i), "Read a file.", nil))
	}
	if err := rt.Registry().SetServer("fs", many); err != nil {
		t.Fatal(err)
	}
	awaitSearch(t, rt, "read a file", "fs__read_file_00")
	for _, c := range []struct{ limit, want int }{{0, defaultSearchLimit}, {-1, defaultSearchLimit}, {3, 3}, {MaxSearchLimit + 1, MaxSearchLimit}} {
		if got := len(rt.SearchTools("read a file", c.limit)); got != c.want {
			t.Errorf("SearchTools limit %d gave %d matches, want %d", c.limit, got, c.want)
		}
	}
}

// Deferred mode off, ModelTools is Tools and search_tools does not exist;
// on, it is search_tools and the pinned tools, search_tools answers with
// names, descriptions and schemas, and an unpinned tool is called by name.
func TestModelToolsDeferred(t *testing.T) {
	list := []tools.Tool{
		searchTool("fs__read_file", "Read a file.", nil),
		searchTool("fs__read_dir", "List a directory.", nil),
		searchTool("fs__write_file", "Write a file.", nil),
		searchTool("web__navigate", "Go to a web page.", nil),
		searchTool("fs__delete_file", "Delete a file.", nil),
		searchTool("fs__make_dir", "Make a directory.", nil),
	}
	off := start(t, Options{})
	if err := off.Registry().SetServer("fs", list); err != nil {
		t.Fatal(err)
	}
	if got, want := matchNames(toolMatches(off.ModelTools())), matchNames(toolMatches(off.Tools())); !slices.Equal(got, want) || len(got) != len(list) {
		t.Errorf("ModelTools with the mode off = %v, want Tools %v", got, want)
	}
	if _, err := off.CallTool(context.Background(), SearchToolName, map[string]any{"query": "x"}); !errors.Is(err, tools.ErrUnknownTool) {
		t.Errorf("search_tools with the mode off: %v, want ErrUnknownTool", err)
	}

	rt := start(t, Options{ToolSearch: ToolSearch{Enabled: true, Pinned: []string{"fs__read_*", "nothing__matches"}, Limit: 2}})
	var called string
	list[3] = searchTool("web__navigate", "Go to a web page.", &called)
	if err := rt.Registry().SetServer("fs", list); err != nil {
		t.Fatal(err)
	}
	model := rt.ModelTools()
	if got, want := matchNames(toolMatches(model)), []string{SearchToolName, "fs__read_dir", "fs__read_file"}; !slices.Equal(got, want) {
		t.Fatalf("ModelTools = %v, want %v", got, want)
	}
	if !model[0].ForModel() || model[0].ForApp() || !json.Valid(model[0].InputSchema) {
		t.Errorf("search_tools is %+v, want a model-only tool with a valid schema", model[0])
	}
	awaitSearch(t, rt, "open a website", "web__navigate")

	answer := func(args map[string]any) (tools.Result, []map[string]json.RawMessage) {
		t.Helper()
		res, err := rt.CallTool(context.Background(), SearchToolName, args)
		if err != nil || len(res.Content) != 1 {
			t.Fatalf("search_tools %v: %+v, %v", args, res, err)
		}
		var out struct{ Tools []map[string]json.RawMessage }
		if !res.IsError {
			if err := json.Unmarshal([]byte(res.Content[0].Text), &out); err != nil {
				t.Fatalf("search_tools answer %q: %v", res.Content[0].Text, err)
			}
		}
		return res, out.Tools
	}
	_, found := answer(map[string]any{"query": "open a website"})
	if len(found) == 0 || string(found[0]["name"]) != `"web__navigate"` || string(found[0]["description"]) != `"Go to a web page."` ||
		string(found[0]["input_schema"]) != string(list[3].InputSchema) || len(found[0]) != 3 {
		t.Errorf("search_tools answer %v, want web__navigate first with its name, description and schema only", found)
	}
	if _, found := answer(map[string]any{"query": "a file or a directory"}); len(found) != 2 {
		t.Errorf("search_tools gave %d tools, want Options.ToolSearch.Limit (2)", len(found))
	}
	if _, found := answer(map[string]any{"query": "a file or a directory", "limit": 3}); len(found) != 3 {
		t.Errorf("search_tools limit 3 gave %d tools", len(found))
	}
	if _, found := answer(map[string]any{"query": "kubernetes"}); found == nil || len(found) != 0 {
		t.Errorf("search_tools for nothing gave %v, want an empty list", found)
	}
	for _, bad := range []map[string]any{{}, {"query": ""}, {"query": 3}, {"query": "x", "limit": 0},
		{"query": "x", "limit": MaxSearchLimit + 1}, {"query": strings.Repeat("x", MaxSearchQueryBytes+1)}} {
		if res, _ := answer(bad); !res.IsError {
			t.Errorf("search_tools %v: %+v, want an error result", bad, res)
		}
	}
	if _, err := rt.CallTool(context.Background(), "web__navigate", map[string]any{}); err != nil || called != "web__navigate" {
		t.Errorf("the unpinned web__navigate called by name: %v (called %q)", err, called)
	}
}

func toolMatches(list []tools.Tool) []ToolMatch {
	var out []ToolMatch
	for _, t := range list {
		out = append(out, ToolMatch{Tool: t})
	}
	return out
}

// A bad Options.ToolSearch fails Start, naming what is wrong.
func TestToolSearchOptionsInvalid(t *testing.T) {
	for _, c := range []struct {
		ts   ToolSearch
		want string
	}{
		{ToolSearch{Enabled: true, Pinned: []string{"ok", "fs__[read"}}, `Pinned[1] "fs__[read"`},
		{ToolSearch{Enabled: true, Limit: MaxSearchLimit + 1}, "Limit 51"},
		{ToolSearch{Limit: -1}, "Limit -1"},
	} {
		rt, err := Start(context.Background(), Options{StateDir: t.TempDir(), ToolSearch: c.ts})
		if err == nil {
			_ = rt.Shutdown(context.Background())
		}
		if !errors.Is(err, ErrInvalidOptions) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Start with %+v: %v, want ErrInvalidOptions naming %s", c.ts, err, c.want)
		}
	}
}

// GET /api/mcp/tools/search answers the best matches with their scores,
// and refuses a missing or oversized q and a bad limit, naming the
// parameter; GET /api/mcp/tools/model is ModelTools.
func TestHTTPSearchTools(t *testing.T) {
	rt := start(t, Options{ToolSearch: ToolSearch{Enabled: true, Pinned: []string{"fs__write_file"}}})
	if err := rt.Registry().SetServer("fs", []tools.Tool{
		searchTool("fs__read_file", "Read a file.", nil), searchTool("fs__write_file", "Write a file.", nil),
	}); err != nil {
		t.Fatal(err)
	}
	awaitSearch(t, rt, "save a file", "fs__write_file")
	h := mounted(rt.Runtime)
	get := func(path string) apiAnswer { return serve(t, h, apiRequest{method: "GET", path: path}) }

	var found struct {
		Tools []struct {
			Name        string          `json:"name"`
			Server      string          `json:"server"`
			InputSchema json.RawMessage `json:"input_schema"`
			Score       float64         `json:"score"`
		} `json:"tools"`
	}
	get("/api/mcp/tools/search?q=save+a+file&limit=1").want(t, http.StatusOK).decode(t, &found)
	if len(found.Tools) != 1 || found.Tools[0].Name != "fs__write_file" || found.Tools[0].Server != "fs" || found.Tools[0].Score <= 0 || len(found.Tools[0].InputSchema) == 0 {
		t.Errorf("search answer %+v, want fs__write_file with its server, schema and score", found)
	}
	get("/api/mcp/tools/search?q=file").want(t, http.StatusOK).decode(t, &found)
	if len(found.Tools) != 2 {
		t.Errorf("default limit gave %d tools, want both", len(found.Tools))
	}
	if a := get("/api/mcp/tools/search?q=kubernetes").want(t, http.StatusOK); strings.TrimSpace(string(a.body)) != `{"tools":[]}` {
		t.Errorf("no match = %s, want an empty list", a.body)
	}
	for _, c := range []struct{ query, field string }{
		{"", "q"}, {"q=", "q"}, {"q=a&q=b", "q"}, {"q=" + strings.Repeat("x", MaxSearchQueryBytes+1), "q"},
		{"q=file&limit=abc", "limit"}, {"q=file&limit=0", "limit"}, {"q=file&limit=51", "limit"},
		{"q=file&limit=-1", "limit"}, {"q=file&limit=1&limit=2", "limit"},
	} {
		a := get("/api/mcp/tools/search?" + c.query)
		if e := a.want(t, http.StatusBadRequest).apiError(t); e.Field != c.field {
			t.Errorf("?%s: field %q (%s), want %q", c.query, e.Field, e.Error, c.field)
		}
	}

	var model struct{ Tools []struct{ Name string } }
	get("/api/mcp/tools/model").want(t, http.StatusOK).decode(t, &model)
	if len(model.Tools) != 2 || model.Tools[0].Name != SearchToolName || model.Tools[1].Name != "fs__write_file" {
		t.Errorf("GET /api/mcp/tools/model = %+v, want search_tools and the pinned fs__write_file", model.Tools)
	}
}
