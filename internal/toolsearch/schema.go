package toolsearch

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"
)

// Bounds of the walk over a tool's input schema: a schema larger than
// maxSchemaBytes is not read at all (unmarshalling it would cost more
// than the tool's share of the index is worth; its tool is found by its
// name and description), and the walk goes maxSchemaDepth deep into
// nested objects and arrays, reads maxSchemaProps properties, maxEnumValues
// enum values per property and the first maxSchemaString bytes of each
// string. Schemas are bounded when registered too (the hardening issue's
// limits); these keep one tool's share of the index small all the same.
const (
	maxSchemaBytes  = 64 << 10
	maxSchemaDepth  = 4
	maxSchemaProps  = 100
	maxEnumValues   = 16
	maxSchemaString = 1 << 10
)

// schemaText is the text of an input schema the index reads: the names of
// its properties (nested ones included) and their titles, descriptions
// and string enum values.
type schemaText struct {
	names []string
	descs []string
}

func walkSchema(raw json.RawMessage) schemaText {
	var root any
	if len(raw) == 0 || len(raw) > maxSchemaBytes || json.Unmarshal(raw, &root) != nil {
		return schemaText{}
	}
	var st schemaText
	budget := maxSchemaProps
	st.walk(root, 0, &budget)
	return st
}

func (st *schemaText) walk(node any, depth int, budget *int) {
	obj, ok := node.(map[string]any)
	if !ok || depth > maxSchemaDepth {
		return
	}
	if props, ok := obj["properties"].(map[string]any); ok {
		// In key order, so that which properties a cut leaves out does
		// not depend on map iteration.
		for _, name := range slices.Sorted(maps.Keys(props)) {
			if *budget <= 0 {
				return
			}
			*budget--
			st.names = append(st.names, cut(name, maxSchemaString))
			st.describe(props[name])
			st.walk(props[name], depth+1, budget)
		}
	}
	// Arrays of objects, and the branches of a union.
	st.walk(obj["items"], depth+1, budget)
	for _, key := range []string{"anyOf", "oneOf", "allOf"} {
		if list, ok := obj[key].([]any); ok {
			for _, b := range list {
				st.walk(b, depth+1, budget)
			}
		}
	}
}

// describe adds a property's title, description and string enum values.
func (st *schemaText) describe(p any) {
	obj, ok := p.(map[string]any)
	if !ok {
		return
	}
	for _, key := range []string{"title", "description"} {
		if s, ok := obj[key].(string); ok {
			st.descs = append(st.descs, cut(s, maxSchemaString))
		}
	}
	if enum, ok := obj["enum"].([]any); ok {
		var vals []string
		for _, v := range enum[:min(len(enum), maxEnumValues)] {
			if s, ok := v.(string); ok {
				vals = append(vals, cut(s, maxSchemaString))
			}
		}
		st.descs = append(st.descs, strings.Join(vals, " "))
	}
}

// cut is s cut to at most n bytes (at a word's end, or in a word: the
// analyser reads words, so a broken last rune only loses that word).
func cut(s string, n int) string { return s[:min(len(s), n)] }
