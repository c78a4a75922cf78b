// Package toolsearch ranks tools for a free-text query with BM25F: one
// Okapi BM25 over several weighted fields of each tool (its name split
// into words, its server's name, title, description, and the names and
// descriptions of its input schema's properties), Snowball English
// stemming, query expansion through a table of general synonyms and of
// phrases ("logged in"), compounds a query spells in two words ("drop
// down"), a boost for the tools whose name the query says in full (a name
// is the tool's own summary of what it does), three rules of server
// context: a word in nearly every tool name of a server is its prefix,
// not part of any tool's name, a word nearly every tool of a server says
// elsewhere is its boilerplate, which weighs little, and a query that
// names a server prefers its tools; and a question about how things are
// prefers the tools whose hints say they only read.
// The analysis is English (stop words, stemming, synonyms); other scripts
// are split into words where letters and digits run, and a run of
// Chinese, Japanese or Korean characters (no spaces between words) into
// overlapping pairs of characters, so such text is found by its
// two-character words and no run is dropped for its length. An Index is built once for a
// set of tools and is then read-only: any number of goroutines may Search
// it at once. A Builder keeps each server's analysed tools between
// builds. Measured on 2 shared cores (BenchmarkToolSearch1000): a first
// build of 1000 fleet-like tools takes 30–80 ms, a rebuild after one
// server's tools changed 3–9 ms, a search about 0.1–0.2 ms (p50); 300
// tools of hostile text (2000 random words each and 200 described
// properties) take about 0.3 s of CPU and 100 MB allocated, 8 MB kept.
package toolsearch

import (
	"math"
	"slices"
	"strings"

	"github.com/openprogram/mcpvisor/tools"
)

// The fields of a tool, in the order of fieldWeights and fieldB.
const (
	fieldName = iota
	fieldServer
	fieldTitle
	fieldDescription
	fieldParamNames
	fieldParamDescs
	fieldCommon // a server's boilerplate (serverCommon), moved out of the other fields
	numFields
)

// fieldParams are, per field, how much a term in it counts (BM25F's
// w_f) and how much the field's length normalises it (b_f). A word of the
// tool's name says most about what it does, its title nearly as much; the
// description is the longest and most diluted; the parameters' names say
// what the tool takes, their descriptions least of all. Names and titles
// are all short, so their length says little; descriptions vary a lot.
// A server's boilerplate counts once per tool, and little: it finds the
// server's tools, all alike.
func fieldParams() (weight, b [numFields]float64) {
	return [numFields]float64{3.0, 1.5, 2.0, 1.0, 1.0, 0.4, 0.3},
		[numFields]float64{0.3, 0, 0.3, 0.75, 0.5, 0.75, 0}
}

// k1 is BM25's term-frequency saturation.
const k1 = 1.2

// Bounds of what one tool and one index hold, so that no server's tool
// list can make a build take unbounded memory or time: each field's text
// is cut before analysis (a word that matters is near the start of a
// description), one field contributes at most maxFieldTerms terms, one
// tool at most maxToolTerms distinct terms (the first ones, name and title
// first: a real tool has some 20–150), the index at most maxIndexTerms
// distinct terms (a term first seen past it is not indexed).
const (
	maxNameBytes        = 256
	maxTitleBytes       = 1 << 10
	maxDescriptionBytes = 8 << 10
	maxFieldTerms       = 2000
	maxToolTerms        = 400
	maxIndexTerms       = 1 << 17
)

// nameCoverageBoost is how much a tool's score grows when the query says
// every word of its name: 1 doubles it, a half-covered name gets half
// that.
const nameCoverageBoost = 1.0

// exactBoost is added to a tool whose name is the query itself (a model
// that knows the name it wants), so that it ranks first.
const exactBoost = 1000

// Bounds of a query: its bytes (the rest is ignored) and its distinct
// terms (the first ones count).
const (
	MaxQueryBytes = 1024
	MaxQueryTerms = 32
)

// Match is one tool found by Search, with its score (higher is better;
// only the order means something).
type Match struct {
	Tool  tools.Tool
	Score float64
}

// Index is an immutable BM25F index over a set of tools.
type Index struct {
	tools     []tools.Tool
	names     map[string]int       // lowercased registry and original names → tool
	nameTerms [][]string           // per tool, the distinct terms of its name
	changes   []bool               // per tool, whether its hints say it changes things
	postings  map[string][]posting // term → the tools it occurs in
	synonyms  map[string][]string  // term → the terms of its synonym groups
	phrases   []phrase             // the phrases a query may say (queryPhrases)
	servers   map[string][]string  // server → the terms of its name
	n         float64              // len(tools), for idf
}

