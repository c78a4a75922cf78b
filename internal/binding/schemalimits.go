package binding

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// Bounds on the output schemas the runtime checks results against. A
// server's schema is compiled on its server actor and applied to every
// result, so neither may take time or memory the server chooses; jsonschema-go
// itself has no bound (its decoder is quadratic in nesting depth, and its
// Validate takes no context and recurses without limit). A schema past any
// bound is unusable: its tool's results go unchecked, with one
// OutputSchemaUnusable event.
const (
	// MaxOutputSchemaBytes bounds an output schema's size (256 KiB).
	MaxOutputSchemaBytes = 256 << 10
	// MaxOutputSchemaDepth bounds its nesting of JSON objects and arrays
	// (64), checked by a byte scan before anything decodes it.
	MaxOutputSchemaDepth = 64
	// MaxOutputSchemaPaths bounds the subschemas one validation may apply
	// to one value of a result (10 000): every path through the schema's
	// applicators ($ref, allOf, anyOf, oneOf, not, if/then/else, and those
	// that step into the value: properties, items, ...) counts, so that a
	// small schema whose anyOf branches share a $ref at each of many levels
	// cannot make one check exponential. A $ref back to a schema that
	// encloses it (a recursive tree) counts once: its recursion is bounded
	// by the result's own depth, and checkRecursion refuses one that would
	// check a part of the result more than once per level.
	MaxOutputSchemaPaths = 10_000
	// MaxOutputSchemaChain bounds the subschemas one value goes through
	// without stepping into it (16): a chain of $refs or combinators. With
	// MaxOutputSchemaName and MaxCheckedResultDepth it bounds the error a
	// failed check builds, which jsonschema-go wraps with the name of every
	// subschema it went through, copying it at each one.
	MaxOutputSchemaChain = 16
	// MaxOutputSchemaName bounds the names jsonschema-go quotes for a
	// subschema in its errors (512 bytes): its JSON pointer, $id and
	// $anchor.
	MaxOutputSchemaName = 512
)

// errSchemaLoop is a schema that applies itself to the same value again
// without stepping into it (a $ref or combinator chain back to itself):
// jsonschema-go would recurse until the stack overflows, which kills the
// process.
var errSchemaLoop = errors.New("a $ref or combinator chain loops back to itself without stepping into the value")

// checkSchemaBytes is the cheap scan that runs before any decoding: size
// and nesting depth, strings skipped.
func checkSchemaBytes(raw []byte) error {
	if len(raw) > MaxOutputSchemaBytes {
		return fmt.Errorf("output schema of %d bytes: at most %d are checked", len(raw), MaxOutputSchemaBytes)
	}
	depth, inString, escaped := 0, false, false
	for _, c := range raw {
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == '{' || c == '[':
			if depth++; depth > MaxOutputSchemaDepth {
				return fmt.Errorf("output schema nested deeper than %d", MaxOutputSchemaDepth)
			}
		case c == '}' || c == ']':
			depth--
		}
	}
	return nil
}

// Keywords whose subschemas apply to the same value as their schema, and
// those whose subschemas apply to a value inside it. "$defs" and
// "definitions" apply to nothing: they are reached through a $ref.
var (
	inPlaceOne   = []string{"not", "if", "then", "else"}
	inPlaceList  = []string{"allOf", "anyOf", "oneOf"}
	inPlaceMap   = []string{"dependentSchemas", "dependencies"}
	descendOne   = []string{"additionalProperties", "propertyNames", "items", "additionalItems", "contains", "unevaluatedItems", "unevaluatedProperties"}
	descendList  = []string{"prefixItems", "items"} // items is a list in draft-07
	descendMap   = []string{"properties", "patternProperties"}
	unfollowable = []string{"$dynamicRef", "$recursiveRef"}
	// branchKeywords are the applicators whose subschemas jsonschema-go
	// tries on a value that may fail them while the value matches: it
	// builds the failure's error, printing the value, and drops it.
	branchKeywords = []string{"anyOf", "oneOf", "not", "if", "contains"}
)

// schemaGraph is a schema's subschemas as nodes named by their JSON
// pointer from the document's root, and the applicator edges between them.
type schemaGraph struct {
	root  any
	edges map[string][]schemaEdge
	// anchors maps "$anchor" names (and draft-07 "$id": "#name") to their
	// node's pointer.
	anchors map[string]string
	rootID  string // the root's $id, without a fragment
}

type schemaEdge struct {
	to      string
	descend bool // the subschema applies to a value inside this one's
	// step is the part of the value a descending edge applies to (see
	// stepOf); "" for an edge that does not descend.
	step string
	// branch marks a subschema whose failure jsonschema-go builds an error
	// for and then drops (see branchKeywords).
	branch bool
}

// schemaShape is what a check's cost depends on: whether the schema
// recurses (see checkRecursion), and its branches (see
// schemaGraph.branches).
type schemaShape struct {
	recursive bool
	branches  int
}

