package binding

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// A $ref or combinator chain back to the same schema, without stepping
// into the value, made jsonschema-go's Validate recurse until a fatal
// stack overflow at the first result: such a schema must be unusable at
// compile time.
func TestOutputSchemaLoopIsUnusable(t *testing.T) {
	for name, schema := range map[string]string{
		"ref":    `{"$ref":"#/$defs/a","$defs":{"a":{"$ref":"#/$defs/a"}}}`,
		"root":   `{"allOf":[{"$ref":"#"}]}`,
		"allOf":  `{"$ref":"#/$defs/a","$defs":{"a":{"allOf":[{"$ref":"#/$defs/a"}]}}}`,
		"anyOf":  `{"$ref":"#/$defs/a","$defs":{"a":{"anyOf":[{"type":"string"},{"$ref":"#/$defs/a"}]}}}`,
		"not":    `{"$defs":{"a":{"not":{"$ref":"#/$defs/b"}},"b":{"oneOf":[{"$ref":"#/$defs/a"}]}},"$ref":"#/$defs/a"}`,
		"anchor": `{"$defs":{"a":{"$anchor":"x","anyOf":[{"$ref":"#x"}]}},"$ref":"#x"}`,
	} {
		t.Run(name, func(t *testing.T) { wantUnusable(t, schema, errSchemaLoop) })
	}
}

// wantUnusable fails t unless schema fails to compile with want, in an
// error that says so.
func wantUnusable(t *testing.T, schema string, want error) {
	t.Helper()
	_, err := compileOutputSchema(json.RawMessage(schema))
	if !errors.Is(err, want) || !strings.Contains(err.Error(), want.Error()) {
		t.Fatalf("compile = %v, want %v", err, want)
	}
}

// A recursive tree schema steps into the value at each level: it stays
// usable, and checks a result.
func TestRecursiveTreeOutputSchemaIsUsable(t *testing.T) {
	schema := `{"$ref":"#/$defs/node","$defs":{"node":{"type":"object","required":["name"],
		"properties":{"name":{"type":"string"},"children":{"type":"array","items":{"$ref":"#/$defs/node"}}}}}}`
	r, err := compileOutputSchema(json.RawMessage(schema))
	if err != nil {
		t.Fatalf("compile: %v", err)
	}
	good := map[string]any{"name": "a", "children": []any{map[string]any{"name": "b", "children": []any{}}}}
	if err := r.Validate(good); err != nil {
		t.Errorf("a matching tree: %v", err)
	}
	bad := map[string]any{"name": "a", "children": []any{map[string]any{"children": []any{}}}}
	if r.Validate(bad) == nil {
		t.Errorf("a tree missing a nested name passed")
	}
}

// anyOf:[$ref dN+1, $ref dN+1] 18 deep is 1.3 KB, and its check of one
// result visits 2^18 subschemas (seconds, and a 60 MB error text): its
// paths exceed MaxOutputSchemaPaths, so it is unusable; a shallow one of
// the same form stays usable.
func TestExponentialOutputSchemaIsUnusable(t *testing.T) {
	chain := func(n int) string {
		var defs []string
		for i := range n {
			defs = append(defs, fmt.Sprintf(`"d%d":{"anyOf":[{"$ref":"#/$defs/d%d"},{"$ref":"#/$defs/d%d"}]}`, i, i+1, i+1))
		}
		defs = append(defs, fmt.Sprintf(`"d%d":{"type":"string"}`, n))
		return `{"$ref":"#/$defs/d0","$defs":{` + strings.Join(defs, ",") + `}}`
	}
	_, err := compileOutputSchema(json.RawMessage(chain(18)))
	if err == nil || !strings.Contains(err.Error(), "paths") {
		t.Errorf("18 levels: compile = %v, want refused for its paths", err)
	}
	g := &schemaGraph{edges: map[string][]schemaEdge{}, anchors: map[string]string{}}
	_ = json.Unmarshal([]byte(chain(18)), &g.root)
	if err := g.build(g.root, ""); err != nil || g.paths() != MaxOutputSchemaPaths+1 {
		t.Errorf("paths of 18 levels = %d (%v), want the count saturated past the bound", g.paths(), err)
	}
	if _, err := compileOutputSchema(json.RawMessage(chain(4))); err != nil {
		t.Errorf("4 levels: %v", err)
	}
}

// Decoding a schema nested 4000 deep into jsonschema.Schema took seconds
// (quadratic in depth) on the server actor: the byte scan refuses it, and
// one too large, before anything decodes them.
func TestOutputSchemaBoundsBeforeDecoding(t *testing.T) {
	deep := func(d int) string {
		return strings.Repeat(`{"properties":{"a":`, d) + `{}` + strings.Repeat(`}}`, d)
	}
	if _, err := compileOutputSchema(json.RawMessage(deep(4000))); err == nil || !strings.Contains(err.Error(), "nested deeper") {
		t.Errorf("4000 deep: %v, want refused for its depth", err)
	}
	// Braces inside strings do not count.
	quoted := `{"description":"` + strings.Repeat("{[", 200) + `\"{"}`
	if err := checkSchemaBytes([]byte(quoted)); err != nil {
		t.Errorf("braces in a string: %v", err)
	}
	if _, err := compileOutputSchema(json.RawMessage(deep(MaxOutputSchemaDepth/2 - 1))); err != nil { // two levels each
		t.Errorf("%d deep: %v", MaxOutputSchemaDepth-1, err)
	}
	big := `{"description":"` + strings.Repeat("x", MaxOutputSchemaBytes) + `"}`
	if _, err := compileOutputSchema(json.RawMessage(big)); err == nil || !strings.Contains(err.Error(), "bytes") {
		t.Errorf("%d bytes: %v, want refused for its size", len(big), err)
	}
}

// A $ref the check cannot follow makes the schema unusable rather than
// unbounded.
func TestOutputSchemaUnfollowableRefIsUnusable(t *testing.T) {
	for _, schema := range []string{
		`{"$defs":{"a":{"$id":"https://x.invalid/a","$ref":"#/b"}},"$ref":"#/$defs/a"}`,
		`{"$dynamicRef":"#x"}`,
		`{"$ref":"#/$defs/missing"}`,
	} {
		if _, err := compileOutputSchema(json.RawMessage(schema)); err == nil {
			t.Errorf("%s compiled", schema)
		}
	}
}