// posting is one term in one tool with the term's saturated BM25F
// frequency, which depends on nothing in the query.
type posting struct {
	doc int32
	tf  float32
}

// idf is BM25's inverse document frequency of term: rare terms weigh
// more. A term in no tool gets the largest.
func (idx *Index) idf(term string) float64 {
	df := float64(len(idx.postings[term]))
	return math.Log(1 + (idx.n-df+0.5)/(df+0.5))
}

// Build indexes list, analysing every tool; a Builder re-analyses only
// the servers whose tools changed.
func Build(list []tools.Tool) *Index {
	idx, _ := NewBuilder().Build(list)
	return idx
}

// combine builds the index of docs (one per tool, in list order): BM25F's
// length normalisation depends on every tool's field lengths, so the
// postings are computed afresh from the analysed tools on every build,
// which costs a pass over their (bounded) terms and no analysis.
func combine(docs []*doc, lex lexicon) *Index {
	idx := &Index{
		tools:     make([]tools.Tool, len(docs)),
		nameTerms: make([][]string, len(docs)),
		changes:   make([]bool, len(docs)),
		names:     make(map[string]int, 2*len(docs)),
		postings:  map[string][]posting{},
		servers:   map[string][]string{},
		synonyms:  lex.synonyms,
		phrases:   lex.phrases,
		n:         float64(len(docs)),
	}
	var totalLen [numFields]float64
	for i, d := range docs {
		idx.tools[i] = d.tool
		idx.nameTerms[i] = d.nameTerms
		idx.changes[i] = changesThings(d.tool.Annotations)
		if _, ok := idx.servers[d.tool.Server]; !ok {
			idx.servers[d.tool.Server] = serverNameTerms(d)
		}
		idx.names[strings.ToLower(d.tool.Name)] = i
		if _, taken := idx.names[strings.ToLower(d.tool.OriginalName)]; !taken {
			idx.names[strings.ToLower(d.tool.OriginalName)] = i
		}
		for f := range numFields {
			totalLen[f] += float64(d.lens[f])
		}
	}
	var avg [numFields]float64
	for f := range avg {
		avg[f] = max(totalLen[f]/max(idx.n, 1), 1)
	}
	fieldWeights, fieldB := fieldParams()
	prefixes, common := serverCommon(docs)
	for i, d := range docs {
		prefix, boiler := prefixes[d.tool.Server], common[d.tool.Server]
		if len(prefix) > 0 {
			idx.nameTerms[i] = slices.DeleteFunc(slices.Clone(d.nameTerms), func(t string) bool { return prefix[t] })
		}
		for _, dt := range d.terms {
			if prefix[dt.term] {
				dt.count[fieldServer] += dt.count[fieldName]
				dt.count[fieldName] = 0
			}
			if boiler[dt.term] {
				dt.count = boilerplate(dt.count)
			}
			list, known := idx.postings[dt.term]
			if !known && len(idx.postings) >= maxIndexTerms {
				continue
			}
			// BM25F: the field-weighted, length-normalised frequency,
			// saturated once over all fields.
			var w float64
			for f := range numFields {
				if dt.count[f] > 0 {
					norm := 1 - fieldB[f] + fieldB[f]*float64(d.lens[f])/avg[f]
					w += fieldWeights[f] * float64(dt.count[f]) / norm
				}
			}
			idx.postings[dt.term] = append(list, posting{doc: int32(i), tf: float32(w / (k1 + w))})
		}
	}
	return idx
}

// A server's name prefix is a word in the name of nearly every one of
// its tools (at least prefixShare of them, on a server with at least
// prefixMinTools): the "API-" of every Notion tool, the "browser_" of
// every Playwright one. It says which server a tool is of, not what the
// tool does, so it counts as the server's name does, not as a word of
// the tool's name (nor towards the name's coverage by a query).
const (
	prefixShare    = 0.8
	prefixMinTools = 4
)

// commonNameShare bounds a server's boilerplate: a word in the names of
// at least this share of its tools (the "file" and "directory" of a
// filesystem server) is one its names tell tools apart by, however often
// its descriptions repeat it.
const commonNameShare = 0.25

