package toolsearch

import (
	"hash/maphash"
	"slices"

	"github.com/openprogram/mcpvisor/tools"
)

// doc is one tool as analysed: what an index needs of it that depends on
// the tool alone, kept by a Builder from one build to the next.
type doc struct {
	tool      tools.Tool
	nameTerms []string           // the distinct terms of its name
	terms     []docTerm          // its distinct terms, at most maxToolTerms
	lens      [numFields]float32 // terms per field
}

// docTerm is one term of a tool and how often each field says it.
type docTerm struct {
	term  string
	count [numFields]float32
}

// Builder builds the indexes of successive tool lists, analysing only
// what changed: it keeps each server's analysed tools under a hash of
// their content (names, title, description, input schema), so a change
// of one server re-analyses that server's tools alone, and a list whose
// every server is unchanged (a re-listing that changed nothing) gives the
// index built last. A Builder is for one goroutine at a time.
type Builder struct {
	seed    maphash.Seed
	lex     lexicon
	servers map[string]serverDocs
	last    *Index
}

type serverDocs struct {
	key  uint64
	docs []*doc
}

// NewBuilder returns a Builder that has built nothing yet.
func NewBuilder() *Builder {
	return &Builder{seed: maphash.MakeSeed(), lex: newLexicon(newAnalyzer()), servers: map[string]serverDocs{}}
}

// Build returns the index of list and whether it is a new one: false when
// list holds exactly the tools of the previous call (the same Index is
// returned).
func (b *Builder) Build(list []tools.Tool) (*Index, bool) {
	byServer := map[string][]int{}
	var order []string
	for i, t := range list {
		if _, seen := byServer[t.Server]; !seen {
			order = append(order, t.Server)
		}
		byServer[t.Server] = append(byServer[t.Server], i)
	}
	changed := b.last == nil || len(byServer) != len(b.servers)
	next := make(map[string]serverDocs, len(byServer))
	docs := make([]*doc, len(list))
	var a *analyzer
	for _, server := range order {
		at := byServer[server]
		key := b.key(list, at)
		sd, ok := b.servers[server]
		if !ok || sd.key != key || len(sd.docs) != len(at) {
			changed = true
			if a == nil {
				a = newAnalyzer()
			}
			sd = serverDocs{key: key, docs: make([]*doc, len(at))}
			for j, i := range at {
				sd.docs[j] = analyse(a, list[i])
			}
		}
		for j, i := range at {
			docs[i] = sd.docs[j]
		}
		next[server] = sd
	}
	b.servers = next
	if !changed {
		return b.last, false
	}
	b.last = combine(docs, b.lex)
	return b.last, true
}

// key hashes what the index reads of the tools of list at, in order.
func (b *Builder) key(list []tools.Tool, at []int) uint64 {
	var h maphash.Hash
	h.SetSeed(b.seed)
	for _, i := range at {
		t := list[i]
		for _, s := range []string{t.Name, t.OriginalName, t.Title, t.Description} {
			h.WriteString(s)
			h.WriteByte(0)
		}
		h.Write(t.InputSchema)
		h.WriteByte(0)
	}
	return h.Sum64()
}

// analyse turns one tool into its terms, within the bounds of one tool.
func analyse(a *analyzer, t tools.Tool) *doc {
	name := t.OriginalName
	if name == "" {
		name = t.Name
	}
	schema := walkSchema(t.InputSchema)
	texts := [numFields][]string{
		fieldName:        {cut(name, maxNameBytes)},
		fieldServer:      {cut(t.Server, maxNameBytes)},
		fieldTitle:       {cut(t.Title, maxTitleBytes)},
		fieldDescription: {cut(t.Description, maxDescriptionBytes)},
		fieldParamNames:  schema.names,
		fieldParamDescs:  schema.descs,
	}
	d := &doc{tool: t}
	at := map[string]int{} // term → its index in d.terms
	for f, parts := range texts {
		d.lens[f] = float32(d.read(a, f, parts, at))
	}
	d.terms = slices.Clip(d.terms)
	return d
}

// fieldTermShare is, per field, how many distinct terms the tool may hold
// when the field's reading stops: a description that fills the tool's
// terms leaves room for its parameters.
var fieldTermShare = [numFields]int{
	fieldName: maxToolTerms, fieldServer: maxToolTerms, fieldTitle: maxToolTerms,
	fieldDescription: maxToolTerms * 5 / 8, fieldParamNames: maxToolTerms * 4 / 5, fieldParamDescs: maxToolTerms,
}

// read adds the terms of field f's texts to d and returns how many it
// read. It stops at maxFieldTerms terms, or at the first new term past
// the field's share of distinct terms: the text after it is not
// analysed, which bounds the work of a build by the terms kept, however
// long or varied the text.
func (d *doc) read(a *analyzer, f int, parts []string, at map[string]int) int {
	n := 0
	for _, s := range parts {
		for w := range words(s) {
			if n >= maxFieldTerms {
				return n
			}
			term := a.term(w)
			if term == "" {
				continue
			}
			k, ok := at[term]
			if !ok {
				if len(d.terms) >= fieldTermShare[f] {
					return n
				}
				k = len(d.terms)
				at[term] = k
				d.terms = append(d.terms, docTerm{term: term})
			}
			d.terms[k].count[f]++
			if f == fieldName && !slices.Contains(d.nameTerms, term) {
				d.nameTerms = append(d.nameTerms, term)
			}
			n++
		}
	}
	return n
}
