package toolsearch

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"
)

// Bounds of the walk over a tool's input schema: how deep into nested
// objects and arrays it goes, how many properties it reads and how many
// enum values per property. Schemas are bounded when registered (the
// hardening issue's limits); these keep one tool's share of the index
// small all the same.
const (
	maxSchemaDepth  = 4
	maxSchemaProps  = 200
	maxEnumValues   = 16
	maxSchemaString = 4 << 10
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
	if len(raw) == 0 || json.Unmarshal(raw, &root) != nil {
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
			st.names = append(st.names, cut(name))
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
			st.descs = append(st.descs, cut(s))
		}
	}
	if enum, ok := obj["enum"].([]any); ok {
		var vals []string
		for _, v := range enum[:min(len(enum), maxEnumValues)] {
			if s, ok := v.(string); ok {
				vals = append(vals, cut(s))
			}
		}
		st.descs = append(st.descs, strings.Join(vals, " "))
	}
}

func cut(s string) string { return s[:min(len(s), maxSchemaString)] }
