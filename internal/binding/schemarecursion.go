package binding

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Recursion whose cost the result chooses. A recursive schema (a $ref
// back to a schema that encloses it) is checked in time linear in the
// result when every part of the result is reached by one path of the
// recursion: a tree whose "left" and "right" properties, or whose
// "items", refer back to the node. It costs 2^depth when two paths of the
// recursion step into the same part of a value and come back
// ({"anyOf":[{"items":{"$ref":"#"}},{"items":{"$ref":"#"}}]} checks every
// element twice at every level, so a result 40 deep and a few bytes long
// runs for hours), and depth^k when k recursions, each reached from the
// previous one, go on over the same parts of a result. Validate takes no
// context, so checkRecursion refuses both, conservatively:
//
// Each descending edge steps into a part of the value: a named property
// (properties/NAME); any member of an object (additionalProperties,
// patternProperties, propertyNames, unevaluatedProperties), which overlaps
// every member; any element of an array (items, prefixItems/N,
// additionalItems, contains, unevaluatedItems), which overlaps every
// element. A recursion is a set of subschemas that reach each other
// (a strongly connected component of the applicator graph).
//
//  1. From each subschema of a recursion, the paths that stay in it up to
//     their first step (edges in place, then one descending edge back
//     into the recursion) step into pairwise distinct parts: no two share
//     a named property, and an "any" step is the only one of its kind.
//     Then each part of a result is reached by at most one path of the
//     recursion from each subschema it enters at.
//  2. When a recursion reaches another one, no subschemas p of the first
//     and q of the second and sequence of parts w are such that p reaches
//     p over w, q reaches q over w, and p reaches q over w (each part of
//     w a step of all three). Then the two never go on together over more
//     levels of a result than there are states in their product. (The
//     check looks first for a common cycle of the two, which most
//     schemas have none of, then searches the product of the three.)
//
// When both hold, a value is reached by a number of paths bounded by the
// schema alone (the automata of Weber and Seidl are finitely ambiguous
// exactly when neither pattern occurs), so a check costs the result's
// size times a constant the other bounds keep small.
//
// A schema that fails either, or whose products are too large to search
// (maxRecursionProduct), is unusable.
var errRecursionBranches = errors.New("output schema recursion branches on one value")

// maxRecursionProduct bounds the states the products of rule 2 may visit,
// all pairs of recursions together, and maxRecursionReach the subschemas
// visited to find which recursion reaches which; past either the schema
// is unusable.
const (
	maxRecursionProduct = 100_000
	maxRecursionReach   = 1_000_000
)

type stepTo struct{ step, to string }

type recursions struct {
	g       *schemaGraph
	comp    map[string]int // node -> index of its component
	members [][]string
	memo    map[string]map[stepTo]int
	anyMemo map[string]map[stepTo]bool
}

// checkRecursion applies both rules; recursive reports whether the schema
// has a recursion at all.
func (g *schemaGraph) checkRecursion() (recursive bool, err error) {
	r := &recursions{g: g, comp: map[string]int{}, memo: map[string]map[stepTo]int{}, anyMemo: map[string]map[stepTo]bool{}}
	r.components()
	cyclic := make([]bool, len(r.members))
	for c, m := range r.members {
		cyclic[c] = len(m) > 1
		if !cyclic[c] {
			continue
		}
		recursive = true
		for _, n := range m {
			if err := r.distinctSteps(n); err != nil {
				return true, err
			}
		}
	}
	budget, reach := maxRecursionProduct, maxRecursionReach
	for c1, m := range r.members {
		if !cyclic[c1] {
			continue
		}
		reached := r.reached(m, &reach)
		if reach < 0 {
			return true, fmt.Errorf("%w: its recursions are too many to check", errRecursionBranches)
		}
		for c2 := range reached {
			if c2 == c1 || !cyclic[c2] {
				continue
			}
			if r.commonCycle(c1, c2, &budget) && r.entersAlong(c1, c2, &budget) {
				if budget < 0 {
					return true, fmt.Errorf("%w: its recursions are too many to check", errRecursionBranches)
				}
				return true, fmt.Errorf("%w: the recursion at %s leads to the one at %s over the same parts of a result",
					errRecursionBranches, pointerName(r.members[c1][0]), pointerName(r.members[c2][0]))
			}
		}
	}
	return recursive, nil
}

// components finds the strongly connected components (Tarjan's).
func (r *recursions) components() {
	index, low := map[string]int{}, map[string]int{}
	onStack := map[string]bool{}
	var stack []string
	var visit func(string)
	visit = func(n string) {
		index[n], low[n] = len(index), len(index)
		stack = append(stack, n)
		onStack[n] = true
		for _, e := range r.g.edges[n] {
			if _, seen := index[e.to]; !seen {
				visit(e.to)
				low[n] = min(low[n], low[e.to])
			} else if onStack[e.to] {
				low[n] = min(low[n], index[e.to])
			}
		}
		if low[n] != index[n] {
			return
		}
		var m []string
		for {
			top := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			onStack[top] = false
			r.comp[top] = len(r.members)
			m = append(m, top)
			if top == n {
				break
			}
		}
		slices.Sort(m) // errors name the outermost subschema
		r.members = append(r.members, m)
	}
	visit("")
}

// steps counts the paths from n that stay in its component up to their
// first step, by step and target; counts saturate at 2.
func (r *recursions) steps(n string) map[stepTo]int {
	if s, ok := r.memo[n]; ok {
		return s
	}
	out := map[stepTo]int{}
	for _, e := range r.g.edges[n] {
		if r.comp[e.to] != r.comp[n] {
			continue // never comes back
		}
		if e.descend {
			k := stepTo{e.step, e.to}
			out[k] = min(out[k]+1, 2)
			continue
		}
		for k, c := range r.steps(e.to) { // in place: acyclic, loops has passed
			out[k] = min(out[k]+c, 2)
		}
	}
	r.memo[n] = out
	return out
}

// distinctSteps is rule 1 at n.
func (r *recursions) distinctSteps(n string) error {
	byStep := map[string]int{}
	for k, c := range r.steps(n) {
		byStep[k.step] += c
	}
	for s, c := range byStep {
		clash := c > 1
		if s == "o*" {
			for t := range byStep {
				clash = clash || t != s && t[0] == 'p'
			}
		}
		if clash {
			return fmt.Errorf("%w: two paths of the recursion at %s step into the same %s", errRecursionBranches, pointerName(n), partName(s))
		}
	}
	return nil
}

// reached is the set of components reachable from the nodes m. It spends
// budget per node.
func (r *recursions) reached(m []string, budget *int) map[int]bool {
	seen := map[string]bool{}
	out := map[int]bool{}
	var visit func(string)
	visit = func(n string) {
		seen[n] = true
		*budget--
		out[r.comp[n]] = true
		for _, e := range r.g.edges[n] {
			if !seen[e.to] {
				visit(e.to)
			}
		}
	}
	for _, n := range m {
		if !seen[n] {
			visit(n)
		}
	}
	return out
}

// commonCycle is rule 2 for components c1 and c2: whether their product
// of overlapping steps has a cycle. It spends budget per state and
// reports true when the budget runs out.
func (r *recursions) commonCycle(c1, c2 int, budget *int) bool {
	const open, done = 1, 2
	state := map[[2]string]int{}
	var visit func(x, y string) bool
	visit = func(x, y string) bool {
		if *budget--; *budget < 0 {
			return true
		}
		state[[2]string{x, y}] = open
		for s1 := range r.steps(x) {
			for s2 := range r.steps(y) {
				if !overlaps(s1.step, s2.step) {
					continue
				}
				switch state[[2]string{s1.to, s2.to}] {
				case open:
					return true
				case 0:
					if visit(s1.to, s2.to) {
						return true
					}
				}
			}
		}
		state[[2]string{x, y}] = done
		return false
	}
	for _, x := range r.members[c1] {
		for _, y := range r.members[c2] {
			if state[[2]string{x, y}] == 0 && visit(x, y) {
				return true
			}
		}
	}
	return false
}

// entersAlong is the search of rule 2 for components c1 and c2: whether
// some p of c1 reaches itself and q of c2 over a word over which q reaches
// itself. It spends budget per state and reports true when the budget
// runs out.
func (r *recursions) entersAlong(c1, c2 int, budget *int) bool {
	type triple struct{ x, y, z string }
	for _, p := range r.members[c1] {
		for _, q := range r.members[c2] {
			seen := map[triple]bool{}
			queue := []triple{{p, p, q}}
			for len(queue) > 0 {
				t := queue[0]
				queue = queue[1:]
				for s1 := range r.steps(t.x) {
					for s2 := range r.anySteps(t.y) {
						both := intersect(s1.step, s2.step)
						if both == "" {
							continue
						}
						for s3 := range r.steps(t.z) {
							if intersect(both, s3.step) == "" {
								continue
							}
							next := triple{s1.to, s2.to, s3.to}
							if next == (triple{p, q, q}) {
								return true
							}
							if !seen[next] {
								if *budget--; *budget < 0 {
									return true
								}
								seen[next] = true
								queue = append(queue, next)
							}
						}
					}
				}
			}
		}
	}
	return false
}

// anySteps is the set of first steps of the paths from n, wherever they
// lead.
func (r *recursions) anySteps(n string) map[stepTo]bool {
	if s, ok := r.anyMemo[n]; ok {
		return s
	}
	out := map[stepTo]bool{}
	for _, e := range r.g.edges[n] {
		if e.descend {
			out[stepTo{e.step, e.to}] = true
			continue
		}
		for k := range r.anySteps(e.to) {
			out[k] = true
		}
	}
	r.anyMemo[n] = out
	return out
}

// intersect is the part of a value both steps a and b can apply to, or ""
// when there is none.
func intersect(a, b string) string {
	switch {
	case a == b:
		return a
	case a == "o*" && b[0] == 'p':
		return b
	case b == "o*" && a[0] == 'p':
		return a
	}
	return ""
}

// overlaps reports whether steps a and b can apply to the same part of a
// value.
func overlaps(a, b string) bool {
	return intersect(a, b) != ""
}

func partName(step string) string {
	switch step {
	case "o*":
		return "object member"
	case "a*":
		return "array element"
	}
	return "property " + strconv.Quote(strings.NewReplacer("~1", "/", "~0", "~").Replace(step[2:]))
}

func pointerName(ptr string) string {
	return strconv.Quote("#" + ptr)
}