// serverCommon returns, per server, its name prefixes' terms and the
// terms of its boilerplate: the words that nearly every one of its tools
// says outside its name (at least prefixShare of them, on a server with at
// least prefixMinTools), such as the "Error Responses: 400: Bad request"
// that ends every description of a server generated from an API spec, or
// the $defs its every schema repeats. Like a prefix, boilerplate says which
// server a tool is of, not which of its tools does what.
func serverCommon(docs []*doc) (prefixes, common map[string]map[string]bool) {
	tools := map[string]int{}
	nameDF := map[string]map[string]int{}
	textDF := map[string]map[string]int{}
	for _, d := range docs {
		s := d.tool.Server
		tools[s]++
		if nameDF[s] == nil {
			nameDF[s], textDF[s] = map[string]int{}, map[string]int{}
		}
		for _, t := range d.nameTerms {
			nameDF[s][t]++
		}
		for _, dt := range d.terms {
			if outsideName(dt.count) > 0 && dt.count[fieldServer] == 0 {
				textDF[s][dt.term]++
			}
		}
	}
	share := func(df map[string]map[string]int, names bool) map[string]map[string]bool {
		out := map[string]map[string]bool{}
		for s, n := range tools {
			for term, c := range df[s] {
				if !names && float64(nameDF[s][term]) >= commonNameShare*float64(n) {
					continue
				}
				if n >= prefixMinTools && float64(c) >= prefixShare*float64(n) {
					if out[s] == nil {
						out[s] = map[string]bool{}
					}
					out[s][term] = true
				}
			}
		}
		return out
	}
	return share(nameDF, true), share(textDF, false)
}

// outsideName is how often a term is said in the fields of a tool other
// than its name and its server's name.
func outsideName(c [numFields]float32) float32 {
	return c[fieldTitle] + c[fieldDescription] + c[fieldParamNames] + c[fieldParamDescs]
}

// boilerplate moves the counts of a server's boilerplate term out of a
// tool's own text into fieldCommon, once: the term still finds the
// server's tools (the "knowledge graph" of every tool of a memory server
// says what the server is about), all alike, and weighs little.
func boilerplate(c [numFields]float32) [numFields]float32 {
	if outsideName(c) > 0 {
		c[fieldCommon] = 1
	}
	c[fieldTitle], c[fieldDescription], c[fieldParamNames], c[fieldParamDescs] = 0, 0, 0, 0
	return c
}

// lexicon is what an index knows of English beyond its tools: the synonyms
// of each term and the phrases of queries. A Builder makes it once.
type lexicon struct {
	synonyms map[string][]string
	phrases  []phrase
}

func newLexicon(a *analyzer) lexicon {
	return lexicon{synonyms: synonymsOf(a), phrases: queryPhrases()}
}

// synonymsOf maps each term of the synonym table to the other terms of its
// groups, through the same analysis as the tools' text.
func synonymsOf(a *analyzer) map[string][]string {
	out := map[string][]string{}
	for _, group := range synonymGroups() {
		var terms []string
		for _, w := range group {
			if t := a.term(w); t != "" && !slices.Contains(terms, t) {
				terms = append(terms, t)
			}
		}
		for _, t := range terms {
			for _, o := range terms {
				if o != t && !slices.Contains(out[t], o) {
					out[t] = append(out[t], o)
				}
			}
		}
	}
	return out
}

// boostNames raises the score of each tool by how much of its name the
// query says (by its words or their synonyms): a name is the tool's own
// summary of what it does, where a description matches many things in
// passing.
func (idx *Index) boostNames(scores []float64, terms []queryTerm) {
	said := map[string]float64{}
	for _, q := range terms {
		said[q.term] = max(said[q.term], q.weight)
		for _, syn := range idx.synonyms[q.term] {
			said[syn] = max(said[syn], q.weight*synonymWeight)
		}
	}
	for d, s := range scores {
		if s > 0 && len(idx.nameTerms[d]) > 0 {
			var covered float64
			for _, t := range idx.nameTerms[d] {
				covered += said[t]
			}
			scores[d] = s * (1 + nameCoverageBoost*covered/float64(len(idx.nameTerms[d])))
		}
	}
}

// serverNameTerms are the terms of d's server name.
func serverNameTerms(d *doc) []string {
	var out []string
	for _, dt := range d.terms {
		if dt.count[fieldServer] > 0 {
			out = append(out, dt.term)
		}
	}
	return out
}

// otherServerWeight is what the score of a tool of another server than
// the ones a query names is multiplied by.
const otherServerWeight = 0.7

