package binding

import (
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/openprogram/mcpvisor/adapter"
	"github.com/openprogram/mcpvisor/tools"
)

// checkMemoryBudget is what one check at MaxResultCheckCost may allocate
// in the worst cases below.
const checkMemoryBudget = 64 << 20

// anyJSONValue is the "any JSON value" schema: a recursive anyOf of the
// JSON types, which tries six branches on every value.
const anyJSONValue = `{"$ref":"#/$defs/v","$defs":{"v":{"anyOf":[{"type":"null"},{"type":"boolean"},{"type":"number"},
	{"type":"string"},{"type":"array","items":{"$ref":"#/$defs/v"}},{"type":"object","additionalProperties":{"$ref":"#/$defs/v"}}]}}}`

// costCase is a schema and a family of results growing with n.
type costCase struct {
	name, schema string
	result       func(n int) string
}

// nest wraps inner in depth arrays.
func nest(depth int, inner string) string {
	return strings.Repeat("[", depth) + inner + strings.Repeat("]", depth)
}

// list is n copies of item, comma-separated, then last.
func list(n int, item, last string) string {
	return "[" + strings.Repeat(item+",", n) + last + "]"
}

// The worst cases found: many tiny values (per-value cost), a wide value
// deep down that fails (its error, value printed, copied at every level),
// many branches tried on one value, and those against a recursive anyOf;
// each valid and invalid.
var costCases = []costCase{
	{"flat, tiny values, valid", `{"type":"array","items":{"type":"number"}}`,
		func(n int) string { return list(n, "0", "0") }},
	{"flat, tiny values, last fails", `{"type":"array","items":{"type":"number"}}`,
		func(n int) string { return list(n, "0", `"x"`) }},
	{"flat, wide object 62 deep fails", `{"type":"array","items":{"$ref":"#"}}`,
		func(n int) string { return nest(61, `{"a":`+list(n, `"abcdefgh"`, `"x"`)+`}`) }},
	{"flat table, valid", `{"type":"object","properties":{"rows":{"type":"array","items":{"type":"array","items":{"type":"string"}}}}}`,
		func(n int) string { return `{"rows":` + list(n, `["a","b","c"]`, `["d"]`) + `}` }},
	{"any value, tiny values, valid", anyJSONValue,
		func(n int) string { return list(n, "0", "0") }},
	{"any value, wide 40 deep, valid", anyJSONValue,
		func(n int) string { return nest(39, list(n, `"abcdefgh"`, "0")) }},
	{"any value without null, tiny values, last fails", strings.Replace(anyJSONValue, `{"type":"null"},`, "", 1),
		func(n int) string { return nest(30, list(n, "0", "null")) }},
	{"anyOf of 1000 branches, wide", `{"anyOf":[` + strings.Repeat(`{"type":"null"},`, 1000) + `{"type":"array"}]}`,
		func(n int) string { return list(n, "0", "0") }},
	{"recursive anyOf of 100 branches, 10 deep", `{"anyOf":[` + strings.Repeat(`{"type":"null"},`, 100) + `{"type":"array","items":{"$ref":"#"}}]}`,
		func(n int) string { return nest(9, list(n, "[]", "[]")) }},
	{"anyOf of 50 long-named branches, deepening, fails", longNamed(50),
		func(n int) string { return nest(n, "true") }},
	{"anyOf of 400 long-named branches, deepening, fails", longNamed(400),
		func(n int) string { return nest(n, "true") }},
	{"any value without null, wide 20 deep, last fails", strings.Replace(anyJSONValue, `{"type":"null"},`, "", 1),
		func(n int) string { return nest(19, list(n, `"abcdefgh"`, "null")) }},
	{"any value without null, wide 5 deep, last fails", strings.Replace(anyJSONValue, `{"type":"null"},`, "", 1),
		func(n int) string { return nest(4, list(n, `"abcdefgh"`, "null")) }},
	{"any value without null, tiny values, wide 2 deep fails", strings.Replace(anyJSONValue, `{"type":"null"},`, "", 1),
		func(n int) string { return list(n, "[0]", "[null]") }},
	{"contains and not, 30 deep, fails", `{"type":"array","contains":{"not":{"type":"null"}},"items":{"$ref":"#"}}`,
		func(n int) string { return nest(30, list(n, "[0]", "[0]")) }},
}

// sized is c's result for n, decoded, and its cost against check.
func sized(t *testing.T, c costCase, check *compiledSchema, n int) (json.RawMessage, any, int) {
	t.Helper()
	raw := json.RawMessage(c.result(n))
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("%s: %v", c.name, err)
	}
	return raw, v, checkCost(len(raw), depthOf(v), check.branches)
}

// longNamed is a recursive anyOf whose k failing branches have the
// longest names a schema may give them (errors quote them at every level).
func longNamed(k int) string {
	var branches []string
	for i := range k {
		branches = append(branches, fmt.Sprintf(`{"$anchor":"a%d%s","type":"null"}`, i, strings.Repeat("x", MaxOutputSchemaName-10)))
	}
	return `{"anyOf":[` + strings.Join(branches, ",") + `,{"type":"array","items":{"$ref":"#"}}]}`
}

