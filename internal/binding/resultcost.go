package binding

import (
	"fmt"

	"github.com/openprogram/mcpvisor/adapter"
	"github.com/openprogram/mcpvisor/tools"
)

// The memory one check of a structured result may take. jsonschema-go
// allocates for every subschema it applies to every value (some 80 bytes
// even when all pass), prints the value into the error of every branch it
// tries and drops (anyOf, oneOf, not, if, contains: see branchKeywords),
// and copies a failure's error, value included, at every level it wraps
// it. What a check allocates thus grows with the result's size, times its
// depth, times the branches the schema tries on each value: a valid 3.9 MB
// result 60 deep against an "any JSON value" schema (a recursive anyOf of
// the JSON types) allocated 8 GB in one check.
//
// So a result is checked only when its cost,
//
//	bytes × (depth + 10) × (1 + 4 × branches × (depth + 1))
//
// is at most MaxResultCheckCost (10 000 000); bytes is the structured
// content's JSON size, depth its nesting of objects and arrays, branches
// the schema's paths that end in a branch keyword (a recursion counted
// once: what it tries per level; a branch named by a long $id, $anchor or
// path counts one more per 64 bytes of it). A failed branch's error holds
// the errors below it, so a failing check grows with the square of the
// depth. Measured on the worst cases found (TestResultCheckCostBoundsMemory),
// one check at the bound allocates at most 38 MiB in all (tiny values
// against a flat schema); under it, a flat schema checks 900 KB of tiny
// values or a 750 KB table of rows (depth 3), an "any JSON value" schema
// (6 branches) 18 KB 1 deep, 5 KB 5 deep, 200 bytes 40 deep. A result
// past the bound is passed on unchecked, with
// Details[adapter.DetailOutputSchemaUnchecked] saying so: it is not a
// mismatch, since a legitimate tool may return a large table.
const MaxResultCheckCost = 10_000_000

// checkCost is the cost above, saturated just past MaxResultCheckCost so
// that it cannot overflow (bytes are bounded by the response size, depth
// by the JSON decoder, branches by MaxOutputSchemaPaths: each factor fits,
// their product may not).
func checkCost(bytes, depth, branches int) int {
	c := bytes * (depth + 10)
	if c > MaxResultCheckCost {
		return MaxResultCheckCost + 1
	}
	return min(c*(1+4*branches*(depth+1)), MaxResultCheckCost+1)
}

// unchecked marks res as passed on without a check, naming the bound.
func unchecked(res *tools.Result, depth, branches int) {
	if res.Details == nil {
		res.Details = map[string]any{}
	}
	res.Details[adapter.DetailOutputSchemaUnchecked] = fmt.Sprintf(
		"not checked against the output schema: %d bytes × (depth %d + 10) × (1 + 4 × %d branches × (depth + 1)) is past MaxResultCheckCost (%d)",
		len(res.StructuredContent), depth, branches, MaxResultCheckCost)
}

// depthOf is the nesting of objects and arrays of v, as decoded from JSON
// (a scalar is 0, [] is 1).
func depthOf(v any) int {
	most := 0
	switch v := v.(type) {
	case map[string]any:
		for _, c := range v {
			most = max(most, depthOf(c))
		}
	case []any:
		for _, c := range v {
			most = max(most, depthOf(c))
		}
	default:
		return 0
	}
	return most + 1
}
