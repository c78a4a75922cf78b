//go:build unix

package peers_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/openprogram/mcpvisor/internal/testutil"
	"github.com/openprogram/mcpvisor/internal/toolsearch"
	"github.com/openprogram/mcpvisor/runtime"
	"github.com/openprogram/mcpvisor/tools"
)

// bytesPerToken is the rough size of a token in JSON and English text; the
// token figures are bytes divided by it, not a tokenizer's count.
const bytesPerToken = 4

// BenchmarkToolSearchFleet measures what the model gets from the real
// fleet with and without the deferred mode, and how well search finds the
// query sets' tools:
//
//   - full-bytes, full-tokens~B/4: every model tool (Tools) as the host sends
//     it (name, description, input schema; compact JSON);
//   - deferred-bytes, deferred-tokens~B/4: ModelTools in the deferred mode
//     (search_tools and the five fleetPins) plus one search_tools answer
//     at the default limit (5), averaged over all the queries;
//   - deferred-%: deferred over full (target ≤ 15). One answer per query
//     is the cost when the search finds the tool: a miss would need the
//     model to search again (more answers), and a query a pinned tool
//     answers needs no search at all (none). deferred-unpinned-% counts
//     an answer only for the queries whose tool is not pinned, the
//     figure of a model that uses its pins without searching;
//   - top1-%, top5-%: the queries of every set whose tool ranks first, or
//     among the first five; top1-NAME-%, top5-NAME-% per query file
//     (testdata/toolsearch-NAME.tsv); top5-tuned-% for the set the
//     ranking was tuned on, top5-heldout-% for the held-out sets together
//     (target ≥ 90: the tuned set's figure flatters the search).
//
// Tokens are bytes/4. Run with -benchtime 1x: each run starts the fleet.
func BenchmarkToolSearchFleet(b *testing.B) {
	rt := startFleet(b, runtime.Options{ToolSearch: runtime.ToolSearch{Enabled: true, Pinned: fleetPins}})
	sets := loadQuerySets(b)
	cases, heldOut := allCases(sets)
	full := float64(len(modelDefinitions(rt.Tools())))
	deferred := float64(len(modelDefinitions(rt.ModelTools())))
	var answers, unpinnedAnswers float64
	for _, c := range cases {
		res, err := rt.CallTool(context.Background(), runtime.SearchToolName, map[string]any{"query": c.query})
		if err != nil || res.IsError || len(res.Content) != 1 {
			b.Fatalf("search_tools %q: %+v, %v", c.query, res, err)
		}
		answers += float64(len(res.Content[0].Text))
		if !slices.ContainsFunc(c.want, func(name string) bool { return slices.Contains(fleetPins, name) }) {
			unpinnedAnswers += float64(len(res.Content[0].Text))
		}
	}
	s := scoreSearch(rt.Runtime, cases)
	b.ResetTimer()
	for i := range b.N {
		rt.SearchTools(cases[i%len(cases)].query, 5)
	}
	b.StopTimer()
	b.ReportMetric(float64(len(rt.Tools())), "tools")
	b.ReportMetric(full, "full-bytes")
	b.ReportMetric(full/bytesPerToken, "full-tokens~B/4")
	b.ReportMetric(deferred+answers/float64(len(cases)), "deferred-bytes")
	b.ReportMetric((deferred+answers/float64(len(cases)))/bytesPerToken, "deferred-tokens~B/4")
	b.ReportMetric(100*(deferred+answers/float64(len(cases)))/full, "deferred-%")
	b.ReportMetric(100*(deferred+unpinnedAnswers/float64(len(cases)))/full, "deferred-unpinned-%")
	b.ReportMetric(100*s.top1, "top1-%")
	b.ReportMetric(100*s.top5, "top5-%")
	for _, set := range sets {
		fs := scoreSearch(rt.Runtime, set.cases)
		b.ReportMetric(100*fs.top1, "top1-"+set.name+"-%")
		b.ReportMetric(100*fs.top5, "top5-"+set.name+"-%")
		if set.name == tunedSet {
			b.ReportMetric(100*fs.top5, "top5-tuned-%")
		}
	}
	if len(heldOut) > 0 {
		hs := scoreSearch(rt.Runtime, heldOut)
		b.ReportMetric(100*hs.top1, "top1-heldout-%")
		b.ReportMetric(100*hs.top5, "top5-heldout-%")
	}
}

// searchBenchTools is the registry size of BenchmarkToolSearch1000.
const searchBenchTools = 1000

