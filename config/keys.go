package config

import (
	"encoding/json"
	"errors"
	"strings"
)

// keyRule says when two keys of a string map are the same key.
type keyRule bool

const (
	// exactKeys: env names, which the OS compares byte for byte.
	exactKeys keyRule = false
	// headerKeys: HTTP header names, sent canonicalised, so that
	// "Authorization" and "authorization" would reach the server as one
	// header with whichever value happened to win.
	headerKeys keyRule = true
)

// same returns the form of key under which rule compares it.
func (rule keyRule) same(key string) string {
	if rule == headerKeys {
		return strings.ToLower(key)
	}
	return key
}

// mapMember is one key of an object of strings; value is nil for null.
type mapMember struct {
	key   string
	value *string
}

// decodeNullableMap decodes an object of strings, in member order, where a
// null value is reported as a nil pointer for the caller to accept or
// reject. A key given twice (under rule) is an error naming it: a map
// decoded by encoding/json would silently keep the last value, and for a
// configuration that is more likely a mistake than an intent.
func decodeNullableMap(field string, raw json.RawMessage, rule keyRule) ([]mapMember, *FieldError) {
	ms, err := readObject(raw)
	var dup duplicateKeyError
	switch {
	case errors.As(err, &dup):
		return nil, duplicateKey(field, dup.key, dup.key)
	case err != nil:
		return nil, fieldErr(field, "must be an object whose values are strings")
	}
	out := make([]mapMember, 0, len(ms))
	first := make(map[string]string, len(ms))
	for _, m := range ms {
		if prev, ok := first[rule.same(m.key)]; ok {
			return nil, duplicateKey(field, prev, m.key)
		}
		first[rule.same(m.key)] = m.key
		if isNull(m.value) {
			out = append(out, mapMember{key: m.key})
			continue
		}
		var v string
		if json.Unmarshal(m.value, &v) != nil {
			return nil, fieldErr(field, "must be an object whose values are strings")
		}
		out = append(out, mapMember{key: m.key, value: &v})
	}
	return out, nil
}

// duplicateKey reports key, given twice in the object at field; prev is
// its first spelling, which differs from key only for headers.
func duplicateKey(field, prev, key string) *FieldError {
	msg := "duplicate key " + quote(key)
	if prev != key {
		msg += " (header names are case-insensitive: it repeats " + quote(prev) + ")"
	}
	return fieldErr(field, msg)
}

func decodeStringMap(field string, raw json.RawMessage, rule keyRule) (map[string]string, *FieldError) {
	ms, err := decodeNullableMap(field, raw, rule)
	if err != nil {
		return nil, err
	}
	out := make(map[string]string, len(ms))
	for _, m := range ms {
		if m.value == nil {
			return nil, fieldErr(keyPath(field, m.key), "must be a string")
		}
		out[m.key] = *m.value
	}
	return out, nil
}

// mergeSecrets applies the env/headers rule of a PATCH to cur, which it
// owns. Under headerKeys a key replaces or deletes the stored header of
// any spelling, so a patch can never leave two spellings of one header.
func mergeSecrets(field string, cur map[string]string, raw json.RawMessage, rule keyRule) (map[string]string, *FieldError) {
	patch, err := decodeNullableMap(field, raw, rule)
	if err != nil {
		return nil, err
	}
	if cur == nil {
		cur = make(map[string]string, len(patch))
	}
	for _, m := range patch {
		if m.value == nil {
			return nil, nullErr(keyPath(field, m.key))
		}
		for k := range cur {
			if rule.same(k) == rule.same(m.key) {
				delete(cur, k)
			}
		}
		if *m.value != "" {
			cur[m.key] = *m.value
		}
	}
	if len(cur) == 0 {
		return nil, nil
	}
	return cur, nil
}
