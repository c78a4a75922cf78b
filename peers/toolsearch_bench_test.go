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
	"github.com/openprogram/mcpvisor/runtime"
	"github.com/openprogram/mcpvisor/tools"
)

// bytesPerToken is the rough size of a token in JSON and English text; the
// token figures are bytes divided by it, not a tokenizer's count.
const bytesPerToken = 4

// BenchmarkToolSearchFleet measures what the model gets from the real
// fleet with and without the deferred mode, and how well search finds the
// query set's tools:
//
//   - full-bytes, full-tokens~B/4: every model tool (Tools) as the host sends
//     it (name, description, input schema; compact JSON);
//   - deferred-bytes, deferred-tokens~B/4: ModelTools in the deferred mode
//     (search_tools and the five fleetPins) plus one search_tools answer
//     at the default limit (5), averaged over the queries;
//   - deferred-%: deferred over full (target ≤ 15);
//   - top1-%, top5-%: the queries whose tool ranks first, or among the
//     first five (target ≥ 90 for top 5).
//
// Tokens are bytes/4. Run with -benchtime 1x: each run starts the fleet.
func BenchmarkToolSearchFleet(b *testing.B) {
	rt := startFleet(b, runtime.Options{ToolSearch: runtime.ToolSearch{Enabled: true, Pinned: fleetPins}})
	cases := loadSearchCases(b)
	full := float64(len(modelDefinitions(rt.Tools())))
	deferred := float64(len(modelDefinitions(rt.ModelTools())))
	var answers float64
	for _, c := range cases {
		res, err := rt.CallTool(context.Background(), runtime.SearchToolName, map[string]any{"query": c.query})
		if err != nil || res.IsError || len(res.Content) != 1 {
			b.Fatalf("search_tools %q: %+v, %v", c.query, res, err)
		}
		answers += float64(len(res.Content[0].Text))
	}
	deferred += answers / float64(len(cases))
	s := scoreSearch(rt.Runtime, cases)
	b.ResetTimer()
	for i := range b.N {
		rt.SearchTools(cases[i%len(cases)].query, 5)
	}
	b.StopTimer()
	b.ReportMetric(float64(len(rt.Tools())), "tools")
	b.ReportMetric(full, "full-bytes")
	b.ReportMetric(full/bytesPerToken, "full-tokens~B/4")
	b.ReportMetric(deferred, "deferred-bytes")
	b.ReportMetric(deferred/bytesPerToken, "deferred-tokens~B/4")
	b.ReportMetric(100*deferred/full, "deferred-%")
	b.ReportMetric(100*s.top1, "top1-%")
	b.ReportMetric(100*s.top5, "top5-%")
}

// searchBenchTools is the registry size of BenchmarkToolSearch1000.
const searchBenchTools = 1000

// BenchmarkToolSearch1000 measures Runtime.SearchTools over 1000 tools:
// the fleet's real ones and synthetic ones to make up the number (made
// from a vocabulary of software verbs and objects, with descriptions and
// schemas of the fleet's sizes). It reports the p50 and p99 of one
// search of a query of the set (target p50 ≤ 1 ms = 1000 µs), and the
// set's top-5 hit rate among the 1000 (for information: the synthetic
// tools are distractors). Run with -benchtime 1x.
func BenchmarkToolSearch1000(b *testing.B) {
	rt := startFleet(b, runtime.Options{})
	cases := loadSearchCases(b)
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
