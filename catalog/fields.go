package catalog

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// fields is one host server entry as raw JSON values by key, remembering
// which keys a mapper used so that the rest become warnings.
type fields struct {
	raw  map[string]json.RawMessage
	used map[string]bool
}

func newFields(v json.RawMessage) (*fields, bool) {
	var raw map[string]json.RawMessage
	if json.Unmarshal(v, &raw) != nil || raw == nil {
		return nil, false
	}
	return &fields{raw: raw, used: map[string]bool{}}, true
}

// has reports whether key is present and not null.
func (f *fields) has(key string) bool {
	v, ok := f.raw[key]
	return ok && !isNullJSON(v)
}

// take marks key used and returns its value, or nil when absent or null.
func (f *fields) take(key string) json.RawMessage {
	f.used[key] = true
	v := f.raw[key]
	if isNullJSON(v) {
		return nil
	}
	return v
}

// ignore marks keys as used without mapping them: they mean nothing to
// mcpvisor and need no warning (a description, a display name).
func (f *fields) ignore(keys ...string) {
	for _, k := range keys {
		f.used[k] = true
	}
}

// str reads a string field; a value of another type is a warning.
func (f *fields) str(m *mapping, key string) (string, bool) {
	v := f.take(key)
	if v == nil {
		return "", false
	}
	var s string
	if json.Unmarshal(v, &s) != nil {
		m.warn("%s is not a string: not mapped", key)
		return "", false
	}
	return s, true
}

// strs reads an array of strings.
func (f *fields) strs(m *mapping, key string) ([]string, bool) {
	v := f.take(key)
	if v == nil {
		return nil, false
	}
	var s []string
	if json.Unmarshal(v, &s) != nil {
		m.warn("%s is not an array of strings: not mapped", key)
		return nil, false
	}
	return s, true
}

// strMap reads an object of string values. A number or boolean value is
// taken as its JSON text (YAML and TOML hosts write PORT: 8080).
func (f *fields) strMap(m *mapping, key string) (map[string]string, bool) {
	v := f.take(key)
	if v == nil {
		return nil, false
	}
	var raw map[string]json.RawMessage
	if json.Unmarshal(v, &raw) != nil {
		m.warn("%s is not an object: not mapped", key)
		return nil, false
	}
	out := make(map[string]string, len(raw))
	for _, k := range slices.Sorted(maps.Keys(raw)) {
		var s string
		switch val := bytes.TrimSpace(raw[k]); {
		case json.Unmarshal(val, &s) == nil:
			out[k] = s
		case len(val) > 0 && (val[0] == '-' || '0' <= val[0] && val[0] <= '9' || string(val) == "true" || string(val) == "false"):
			out[k] = string(val)
		default:
			m.warn("%s.%s is not a string: not mapped", key, k)
		}
	}
	return out, true
}

// boolean reads a boolean field.
func (f *fields) boolean(m *mapping, key string) (bool, bool) {
	v := f.take(key)
	if v == nil {
		return false, false
	}
	var b bool
	if json.Unmarshal(v, &b) != nil {
		m.warn("%s is not true or false: not mapped", key)
		return false, false
	}
	return b, true
}

// number reads a number field.
func (f *fields) number(m *mapping, key string) (float64, bool) {
	v := f.take(key)
	if v == nil {
		return 0, false
	}
	var n float64
	if json.Unmarshal(v, &n) != nil {
		m.warn("%s is not a number: not mapped", key)
		return 0, false
	}
	return n, true
}

// rest lists the keys no mapper used, sorted.
func (f *fields) rest() []string {
	var out []string
	for k := range f.raw {
		if !f.used[k] {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

func isNullJSON(v []byte) bool {
	v = bytes.TrimSpace(v)
	return len(v) == 0 || string(v) == "null"
}

// quoteKeys formats field names for a warning.
func quoteKeys(keys []string) string {
	q := make([]string, len(keys))
	for i, k := range keys {
		q[i] = fmt.Sprintf("%q", k)
	}
	return strings.Join(q, ", ")
}
