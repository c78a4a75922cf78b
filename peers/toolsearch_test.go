//go:build unix

package peers_test

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/openprogram/mcpvisor/runtime"
	"github.com/openprogram/mcpvisor/tools"
)

// searchCase is one line of a query file (testdata/toolsearch-*.tsv): a
// user's query and the tools that answer it (any one of them is a hit).
type searchCase struct {
	query string
	want  []string
}

// querySet is one query file: its name (the file's, between
// "toolsearch-" and ".tsv") and its queries. tunedSet is the file the
// ranking was tuned on; every other file is held out: written before the
// search was measured on it (its header says whether a ranking change was
// judged on it since, which makes it less than blind). A new file in
// testdata is picked up with no change here.
type querySet struct {
	name  string
	cases []searchCase
}

const tunedSet = "queries"

// minTop5 is the share of the tuned set's queries whose tool must be
// among the first five matches: what it scores (96.6 %, 56 of 58, when
// this was written; the target is 90 %) less about two queries.
// The held-out sets are held to minHeldoutTop5, what they score together
// (84.9 %, 79 of 93: 40 of 43 on heldout-reviewb, 39 of 50 on the blind
// heldout-final) less about two queries, so that a ranking change that
// loses held-out queries fails; the bench reports the held-out figure
// against the 90 % target, which it misses. A new held-out file moves
// the combined figure: set the floor again from what it measures.
const (
	minTop5        = 0.93
	minHeldoutTop5 = 0.82
)

// fleetPins are the five tools the deferred-mode measurements pin: the
// everyday file tools and the browser's entry point, what a coding agent
// uses in most sessions.
var fleetPins = []string{
	"filesystem__read_text_file", "filesystem__write_file", "filesystem__list_directory",
	"filesystem__edit_file", "playwright__browser_navigate",
}

// loadQuerySets reads every testdata/toolsearch-*.tsv, the tuned set
// first, then the held-out ones by name.
func loadQuerySets(tb testing.TB) []querySet {
	tb.Helper()
	files, err := filepath.Glob("testdata/toolsearch-*.tsv")
	if err != nil || len(files) == 0 {
		tb.Fatalf("no testdata/toolsearch-*.tsv query files (%v)", err)
	}
	var sets []querySet
	for _, file := range files {
		name := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(file), "toolsearch-"), ".tsv")
		sets = append(sets, querySet{name: name, cases: loadSearchCases(tb, file)})
	}
	slices.SortStableFunc(sets, func(a, b querySet) int {
		switch {
		case a.name == tunedSet:
			return -1
		case b.name == tunedSet:
			return 1
		}
		return strings.Compare(a.name, b.name)
	})
	if sets[0].name != tunedSet {
		tb.Fatalf("testdata/toolsearch-%s.tsv, the tuned query set, is missing", tunedSet)
	}
	return sets
}

// allCases is every query of sets; heldOut those of the held-out sets.
func allCases(sets []querySet) (all, heldOut []searchCase) {
	for _, s := range sets {
		all = append(all, s.cases...)
		if s.name != tunedSet {
			heldOut = append(heldOut, s.cases...)
		}
	}
	return all, heldOut
}

func loadSearchCases(tb testing.TB, file string) []searchCase {
	tb.Helper()
	f, err := os.Open(file)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	var cases []searchCase
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		query, want, ok := strings.Cut(line, "\t")
		if !ok {
			tb.Fatalf("%s: no tab in %q", file, line)
		}
		cases = append(cases, searchCase{query: query, want: strings.Split(want, "|")})
	}
	if err := sc.Err(); err != nil {
		tb.Fatal(err)
	}
	return cases
}

// searchScore is how a query set fares: the share of queries whose tool
// ranks first and among the first five, and the queries that missed the
// five with what came first instead.
type searchScore struct {
	top1, top5 float64
	misses     []string
}

func scoreSearch(rt *runtime.Runtime, cases []searchCase) searchScore {
	var s searchScore
	for _, c := range cases {
		matches := rt.SearchTools(c.query, 5)
		rank := slices.IndexFunc(matches, func(m runtime.ToolMatch) bool { return slices.Contains(c.want, m.Name) })
		switch {
		case rank == 0:
			s.top1++
			s.top5++
		case rank > 0:
			s.top5++
		default:
			var got []string
			for _, m := range matches {
				got = append(got, m.Name)
			}
			s.misses = append(s.misses, c.query+" → want "+strings.Join(c.want, "|")+", got "+strings.Join(got, ", "))
		}
	}
	s.top1 /= float64(len(cases))
	s.top5 /= float64(len(cases))
	return s
}

// modelDefinitions is the JSON a host sends its model for list: each
// tool's name, description and input schema, as in a tool-use request.
func modelDefinitions(list []tools.Tool) []byte {
	type def struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		InputSchema json.RawMessage `json:"input_schema"`
	}
	defs := make([]def, 0, len(list))
	for _, t := range list {
		defs = append(defs, def{t.Name, t.Description, t.InputSchema})
	}
	data, _ := json.Marshal(defs) // strings and valid schemas: cannot fail
	return data
}

