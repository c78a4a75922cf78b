package binding

import (
	"encoding/json"
	"strings"
	"testing"
)

// A recursion whose paths step twice into the same part of a value made a
// check cost 2^depth (a result 40 deep ran for hours, and Validate takes
// no context): each such schema is unusable at compile time, named for
// why. It passed the path count, where a recursion edge counts once.
func TestBranchingRecursionIsUnusable(t *testing.T) {
	for name, schema := range map[string]string{
		"anyOf items twice":       `{"anyOf":[{"items":{"$ref":"#"}},{"items":{"$ref":"#"}}]}`,
		"allOf items twice":       `{"allOf":[{"items":{"$ref":"#"}},{"items":{"$ref":"#"}}]}`,
		"items and contains":      `{"items":{"$ref":"#"},"contains":{"$ref":"#"}}`,
		"items and prefixItems":   `{"prefixItems":[{"$ref":"#"}],"items":{"$ref":"#"}}`,
		"property and pattern":    `{"properties":{"a":{"$ref":"#"}},"patternProperties":{"^a":{"$ref":"#"}}}`,
		"property and additional": `{"properties":{"a":{"$ref":"#"}},"additionalProperties":{"$ref":"#"}}`,
		"one property twice":      `{"allOf":[{"properties":{"a":{"$ref":"#"}}},{"properties":{"a":{"$ref":"#"}}}]}`,
		"one step, two refs":      `{"$defs":{"n":{"items":{"allOf":[{"$ref":"#/$defs/n"},{"$ref":"#/$defs/n"}]}}},"$ref":"#/$defs/n"}`,
		"draft-07 item list":      `{"items":[{"$ref":"#"}],"additionalItems":{"$ref":"#"}}`,
		"unevaluated items":       `{"items":{"$ref":"#"},"unevaluatedItems":{"$ref":"#"}}`,
		// T1 -> T2 -> T1, T2 with a loop of its own on the same elements.
		"mutual, arrays": `{"$defs":{"t1":{"items":{"$ref":"#/$defs/t2"}},
			"t2":{"anyOf":[{"items":{"$ref":"#/$defs/t2"}},{"items":{"$ref":"#/$defs/t1"}}]}},"$ref":"#/$defs/t1"}`,
		"mutual, objects": `{"$defs":{"t1":{"properties":{"x":{"$ref":"#/$defs/t2"}}},
			"t2":{"additionalProperties":{"$ref":"#/$defs/t2"},"properties":{"y":{"$ref":"#/$defs/t1"}}}},"$ref":"#/$defs/t1"}`,
		// One recursion entered from another at every level, both going on
		// over array elements: depth^2 per nesting.
		"nested recursions, arrays": `{"items":{"$ref":"#"},"contains":{"$ref":"#/$defs/u"},
			"$defs":{"u":{"items":{"$ref":"#/$defs/u"}}}}`,
		"nested recursions, objects": `{"properties":{"a":{"allOf":[{"$ref":"#"},{"$ref":"#/$defs/u"}]}},
			"$defs":{"u":{"properties":{"a":{"$ref":"#/$defs/u"}}}}}`,
	} {
		t.Run(name, func(t *testing.T) { wantUnusable(t, schema, errRecursionBranches) })
	}
}