// BenchmarkToolSearch1000 measures Runtime.SearchTools over 1000 tools:
// the fleet's real ones and synthetic ones to make up the number (made
// from a vocabulary of software verbs and objects, with descriptions and
// schemas of the fleet's sizes). It reports the p50 and p99 of one
// search of a query of the sets (target p50 ≤ 1 ms = 1000 µs), and the
// sets' top-5 hit rate among the 1000 (for information: the synthetic
// tools are distractors), and the time of a first build of the index
// (build-ms) and of a rebuild after one server's tools changed
// (rebuild-ms). Run with -benchtime 1x.
func BenchmarkToolSearch1000(b *testing.B) {
	rt := startFleet(b, runtime.Options{})
	cases, _ := allCases(loadQuerySets(b))
	synth := syntheticTools(searchBenchTools - len(rt.Tools()))
	if err := rt.Registry().SetServer("synthetic", synth); err != nil {
		b.Fatal(err)
	}
	last := synth[len(synth)-1].Name
	testutil.Eventually(b, toolsTimeout, "the index holding the synthetic tools", func() bool {
		m := rt.SearchTools(last, 1)
		return len(m) == 1 && m[0].Name == last
	})
	if n := len(rt.Tools()); n != searchBenchTools {
		b.Fatalf("%d tools registered, want %d", n, searchBenchTools)
	}
	const searches = 1000
	lat := make([]time.Duration, 0, searches)
	b.ResetTimer()
	for range b.N {
		lat = lat[:0]
		for i := range searches {
			start := time.Now()
			rt.SearchTools(cases[i%len(cases)].query, 5)
			lat = append(lat, time.Since(start))
		}
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Nanoseconds())/1e3, "p50-us")
	b.ReportMetric(float64(lat[len(lat)*99/100].Nanoseconds())/1e3, "p99-us")
	b.ReportMetric(100*scoreSearch(rt.Runtime, cases).top5, "top5-%")
	b.ReportMetric(buildMillis(rt.Tools()), "build-ms")
	b.ReportMetric(rebuildMillis(rt.Tools()), "rebuild-ms")
}

// buildMillis is the median time of indexing list afresh (every tool
// analysed: the runtime's first build), over a few builds.
func buildMillis(list []tools.Tool) float64 {
	var ds []time.Duration
	for range 5 {
		start := time.Now()
		toolsearch.Build(list)
		ds = append(ds, time.Since(start))
	}
	slices.Sort(ds)
	return float64(ds[len(ds)/2].Microseconds()) / 1e3
}

// rebuildMillis is the median time of the runtime's rebuild after one
// server's tools changed (one description of the everything server): the
// other servers' analysed tools are kept.
func rebuildMillis(list []tools.Tool) float64 {
	b := toolsearch.NewBuilder()
	b.Build(list)
	var ds []time.Duration
	for i := range 5 {
		next := slices.Clone(list)
		for j := range next {
			if next[j].Server == "everything" {
				next[j].Description += fmt.Sprintf(" (%d)", i)
				break
			}
		}
		start := time.Now()
		b.Build(next)
		ds = append(ds, time.Since(start))
	}
	slices.Sort(ds)
	return float64(ds[len(ds)/2].Microseconds()) / 1e3
}

// syntheticTools makes n tools of a made-up service catalogue, the same
// ones on every run.
func syntheticTools(n int) []tools.Tool {
	verbs := []string{"get", "list", "create", "update", "delete", "search", "export", "import", "sync", "archive",
		"publish", "approve", "assign", "schedule", "validate", "merge", "tag", "summarize", "translate", "convert"}
	objects := []string{"invoice", "customer", "ticket", "deployment", "incident", "order", "shipment", "contract",
		"campaign", "report", "dashboard", "metric", "alert", "pipeline", "repository", "branch", "release", "calendar event",
		"expense", "payroll run", "lead", "segment", "subscription", "webhook", "secret", "cluster", "bucket", "queue",
		"message template", "survey", "asset", "license", "vendor", "timesheet", "budget", "forecast", "policy", "workflow"}
	filler := strings.Fields("the a of for with in by from returns given optional required identifier value values " +
		"account organization project workspace team region status state date range owner label priority cursor page " +
		"limit results response field fields filter sort order ascending descending format json csv include metadata " +
		"when if this that it is are can be used to only which each all any one or more")
	rng := rand.New(rand.NewPCG(13, 2))
	sentence := func(words int) string {
		w := make([]string, words)
		for i := range w {
			w[i] = filler[rng.IntN(len(filler))]
		}
		return strings.Join(w, " ")
	}
	out := make([]tools.Tool, 0, n)
	for i := range n {
		verb, object := verbs[rng.IntN(len(verbs))], objects[rng.IntN(len(objects))]
		service := fmt.Sprintf("svc%02d", i%40)
		name := fmt.Sprintf("%s_%s_%d", verb, strings.ReplaceAll(object, " ", "_"), i)
		desc := fmt.Sprintf("%s %s %s. %s.", strings.ToUpper(verb[:1])+verb[1:], object, sentence(12), sentence(30))
		props := map[string]any{}
		for p := range 2 + rng.IntN(4) {
			props[fmt.Sprintf("%s_%d", filler[rng.IntN(len(filler))], p)] = map[string]any{"type": "string", "description": sentence(10)}
		}
		schema, _ := json.Marshal(map[string]any{"type": "object", "properties": props})
		out = append(out, tools.NewTool("synthetic__"+service+"_"+name, "synthetic", service+"_"+name, desc, schema, nil))
	}
	return out
}
