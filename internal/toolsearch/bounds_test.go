package toolsearch

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/openprogram/mcpvisor/tools"
)

// hostileTools are n tools of one server, each with a description of
// 2000 distinct random words and 200 properties described in 30 more: the
// text of a server that dumps its documentation into its tool list.
func hostileTools(n int) []tools.Tool {
	rng := rand.New(rand.NewPCG(1, 2))
	word := func() string {
		b := make([]byte, 4+rng.IntN(8))
		for i := range b {
			b[i] = byte('a' + rng.IntN(26))
		}
		return string(b)
	}
	text := func(words int) string {
		w := make([]string, words)
		for i := range w {
			w[i] = word()
		}
		return strings.Join(w, " ")
	}
	out := make([]tools.Tool, 0, n)
	for i := range n {
		props := map[string]any{}
		for p := range 200 {
			props[fmt.Sprintf("%s_%d", word(), p)] = map[string]any{"type": "string", "description": text(30)}
		}
		schema, _ := json.Marshal(map[string]any{"type": "object", "properties": props})
		out = append(out, tools.NewTool(fmt.Sprintf("h__t%d", i), "h", fmt.Sprintf("t%d", i), text(2000), schema, nil))
	}
	return out
}

// A build over hostile text stays bounded: each tool keeps at most
// maxToolTerms distinct terms, the index at most maxIndexTerms, and the
// build allocates a bounded amount per tool (before the bounds, 2.2 MB
// per such tool and 4000 terms each).
func TestBuildBoundedOnHostileText(t *testing.T) {
	const n = 100
	list := hostileTools(n)
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	idx, _ := NewBuilder().Build(list)
	runtime.ReadMemStats(&after)
	perTool := make([]int, n)
	postings := 0
	for _, ps := range idx.postings {
		postings += len(ps)
		for _, p := range ps {
			perTool[p.doc]++
		}
	}
	for i, c := range perTool {
		if c > maxToolTerms {
			t.Fatalf("tool %d holds %d terms, want at most %d", i, c, maxToolTerms)
		}
	}
	if len(idx.postings) > maxIndexTerms || postings > n*maxToolTerms {
		t.Errorf("%d terms and %d postings, want at most %d and %d", len(idx.postings), postings, maxIndexTerms, n*maxToolTerms)
	}
	const perToolBound = 1 << 20
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > n*perToolBound {
		t.Errorf("the build allocated %d MB for %d tools, want at most %d MB", alloc>>20, n, n*perToolBound>>20)
	}
	// The cuts: a long description's later words, a long property
	// description's, and a schema over maxSchemaBytes are not indexed.
	late := strings.Repeat("filler ", maxDescriptionBytes/7) + "zebraword"
	schema, _ := json.Marshal(map[string]any{"type": "object", "properties": map[string]any{
		"p": map[string]any{"type": "string", "description": strings.Repeat("x ", maxSchemaString) + "quokka"}}})
	big, _ := json.Marshal(map[string]any{"type": "object", "properties": map[string]any{
		"giraffe": map[string]any{"type": "string", "description": strings.Repeat("y", maxSchemaBytes)}}})
	cuts := Build([]tools.Tool{tool("a__one", late, string(schema)), tool("a__two", "two", string(big))})
	for _, w := range []string{"zebraword", "quokka", "giraff"} {
		if len(cuts.postings[w]) != 0 {
			t.Errorf("%q, past a bound, is indexed", w)
		}
	}
	if len(cuts.postings["filler"]) != 1 {
		t.Error("the start of a long description is not indexed")
	}
	// The index's total: terms first seen past maxIndexTerms are dropped.
	docs := make([]*doc, 0, maxIndexTerms/maxToolTerms+2)
	for i := range cap(docs) {
		d := &doc{tool: tool(fmt.Sprintf("s__t%d", i), "", "")}
		for j := range maxToolTerms {
			d.terms = append(d.terms, docTerm{term: fmt.Sprintf("w%d_%d", i, j), count: [numFields]float32{fieldDescription: 1}})
		}
		docs = append(docs, d)
	}
	if got := len(combine(docs, lexicon{}).postings); got != maxIndexTerms {
		t.Errorf("the index holds %d terms, want the bound %d", got, maxIndexTerms)
	}
}

// A Builder re-analyses only the servers whose tools changed, and an
// identical list gives the index built last.
func TestBuilderReusesServers(t *testing.T) {
	fs := []tools.Tool{tool("fs__read_file", "Read a file.", ""), tool("fs__write_file", "Write a file.", "")}
	web := []tools.Tool{tool("web__navigate", "Go to a page.", "")}
	b := NewBuilder()
	first, changed := b.Build(append(slices.Clone(fs), web...))
	if !changed || len(first.tools) != 3 {
		t.Fatalf("first build: changed %v, %d tools", changed, len(first.tools))
	}
	fsDoc := b.servers["fs"].docs[0]
	if again, changed := b.Build(append(slices.Clone(fs), web...)); changed || again != first {
		t.Errorf("an identical list: changed %v, same index %v", changed, again == first)
	}
	web[0] = tool("web__navigate", "Visit a web page.", "")
	next, changed := b.Build(append(slices.Clone(fs), web...))
	if !changed || next == first || b.servers["fs"].docs[0] != fsDoc || b.servers["web"].docs[0].tool.Description != "Visit a web page." {
		t.Errorf("one server changed: changed %v, fs re-analysed %v", changed, b.servers["fs"].docs[0] != fsDoc)
	}
	if got := names(next.Search("visit", 5)); len(got) != 1 || got[0] != "web__navigate" {
		t.Errorf("the changed server's new text is not searched: %v", got)
	}
	if after, changed := b.Build(fs); !changed || len(after.tools) != 2 || len(b.servers) != 1 {
		t.Errorf("a server gone: changed %v, %d tools, %d servers kept", changed, len(after.tools), len(b.servers))
	}
}
