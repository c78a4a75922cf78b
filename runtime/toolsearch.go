package runtime

import (
	"encoding/json"
	"fmt"
	"path"
	"slices"

	"github.com/openprogram/mcpvisor/internal/toolsearch"
	"github.com/openprogram/mcpvisor/tools"
)

// ToolSearch is the deferred tool mode (Options.ToolSearch): instead of
// every tool, the host hands its model a search_tools tool and the tools
// it pins; the model finds the others by searching and calls them by
// name. The zero value is off.
type ToolSearch struct {
	// Enabled turns the mode on: ModelTools returns search_tools and the
	// pinned tools. Off, ModelTools returns every model tool (Tools).
	Enabled bool
	// Pinned are the registry names of the tools always handed to the
	// model beside search_tools, or globs over them (path.Match syntax:
	// "fs__*", "github__get_?ssue"). A bad glob fails Start. Default none.
	Pinned []string
	// Limit is how many tools a search_tools answer holds when the model
	// does not say: default 5, at most MaxSearchLimit.
	Limit int
}

// SearchToolName is the registry name of the deferred mode's search
// tool. A server's tools are always named "{server}__{tool}", so none can
// take it.
const SearchToolName = "search_tools"

// Bounds of a search: its default and largest number of matches (the
// HTTP route and search_tools take a limit up to it), and the largest
// query (SearchTools reads no further; the route refuses a longer q).
const (
	defaultSearchLimit     = 10
	defaultToolSearchLimit = 5
	MaxSearchLimit         = 50
	MaxSearchQueryBytes    = toolsearch.MaxQueryBytes
)

// ToolMatch is one tool that SearchTools found, with its score (higher is
// better; only the order means something). In JSON it is the tool's own
// fields and "score".
type ToolMatch struct {
	tools.Tool
	Score float64 `json:"score"`
}

func (o *ToolSearch) setDefaults() error {
	// The host keeps its slice: a copy, so that changing it later is
	// neither a race nor a change of the pins.
	o.Pinned = slices.Clone(o.Pinned)
	for i, p := range o.Pinned {
		if _, err := path.Match(p, ""); err != nil {
			return fmt.Errorf("%w: ToolSearch.Pinned[%d] %q: %v", ErrInvalidOptions, i, p, err)
		}
	}
	switch {
	case o.Limit == 0:
		o.Limit = defaultToolSearchLimit
	case o.Limit < 0 || o.Limit > MaxSearchLimit:
		return fmt.Errorf("%w: ToolSearch.Limit %d is not between 1 and %d", ErrInvalidOptions, o.Limit, MaxSearchLimit)
	}
	return nil
}

// pins reports whether the tool registered as name is pinned.
func (o *ToolSearch) pins(name string) bool {
	return slices.ContainsFunc(o.Pinned, func(p string) bool {
		ok, _ := path.Match(p, name) // checked in setDefaults
		return ok
	})
}

// SearchTools ranks the model's tools (those Tools returns) for query and
// returns the best limit of them, best first; nil when none matches. It
// ranks with BM25F over each tool's name (split into words), server name,
// title, description and input schema (property names and descriptions),
// with English stemming and a table of general synonyms, a tool whose
// name's words the query says ranking higher; a query that is a tool's
// exact registry or original name ranks that tool first. A limit of
// 0 or less means the default, 10; more than MaxSearchLimit means
// MaxSearchLimit. Only the first MaxSearchQueryBytes of query and its
// first 32 distinct words count.
//
// The index is rebuilt in the background after every change of the
// registry, never on a search (with ToolSearch off it is first built for
// the first search, which waits for it: a runtime nobody searches holds
// no index), but a search answers only tools that are
// the registry's current entry for their name (and the current entry, not
// the indexed copy): a tool just removed or filtered out is never found,
// one just added may be missing for the time of a rebuild.
func (r *Runtime) SearchTools(query string, limit int) []ToolMatch {
	switch {
	case limit <= 0:
		limit = defaultSearchLimit
	case limit > MaxSearchLimit:
		limit = MaxSearchLimit
	}
	return r.searchCurrent(query, limit, 0, nil)
}