// preferNamedServers favours the tools of a server the query names (by
// every word of the server's name, as typed: "in notion", "in my
// memory"): the user said where the tool is, so the tools of other
// servers, which match only the rest of the query, weigh less.
func (idx *Index) preferNamedServers(scores []float64, terms []queryTerm) {
	said := map[string]bool{}
	for _, q := range terms {
		if q.weight == 1 {
			said[q.term] = true
		}
	}
	named := map[string]bool{}
	for server, st := range idx.servers {
		if len(st) > 0 && !slices.ContainsFunc(st, func(t string) bool { return !said[t] }) {
			named[server] = true
		}
	}
	if len(named) == 0 {
		return
	}
	for d := range scores {
		if !named[idx.tools[d].Server] {
			scores[d] *= otherServerWeight
		}
	}
}

// changingToolWeight is what the score of a tool that changes things is
// multiplied by for a question: "when was it modified" asks to read a
// date, not to modify.
const changingToolWeight = 0.7

// changesThings reports whether a tool's hints say that it changes its
// environment: read-only said false, or destructive said true with no
// read-only hint. A tool that says nothing is left alone (the spec's
// default, not read-only, is what most servers get by omission).
func changesThings(a *tools.Annotations) bool {
	switch {
	case a == nil:
		return false
	case a.ReadOnlyHint != nil:
		return !*a.ReadOnlyHint
	}
	return a.DestructiveHint != nil && *a.DestructiveHint
}

// knows reports whether term is in some tool or in the synonym table.
func (idx *Index) knows(term string) bool {
	_, syn := idx.synonyms[term]
	return syn || len(idx.postings[term]) > 0
}

// Search returns the limit best tools for query, best first (ties by
// name), only tools that match at least one of its terms; a nil Index
// finds nothing. A query is read up to MaxQueryBytes and MaxQueryTerms
// distinct terms; a file name in it (notes.txt) also asks for files, a
// host name (example.com) for web pages, at a synonym's weight.
func (idx *Index) Search(query string, limit int) []Match {
	if idx == nil || limit <= 0 || len(idx.tools) == 0 {
		return nil
	}
	query = query[:min(len(query), MaxQueryBytes)]
	terms := queryTerms(newAnalyzer(), query, idx.phrases, idx.knows)
	scores := make([]float64, len(idx.tools))
	best := make([]float64, len(idx.tools)) // one query term's best match per tool
	var touched []int32
	for _, q := range terms {
		touched = touched[:0]
		add := func(term string, weight float64) {
			for _, p := range idx.postings[term] {
				s := weight * float64(p.tf)
				if best[p.doc] == 0 {
					touched = append(touched, p.doc)
				}
				if s > best[p.doc] {
					best[p.doc] = s
				}
			}
		}
		w := q.weight * idx.idf(q.term)
		add(q.term, w)
		// A synonym weighs at most what the word itself would: a word
		// common in the tools' text (such as "type", a property of many
		// schemas) must not become a rare one by expansion.
		for _, syn := range idx.synonyms[q.term] {
			add(syn, synonymWeight*min(w, idx.idf(syn)))
		}
		// A term counts once per tool: by itself or by its best synonym,
		// so a query word with many synonyms weighs no more than another.
		for _, d := range touched {
			scores[d] += best[d]
			best[d] = 0
		}
	}
	idx.boostNames(scores, terms)
	idx.preferNamedServers(scores, terms)
	if asksForFacts(query) {
		for d, c := range idx.changes {
			if c {
				scores[d] *= changingToolWeight
			}
		}
	}
	if i, ok := idx.names[strings.ToLower(strings.TrimSpace(query))]; ok {
		scores[i] += exactBoost
	}
	// Rank small (tool, score) pairs, and copy only the best tools out.
	type hit struct {
		doc   int
		score float64
	}
	var hits []hit
	for i, s := range scores {
		if s > 0 {
			hits = append(hits, hit{i, s})
		}
	}
	slices.SortFunc(hits, func(x, y hit) int {
		if x.score != y.score {
			if x.score > y.score {
				return -1
			}
			return 1
		}
		return strings.Compare(idx.tools[x.doc].Name, idx.tools[y.doc].Name)
	})
	if len(hits) == 0 {
		return nil
	}
	out := make([]Match, 0, min(len(hits), limit))
	for _, h := range hits[:min(len(hits), limit)] {
		out = append(out, Match{Tool: idx.tools[h.doc], Score: h.score})
	}
	return out
}