// Recursions that reach each part of a result by one path stay usable,
// still refuse a bad result, and check one 200 levels deep at once: under
// the branching hole such a check would never end (the test's -timeout
// would show it).
func TestLinearRecursionIsUsable(t *testing.T) {
	nest := func(open, leaf, end string, n int) string {
		return strings.Repeat(open, n) + leaf + strings.Repeat(end, n)
	}
	for name, c := range map[string]struct{ schema, good, bad, deep string }{
		"binary tree": {
			schema: `{"type":"object","properties":{"v":{"type":"integer"},"left":{"$ref":"#"},"right":{"$ref":"#"}}}`,
			good:   `{"v":1,"left":{"v":2},"right":{"v":3,"left":{}}}`,
			bad:    `{"v":1,"left":{"right":{"v":"x"}}}`,
			deep:   nest(`{"v":1,"left":`, `{"right":{"v":2}}`, `}`, 200),
		},
		"items once": {
			schema: `{"type":"array","items":{"$ref":"#"}}`,
			good:   `[[],[[]]]`,
			bad:    `[[[1]]]`,
			deep:   nest(`[`, ``, `]`, 200),
		},
		"children list": {
			schema: `{"$ref":"#/$defs/node","$defs":{"node":{"type":"object","required":["name"],
				"properties":{"name":{"type":"string"},"children":{"type":"array","items":{"$ref":"#/$defs/node"}}}}}}`,
			good: `{"name":"a","children":[{"name":"b"}]}`,
			bad:  `{"name":"a","children":[{"children":[]}]}`,
			deep: nest(`{"name":"n","children":[`, `{"name":"leaf"}`, `]}`, 200),
		},
		"any JSON value": {
			schema: `{"$defs":{"v":{"anyOf":[{"type":"string"},{"type":"object","additionalProperties":{"$ref":"#/$defs/v"}},
				{"type":"array","items":{"$ref":"#/$defs/v"}}]}},"$ref":"#/$defs/v"}`,
			good: `{"a":["x",{"b":"y"}]}`,
			bad:  `{"a":["x",{"b":1}]}`,
			deep: nest(`{"k":[`, `"leaf"`, `]}`, 200),
		},
		"mutual, on distinct parts": {
			schema: `{"$defs":{"t1":{"type":"object","properties":{"x":{"$ref":"#/$defs/t2"}}},
				"t2":{"type":"array","items":{"$ref":"#/$defs/t1"}}},"$ref":"#/$defs/t1"}`,
			good: `{"x":[{"x":[]},{}]}`,
			bad:  `{"x":[{"x":{}}]}`,
			deep: nest(`{"x":[`, `{}`, `]}`, 200),
		},
		// The JSON value recursion is entered under "attrs", which the
		// tree's own recursion never steps over: each value is reached
		// once by each.
		"tree of any-JSON attributes": {
			schema: `{"$defs":{"v":{"anyOf":[{"type":"string"},{"type":"object","additionalProperties":{"$ref":"#/$defs/v"}},
				{"type":"array","items":{"$ref":"#/$defs/v"}}]}},
				"type":"object","properties":{"attrs":{"$ref":"#/$defs/v"},"children":{"type":"array","items":{"$ref":"#"}}}}`,
			good: `{"attrs":{"a":["x"]},"children":[{"attrs":"y"}]}`,
			bad:  `{"children":[{"attrs":{"a":[2]}}]}`,
			deep: nest(`{"attrs":{"k":["v"]},"children":[`, `{}`, `]}`, 200),
		},
		"items, or an object of one property": {
			schema: `{"anyOf":[{"type":"array","items":{"$ref":"#"}},{"type":"object","properties":{"x":{"$ref":"#"}}}]}`,
			good:   `[{"x":[]}]`,
			bad:    `[{"x":1}]`,
			deep:   nest(`[{"x":`, `[]`, `}]`, 200),
		},
	} {
		t.Run(name, func(t *testing.T) {
			r, err := compileOutputSchema(json.RawMessage(c.schema))
			if err != nil {
				t.Fatalf("compile: %v", err)
			}
			for _, want := range []struct {
				doc string
				ok  bool
			}{{c.good, true}, {c.bad, false}, {c.deep, true}} {
				var v any
				if err := json.Unmarshal([]byte(want.doc), &v); err != nil {
					t.Fatalf("instance %.40s: %v", want.doc, err)
				}
				if err := r.Validate(v); (err == nil) != want.ok {
					t.Errorf("validate %.60s = %v, want ok %v", want.doc, err, want.ok)
				}
			}
		})
	}
}

// Flat schemas like server-everything's structured-content tool, with
// refs to shared definitions that do not recurse, are no recursion.
func TestFlatOutputSchemasStayUsable(t *testing.T) {
	for _, schema := range []string{
		`{"type":"object","properties":{"temperature":{"type":"number"},"conditions":{"type":"string"},"humidity":{"type":"number"}},
			"required":["temperature","conditions","humidity"],"additionalProperties":false,"$schema":"http://json-schema.org/draft-07/schema#"}`,
		`{"$defs":{"p":{"type":"object","properties":{"x":{"type":"number"}}}},"type":"object",
			"properties":{"a":{"$ref":"#/$defs/p"},"b":{"$ref":"#/$defs/p"},"list":{"type":"array","items":{"$ref":"#/$defs/p"}}},
			"additionalProperties":{"$ref":"#/$defs/p"}}`,
	} {
		r, err := compileOutputSchema(json.RawMessage(schema))
		if err != nil {
			t.Fatalf("compile %.60s: %v", schema, err)
		}
		if r.Validate(map[string]any{"temperature": "hot"}) == nil && strings.Contains(schema, "temperature") {
			t.Errorf("a bad result passed %.60s", schema)
		}
	}
}
