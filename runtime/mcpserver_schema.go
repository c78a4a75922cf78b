package runtime

import (
	"bytes"
	"encoding/json"
	"net/url"
	"strings"
)

// remoteRef returns the first $ref (or $dynamicRef) of an output schema
// that is not document-local, or "" when every one is. Local is a
// fragment ("#", "#/$defs/x", "#anchor"), alone or after the root's own
// $id: what the runtime's output check follows too (internal/binding
// refuses the rest, without fetching anything). The gateway drops an
// output schema with a remote ref rather than pass it on: a client has to
// resolve it to check results, and the TypeScript SDK's listTools fails
// as a whole on one it cannot resolve. The walk is bounded by the schema,
// which the registry holds bounded already.
func remoteRef(schema json.RawMessage) string {
	var root any
	// Most schemas have no ref: no decoding for them. (A key spelled with
	// escapes, "\u0024ref", still holds "ref".)
	if !bytes.Contains(schema, []byte("ref")) && !bytes.Contains(schema, []byte("Ref")) || json.Unmarshal(schema, &root) != nil {
		return ""
	}
	var rootID string
	if m, ok := root.(map[string]any); ok {
		rootID, _ = m["$id"].(string)
		if u, err := url.Parse(rootID); err == nil {
			u.Fragment = ""
			rootID = u.String()
		}
	}
	local := func(ref string) bool {
		if strings.HasPrefix(ref, "#") {
			return true
		}
		u, err := url.Parse(ref)
		if err != nil {
			return false
		}
		u.Fragment = ""
		return rootID != "" && u.String() == rootID
	}
	var walk func(v any) string
	walk = func(v any) string {
		switch v := v.(type) {
		case map[string]any:
			for _, k := range []string{"$ref", "$dynamicRef"} {
				if ref, ok := v[k].(string); ok && !local(ref) {
					return ref
				}
			}
			for _, c := range v {
				if ref := walk(c); ref != "" {
					return ref
				}
			}
		case []any:
			for _, c := range v {
				if ref := walk(c); ref != "" {
					return ref
				}
			}
		}
		return ""
	}
	return walk(root)
}