// checkSchemaShape refuses a schema that loops without stepping into the
// value, or whose paths exceed MaxOutputSchemaPaths. raw has passed
// checkSchemaBytes and decoded; a $ref it cannot follow here (into an
// embedded resource with its own $id, or dynamic) makes it unusable
// rather than unchecked for cost.
func checkSchemaShape(raw []byte) (schemaShape, error) {
	g := &schemaGraph{edges: map[string][]schemaEdge{}, anchors: map[string]string{}}
	if err := json.Unmarshal(raw, &g.root); err != nil {
		return schemaShape{}, fmt.Errorf("decoding the output schema: %w", err)
	}
	if m, ok := g.root.(map[string]any); ok {
		if id, ok := m["$id"].(string); ok {
			g.rootID, _, _ = strings.Cut(id, "#")
		}
	}
	g.findAnchors(g.root, "")
	if err := g.build(g.root, ""); err != nil {
		return schemaShape{}, err
	}
	if g.loops() {
		return schemaShape{}, errSchemaLoop
	}
	if n := g.paths(); n > MaxOutputSchemaPaths {
		return schemaShape{}, fmt.Errorf("output schema with more than %d paths through its subschemas", MaxOutputSchemaPaths)
	}
	if g.chain() > MaxOutputSchemaChain {
		return schemaShape{}, fmt.Errorf("output schema with a chain of more than %d $refs or combinators on one value", MaxOutputSchemaChain)
	}
	recursive, err := g.checkRecursion()
	if err != nil {
		return schemaShape{}, err
	}
	return schemaShape{recursive: recursive, branches: g.branches()}, nil
}

func (g *schemaGraph) findAnchors(v any, ptr string) {
	switch v := v.(type) {
	case map[string]any:
		if a, ok := v["$anchor"].(string); ok {
			g.anchors[a] = ptr
		}
		if id, ok := v["$id"].(string); ok && strings.HasPrefix(id, "#") {
			g.anchors[id[1:]] = ptr
		}
		for k, c := range v {
			g.findAnchors(c, ptr+"/"+escapePointer(k))
		}
	case []any:
		for i, c := range v {
			g.findAnchors(c, ptr+"/"+strconv.Itoa(i))
		}
	}
}

// build records the edges of the subschema v at ptr and of every
// subschema it applies (the depth scan bounds the recursion).
func (g *schemaGraph) build(v any, ptr string) error {
	m, ok := v.(map[string]any)
	if !ok {
		return nil // a boolean schema applies nothing
	}
	if _, seen := g.edges[ptr]; seen {
		return nil
	}
	g.edges[ptr] = nil
	if len(ptr) > MaxOutputSchemaName {
		return fmt.Errorf("output schema with a subschema at a path of more than %d bytes", MaxOutputSchemaName)
	}
	for _, k := range []string{"$id", "$anchor", "$dynamicAnchor"} {
		if name, _ := m[k].(string); len(name) > MaxOutputSchemaName {
			return fmt.Errorf("output schema with a %s of more than %d bytes", k, MaxOutputSchemaName)
		}
	}
	if ptr != "" {
		if id, ok := m["$id"].(string); ok && !strings.HasPrefix(id, "#") {
			return fmt.Errorf("output schema with an embedded $id %q: its $refs are not followed", id)
		}
	}
	for _, k := range unfollowable {
		if _, ok := m[k]; ok {
			return fmt.Errorf("output schema with %s: not followed", k)
		}
	}
	var out []schemaEdge
	add := func(to string, descend, branch bool) {
		e := schemaEdge{to: to, descend: descend, branch: branch}
		if descend {
			e.step = stepOf(ptr, to)
		}
		out = append(out, e)
	}
	if ref, ok := m["$ref"].(string); ok {
		to, err := g.target(ref)
		if err != nil {
			return err
		}
		add(to, false, false)
	}
	each := func(keys []string, descend bool, kind byte) {
		for _, k := range keys {
			base := ptr + "/" + escapePointer(k)
			branch := slices.Contains(branchKeywords, k)
			switch c := m[k].(type) {
			case map[string]any:
				if kind == 'o' {
					add(base, descend, branch)
				} else if kind == 'm' {
					for name, s := range c {
						if _, schema := s.(map[string]any); schema {
							add(base+"/"+escapePointer(name), descend, branch)
						}
					}
				}
			case []any:
				if kind == 'l' {
					for i := range c {
						add(base+"/"+strconv.Itoa(i), descend, branch)
					}
				}
			}
		}
	}
	each(inPlaceOne, false, 'o')
	each(inPlaceList, false, 'l')
	each(inPlaceMap, false, 'm')
	each(descendOne, true, 'o')
	each(descendList, true, 'l')
	each(descendMap, true, 'm')
	g.edges[ptr] = out
	for _, e := range out {
		if err := g.build(g.at(e.to), e.to); err != nil {
			return err
		}
	}
	return nil
}