// atBound is the largest n whose result of c costs at most
// MaxResultCheckCost against check.
func atBound(t *testing.T, c costCase, check *compiledSchema) int {
	t.Helper()
	over := func(n int) bool { _, _, k := sized(t, c, check, n); return k > MaxResultCheckCost }
	if over(0) {
		t.Fatalf("%s: the smallest result is past the bound", c.name)
	}
	lo, hi := 0, 1
	for !over(hi) {
		if lo, hi = hi, 2*hi; hi > 1<<24 {
			t.Fatalf("%s: no result of up to %d parts is past the bound", c.name, hi)
		}
	}
	for hi-lo > 1 {
		if mid := (lo + hi) / 2; over(mid) {
			hi = mid
		} else {
			lo = mid
		}
	}
	return lo
}

// allocated is what f allocates, after a GC.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// At the bound, every worst case found is checked (not passed unchecked)
// and allocates under checkMemoryBudget (measured with MemStats.TotalAlloc
// around one call of result, after a GC).
func TestResultCheckCostBoundsMemory(t *testing.T) {
	_, b, _ := resultTools(t)
	conn := b.Current()
	for _, c := range costCases {
		compiled, err := compileOutputSchema(json.RawMessage(c.schema))
		if err != nil {
			t.Fatalf("%s: compile: %v", c.name, err)
		}
		check := &outputCheck{schema: c.schema, compiled: compiled}
		raw, v, _ := sized(t, c, compiled, atBound(t, c, compiled))
		var res tools.Result
		got := allocated(func() { res = result(conn, check, &mcp.CallToolResult{StructuredContent: v}, raw) })
		t.Logf("%-50s %8d bytes, depth %2d, %4d branches: %5.1f MiB, mismatch %v", c.name, len(raw), depthOf(v), compiled.branches,
			float64(got)/(1<<20), res.Details[adapter.DetailOutputSchemaMismatch] == true)
		if _, ok := res.Details[adapter.DetailOutputSchemaUnchecked]; ok {
			t.Errorf("%s: at the bound, passed unchecked", c.name)
		}
		if wantBad := strings.Contains(c.name, "fails"); res.IsError != wantBad {
			t.Errorf("%s: IsError %v, want %v", c.name, res.IsError, wantBad)
		}
		if got > checkMemoryBudget {
			t.Errorf("%s: one check allocated %d MiB, budget %d MiB", c.name, got>>20, checkMemoryBudget>>20)
		}
	}
}

// A result just over the bound passes unchecked, whole, and says so,
// naming the bound; one at the bound is still checked, and its mismatch
// caught.
func TestResultPastCheckCostPassesUnchecked(t *testing.T) {
	_, b, _ := resultTools(t)
	conn := b.Current()
	for _, c := range []costCase{costCases[1], costCases[6]} { // flat and any value, each whose last value fails
		compiled, err := compileOutputSchema(json.RawMessage(c.schema))
		if err != nil {
			t.Fatalf("%s: compile: %v", c.name, err)
		}
		check := &outputCheck{schema: c.schema, compiled: compiled}
		n := atBound(t, c, compiled)

		raw, v, _ := sized(t, c, compiled, n)
		res := result(conn, check, &mcp.CallToolResult{StructuredContent: v}, raw)
		if !res.IsError || res.Details[adapter.DetailOutputSchemaMismatch] != true {
			t.Errorf("%s at the bound: %+v, want the mismatch caught", c.name, res.Details)
		}

		raw, v, _ = sized(t, c, compiled, n+1)
		res = result(conn, check, &mcp.CallToolResult{StructuredContent: v}, raw)
		why, _ := res.Details[adapter.DetailOutputSchemaUnchecked].(string)
		if res.IsError || res.Details[adapter.DetailOutputSchemaMismatch] != nil || string(res.StructuredContent) != string(raw) {
			t.Errorf("%s past the bound: IsError %v, details %v, want it passed on whole", c.name, res.IsError, res.Details)
		}
		if !strings.Contains(why, "MaxResultCheckCost") {
			t.Errorf("%s past the bound: %s = %q, want a reason naming the bound", c.name, adapter.DetailOutputSchemaUnchecked, why)
		}
	}
}

// The case measured before the bound: a valid 3.9 MB result 60 deep
// against "any JSON value" allocated 8 GB in one check. It now passes
// unchecked, and costs what converting it costs.
func TestLargeDeepResultAgainstAnyValueIsNotChecked(t *testing.T) {
	_, b, _ := resultTools(t)
	compiled, err := compileOutputSchema(json.RawMessage(anyJSONValue))
	if err != nil {
		t.Fatal(err)
	}
	raw := json.RawMessage(nest(59, list(355_000, `"abcdefgh"`, "0")))
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	var res tools.Result
	got := allocated(func() {
		res = result(b.Current(), &outputCheck{schema: anyJSONValue, compiled: compiled}, &mcp.CallToolResult{StructuredContent: v}, raw)
	})
	if _, ok := res.Details[adapter.DetailOutputSchemaUnchecked]; !ok || res.IsError || got > checkMemoryBudget {
		t.Errorf("%d bytes: allocated %d MiB, details %v, want it passed on unchecked within %d MiB", len(raw), got>>20, res.Details, checkMemoryBudget>>20)
	}
}

// The cost saturates rather than overflows at the largest inputs.
func TestCheckCostSaturates(t *testing.T) {
	if got := checkCost(16<<20, 10_000, MaxOutputSchemaPaths+1); got != MaxResultCheckCost+1 {
		t.Errorf("checkCost at the largest inputs = %d, want %d", got, MaxResultCheckCost+1)
	}
	if got := checkCost(1000, 4, 0); got != 14_000 {
		t.Errorf("checkCost(1000, 4, 0) = %d, want 14000", got)
	}
}
