package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strconv"
)

// DuplicateKey returns the path of the first key given twice in one object
// anywhere in the JSON document data, at any depth ("arguments.x",
// `arguments["a b"]`, "arguments.list[2].k", keys named as in a
// FieldError), or "" when no object repeats a key. encoding/json keeps the
// last of two values silently; the management API refuses such a body
// instead, as this package refuses such a config. It is the token-stream
// check of readObject (one object) taken to a whole document whose values
// are passed on rather than parsed here (tool and prompt arguments), in
// one pass: the cost is linear in the size of data.
//
// A data that is not valid JSON is an error; callers decode it first to
// report that in their own words.
func DuplicateKey(data []byte) (string, error) {
	// One frame per open object or array: the key or index of the value
	// being read, and an object's keys so far. The path is built only
	// for a hit, so deep nesting costs no quadratic string building.
	type frame struct {
		object bool
		seen   map[string]bool
		key    string // an object's current key
		index  int    // an array's current index
		inKey  bool   // an object is between members: the next token is a key
	}
	var stack []*frame
	path := func(last string) string {
		p := ""
		for _, f := range stack[:len(stack)-1] {
			if f.object {
				p = keyPath(p, f.key)
			} else {
				p += "[" + strconv.Itoa(f.index) + "]"
			}
		}
		return keyPath(p, last)
	}
	// valueDone moves the enclosing frame past the value just read.
	valueDone := func() {
		if len(stack) == 0 {
			return
		}
		if top := stack[len(stack)-1]; top.object {
			top.inKey = true
		} else {
			top.index++
		}
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber() // a number is skipped, never converted to a float64
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) && len(stack) > 0 {
			return "", io.ErrUnexpectedEOF
		}
		if errors.Is(err, io.EOF) {
			return "", nil
		}
		if err != nil {
			return "", err
		}
		if n := len(stack); n > 0 && stack[n-1].object && stack[n-1].inKey {
			top := stack[n-1]
			if key, ok := tok.(string); ok {
				if top.seen[key] {
					return path(key), nil
				}
				if top.seen == nil {
					top.seen = map[string]bool{}
				}
				top.seen[key] = true
				top.key, top.inKey = key, false
				continue
			}
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, &frame{object: true, inKey: true})
		case json.Delim('['):
			stack = append(stack, &frame{})
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
			valueDone()
		default:
			valueDone()
		}
	}
}