// searchCurrent asks the index for limit+extra matches and keeps, best
// first, at most limit of those still registered as indexed (one map
// lookup each) that skip does not leave out.
func (r *Runtime) searchCurrent(query string, limit, extra int, skip func(tools.Tool) bool) []ToolMatch {
	r.wantSearch()
	select {
	case <-r.searchBuilt:
	case <-r.stopWatch: // the index as it was (empty if never built)
	}
	var out []ToolMatch
	for _, m := range r.search.Load().Search(query, limit+extra) {
		cur, ok := r.registry.Get(m.Tool.Name)
		if !ok || cur.Server != m.Tool.Server || cur.OriginalName != m.Tool.OriginalName || !cur.ForModel() ||
			(skip != nil && skip(cur)) {
			continue
		}
		out = append(out, ToolMatch{Tool: cur, Score: m.Score})
		if len(out) == limit {
			break
		}
	}
	return out
}

// wantSearch starts the index (indexTools) if it has not started.
func (r *Runtime) wantSearch() { r.searchOnce.Do(func() { close(r.searchWanted) }) }

// indexTools keeps r.search in step with the registry until Shutdown
// begins: a rebuild after each (coalesced) change, which re-analyses only
// the servers whose tools changed and keeps the index when the model's
// tools are what they were (a re-listing that changed nothing). With
// ToolSearch off it waits for the first search before the first build:
// the index costs tens of KiB per server (P2) that a host which never
// searches should not hold.
func (r *Runtime) indexTools(sub *tools.Subscription) {
	defer sub.Close()
	if r.opts.ToolSearch.Enabled {
		r.wantSearch()
	}
	select {
	case <-r.searchWanted:
	case <-r.stopWatch:
		return
	}
	b := toolsearch.NewBuilder()
	built := ^uint64(0) // no version yet
	for first := true; ; first = false {
		if v := r.registry.Version(); v != built {
			built = v
			if idx, changed := b.Build(r.Tools()); changed {
				r.search.Store(idx)
			}
		}
		if first {
			close(r.searchBuilt)
		}
		select {
		case <-sub.C:
		case <-r.stopWatch:
			return
		}
	}
}

// ModelTools returns exactly the tools a host hands its model. With
// Options.ToolSearch off, that is Tools. With it on, it is the
// search_tools tool (SearchToolName) followed by the pinned tools, sorted
// by name; every other tool stays callable by name through CallTool, and
// the model learns of them from search_tools' answers.
func (r *Runtime) ModelTools() []tools.Tool {
	list := r.Tools()
	if !r.opts.ToolSearch.Enabled {
		return list
	}
	out := []tools.Tool{r.searchTool()}
	for _, t := range list {
		if r.opts.ToolSearch.pins(t.Name) {
			out = append(out, t)
		}
	}
	return out
}

// searchTool is the deferred mode's search_tools: the model's query in,
// the matching tools' names, descriptions and input schemas out, as
// compact JSON text.
func (r *Runtime) searchTool() tools.Tool {
	t := tools.NewTool(SearchToolName, "", SearchToolName,
		"Search the tools available to you that are not listed here. Describe what you want to do in a few words; "+
			"the answer lists the best matching tools with their names, descriptions and input schemas. "+
			"Then call a tool by its name with arguments that fit its input schema.",
		json.RawMessage(fmt.Sprintf(`{"type":"object","properties":{"query":{"type":"string","description":"what you want to do, in a few words"},`+
			`"limit":{"type":"integer","minimum":1,"maximum":%d,"description":"how many tools to return (default %d)"}},"required":["query"]}`,
			MaxSearchLimit, r.opts.ToolSearch.Limit)),
		tools.ExecutorFunc(r.runSearchTool))
	t.Visibility = []string{tools.VisibleToModel}
	return t
}
