package binding

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
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

// A failed check's error names every subschema it went through, and
// jsonschema-go copies it at each one: a recursive schema followed a
// result 2000 deep for over 30 s with a 2 KB $id. A result deeper than
// MaxCheckedResultDepth is a mismatch against a recursive schema (not
// against one that stops at its own depth), and the names and chains of
// a schema are bounded.
func TestDeepResultAgainstRecursiveSchemaIsAMismatch(t *testing.T) {
	_, b, _ := resultTools(t)
	conn := b.Current()
	nested := func(d int) any {
		var v any
		if err := json.Unmarshal([]byte(strings.Repeat("[", d)+strings.Repeat("]", d)), &v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	check := func(schema string) *outputCheck {
		c := b.checkFor(conn, "srv__t", "t", json.RawMessage(schema), map[string]*outputCheck{})
		if c.unusable {
			t.Fatalf("%s unusable", schema)
		}
		return c
	}
	recursive, flat := check(`{"type":"array","items":{"$ref":"#"}}`), check(`{"type":"array"}`)
	for _, c := range []struct {
		check *outputCheck
		depth int
		ok    bool
	}{
		{recursive, MaxCheckedResultDepth, true},
		{recursive, MaxCheckedResultDepth + 1, false},
		{flat, 4 * MaxCheckedResultDepth, true},
	} {
		res := result(conn, c.check, &mcp.CallToolResult{StructuredContent: nested(c.depth)}, nil)
		if res.IsError == c.ok || !c.ok && !strings.Contains(res.Content[0].Text, "nested deeper than") {
			t.Errorf("%d deep against %s: %+v, want ok %v", c.depth, c.check.schema, res.Content, c.ok)
		}
	}
}

func TestOutputSchemaNamesAndChainsAreBounded(t *testing.T) {
	refs := func(n int) string { // $defs d0 .. dn, each a $ref to the next
		var defs []string
		for i := range n {
			defs = append(defs, fmt.Sprintf(`"d%d":{"$ref":"#/$defs/d%d"}`, i, i+1))
		}
		return fmt.Sprintf(`{"$ref":"#/$defs/d0","$defs":{%s,"d%d":{"type":"string"}}}`, strings.Join(defs, ","), n)
	}
	long := strings.Repeat("x", MaxOutputSchemaName)
	for schema, want := range map[string]string{
		`{"$id":"https://x.example/` + long + `","items":{"$ref":"#"}}`:  "$id of more than",
		`{"$defs":{"a":{"$anchor":"x` + long + `"}},"$ref":"#/$defs/a"}`: "$anchor of more than",
		`{"properties":{"` + long + `":{"type":"string"}}}`:              "path of more than",
		refs(MaxOutputSchemaChain):                                       "chain of more than", // the root's $ref and n more
	} {
		if _, err := compileOutputSchema(json.RawMessage(schema)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%.60s: %v, want %q", schema, err, want)
		}
	}
	if _, err := compileOutputSchema(json.RawMessage(refs(MaxOutputSchemaChain - 1))); err != nil {
		t.Errorf("a chain of %d: %v", MaxOutputSchemaChain, err)
	}
}