// Tool search over the real fleet: every tool the query set names is
// registered (so the set is not stale), the top-5 hit rate is at least
// minTop5, and the deferred mode hands the model search_tools and the
// pins, answers a query with the tool's schema, and still calls an
// unpinned tool by name.
func TestFleetToolSearch(t *testing.T) {
	rt := startFleet(t, runtime.Options{ToolSearch: runtime.ToolSearch{Enabled: true, Pinned: fleetPins}})
	sets := loadQuerySets(t)
	all, heldOut := allCases(sets)
	if len(sets[0].cases) < 40 {
		t.Fatalf("%d queries in the tuned set, want at least 40", len(sets[0].cases))
	}
	for _, c := range all {
		for _, name := range c.want {
			if _, ok := rt.Registry().Get(name); !ok {
				t.Errorf("query %q names %s, which the fleet does not register", c.query, name)
			}
		}
	}

	for _, set := range sets {
		s := scoreSearch(rt.Runtime, set.cases)
		t.Logf("%s: %d queries over %d tools: top-1 %.1f%%, top-5 %.1f%%", set.name, len(set.cases), len(rt.Tools()), 100*s.top1, 100*s.top5)
		for _, m := range s.misses {
			t.Logf("%s missed: %s", set.name, m)
		}
		if set.name == tunedSet && s.top5 < minTop5 {
			t.Errorf("tuned set: top-5 hit rate %.1f%%, want at least %.0f%%", 100*s.top5, 100*minTop5)
		}
	}
	overall := scoreSearch(rt.Runtime, all)
	t.Logf("all sets: %d queries: top-1 %.1f%%, top-5 %.1f%%", len(all), 100*overall.top1, 100*overall.top5)
	if len(heldOut) > 0 {
		s := scoreSearch(rt.Runtime, heldOut)
		t.Logf("held-out sets: %d queries: top-1 %.1f%%, top-5 %.1f%%", len(heldOut), 100*s.top1, 100*s.top5)
		if s.top5 < minHeldoutTop5 {
			t.Errorf("held-out sets: top-5 hit rate %.1f%%, want at least %.0f%%", 100*s.top5, 100*minHeldoutTop5)
		}
	}

	t.Run("deferred", func(t *testing.T) {
		var names []string
		for _, tl := range rt.ModelTools() {
			names = append(names, tl.Name)
		}
		want := append([]string{runtime.SearchToolName}, slices.Sorted(slices.Values(fleetPins))...)
		if !slices.Equal(names, want) {
			t.Errorf("ModelTools = %v, want %v", names, want)
		}
		res, err := rt.CallTool(context.Background(), runtime.SearchToolName, map[string]any{"query": "take a picture of the web page"})
		if err != nil || res.IsError || len(res.Content) != 1 {
			t.Fatalf("search_tools: %+v, %v", res, err)
		}
		var answer struct {
			Tools []struct {
				Name        string          `json:"name"`
				InputSchema json.RawMessage `json:"input_schema"`
			} `json:"tools"`
		}
		if err := json.Unmarshal([]byte(res.Content[0].Text), &answer); err != nil {
			t.Fatalf("search_tools answer is not JSON: %v\n%s", err, res.Content[0].Text)
		}
		shot, _ := rt.Registry().Get("playwright__browser_take_screenshot")
		i := slices.IndexFunc(answer.Tools, func(a struct {
			Name        string          `json:"name"`
			InputSchema json.RawMessage `json:"input_schema"`
		}) bool {
			return a.Name == shot.Name
		})
		switch {
		case len(answer.Tools) != 5:
			t.Errorf("search_tools answered %d tools, want the default 5", len(answer.Tools))
		case i < 0:
			t.Errorf("search_tools answer lacks %s: %s", shot.Name, res.Content[0].Text)
		case string(answer.Tools[i].InputSchema) != string(compactJSON(t, shot.InputSchema)):
			t.Errorf("search_tools gives %s the schema %s, want %s", shot.Name, answer.Tools[i].InputSchema, shot.InputSchema)
		}
		if strings.Contains(res.Content[0].Text, fakeNotionToken) || strings.Contains(string(modelDefinitions(rt.Tools())), fakeNotionToken) ||
			strings.Contains(rt.logs.String(), fakeNotionToken) {
			t.Error("Notion's token shows in what the model gets or in the logs")
		}
		// Not in ModelTools, still callable by name.
		echo, err := rt.CallTool(context.Background(), "everything__echo", map[string]any{"message": "deferred"})
		if err != nil || echo.IsError || len(echo.Content) == 0 || !strings.Contains(echo.Content[0].Text, "deferred") {
			t.Errorf("everything__echo, not handed to the model, called by name: %+v, %v", echo, err)
		}
	})
}

func compactJSON(t *testing.T, raw json.RawMessage) []byte {
	t.Helper()
	var b strings.Builder
	enc := json.NewEncoder(&b)
	if err := enc.Encode(raw); err != nil {
		t.Fatal(err)
	}
	return []byte(strings.TrimSpace(b.String()))
}