// target is the pointer of the node ref names, for the refs the check can
// follow: a fragment ("#", "#/pointer", "#anchor"), alone or after the
// root's $id.
func (g *schemaGraph) target(ref string) (string, error) {
	u, err := url.Parse(ref)
	if err != nil {
		return "", fmt.Errorf("output schema $ref %q: %w", ref, err)
	}
	frag := u.Fragment
	u.Fragment = ""
	if base := u.String(); base != "" && base != g.rootID {
		return "", fmt.Errorf("output schema $ref %q: only refs within the schema are followed", ref)
	}
	if frag != "" && !strings.HasPrefix(frag, "/") {
		if ptr, ok := g.anchors[frag]; ok {
			return ptr, nil
		}
		return "", fmt.Errorf("output schema $ref %q: no such anchor", ref)
	}
	if g.at(frag) == nil {
		return "", fmt.Errorf("output schema $ref %q: no such subschema", ref)
	}
	return frag, nil
}

// at is the value at JSON pointer ptr, or nil.
func (g *schemaGraph) at(ptr string) any {
	v := g.root
	if ptr == "" {
		return v
	}
	for _, tok := range strings.Split(ptr[1:], "/") {
		tok = strings.NewReplacer("~1", "/", "~0", "~").Replace(tok)
		switch c := v.(type) {
		case map[string]any:
			v = c[tok]
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(c) {
				return nil
			}
			v = c[i]
		default:
			return nil
		}
	}
	return v
}

func escapePointer(s string) string {
	return strings.NewReplacer("~", "~0", "/", "~1").Replace(s)
}

// loops reports whether the edges that do not step into the value form a
// cycle.
func (g *schemaGraph) loops() bool {
	const (
		open = 1
		done = 2
	)
	state := map[string]int{}
	var visit func(string) bool
	visit = func(n string) bool {
		state[n] = open
		for _, e := range g.edges[n] {
			if e.descend {
				continue
			}
			if state[e.to] == open || state[e.to] == 0 && visit(e.to) {
				return true
			}
		}
		state[n] = done
		return false
	}
	for n := range g.edges {
		if state[n] == 0 && visit(n) {
			return true
		}
	}
	return false
}

// chain is the length of the longest path of edges that do not step into
// the value (acyclic: loops has passed).
func (g *schemaGraph) chain() int {
	memo := map[string]int{}
	var longest func(string) int
	longest = func(n string) int {
		if l, ok := memo[n]; ok {
			return l
		}
		l := 0
		for _, e := range g.edges[n] {
			if !e.descend {
				l = max(l, 1+longest(e.to))
			}
		}
		memo[n] = l
		return l
	}
	most := 0
	for n := range g.edges {
		most = max(most, longest(n))
	}
	return most
}

// paths counts the root's paths through the graph, memoized; an edge back
// to a node on the current path (recursion, which steps into the value,
// since loops has passed) counts one. The count saturates just past the
// bound.
func (g *schemaGraph) paths() int {
	return g.count(1, func(schemaEdge) int { return 0 }, 1)
}

// branches counts the root's paths that end in a branch edge (see
// branchKeywords), as paths does: a recursion counts once, so this is the
// branches tried on a value per level of the result. A branch counts one
// more per 64 bytes of its name, which the errors of a failed check quote
// at every level. It saturates just past MaxOutputSchemaPaths.
func (g *schemaGraph) branches() int {
	return g.count(0, func(e schemaEdge) int {
		if e.branch {
			return 1 + g.nameOf(e.to)/64
		}
		return 0
	}, 0)
}

// count sums over the root's paths, memoized: node counts a node, edge an
// edge, back an edge to a node on the current path (not followed). The sum
// saturates just past MaxOutputSchemaPaths.
func (g *schemaGraph) count(node int, edge func(schemaEdge) int, back int) int {
	memo := map[string]int{}
	onPath := map[string]bool{}
	var sum func(string) int
	sum = func(n string) int {
		if c, ok := memo[n]; ok {
			return c
		}
		onPath[n] = true
		total := node
		for _, e := range g.edges[n] {
			total += edge(e)
			if onPath[e.to] {
				total += back
			} else {
				total += sum(e.to)
			}
			total = min(total, MaxOutputSchemaPaths+1)
		}
		onPath[n] = false
		memo[n] = total
		return total
	}
	return sum("")
}

// nameOf is the length of the longest name jsonschema-go gives the
// subschema at ptr in its errors: its $id, $anchor or pointer.
func (g *schemaGraph) nameOf(ptr string) int {
	n := len(ptr) + 1
	if m, ok := g.at(ptr).(map[string]any); ok {
		for _, k := range []string{"$id", "$anchor", "$dynamicAnchor"} {
			if name, _ := m[k].(string); len(name) > n {
				n = len(name)
			}
		}
	}
	return n
}

// stepOf labels the descending edge from ptr to its subschema to with the
// part of the value it applies to: "p:NAME" for a named property, "o*" for
// any member of an object, "a*" for any element of an array (see
// checkRecursion).
func stepOf(ptr, to string) string {
	key, sub, _ := strings.Cut(to[len(ptr)+1:], "/")
	switch key {
	case "properties":
		return "p:" + sub
	case "additionalProperties", "patternProperties", "propertyNames", "unevaluatedProperties":
		return "o*"
	}
	return "a*"
}
