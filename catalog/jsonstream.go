package catalog

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"

	"github.com/go-json-experiment/json/jsontext"
)

// jsontext (the v2 JSON text layer, which Go ships as encoding/json/jsontext
// under GOEXPERIMENT=jsonv2) is used for its SkipValue: it steps over a
// value token by token without allocating it, so a 60 MB history costs a
// read buffer, where encoding/json's Decoder.Token would allocate every
// string of it.

// MaxKeptBytes bounds one kept value (the servers of one file, or of one
// project in it): settings are kilobytes, and a kept value is held whole,
// then decoded. A file with a larger one is a warning.
const MaxKeptBytes = 1 << 20

// MaxFileKeptBytes bounds the kept values of one file together: each is
// under MaxKeptBytes, but ~/.claude.json may hold any number of projects,
// each with its servers. Past it the walk stops keeping, and the file's
// servers found so far are listed, with a warning.
const MaxFileKeptBytes = 8 << 20

// MaxTokenBytes bounds any single token of a walked JSON file (a string,
// a number): the decoder holds a token whole, even one it skips. A
// history string over it (a pasted file of 4 MiB) makes the file a
// warning; a real one is far smaller.
const MaxTokenBytes = 4 << 20

// errTooLarge is the reader's refusal: it reads past a bound (a token, a
// kept value).
var errTooLarge = errors.New("a value is too large")

// errKeptBudget is the reader's refusal to keep more of a file than
// MaxFileKeptBytes: the walk stops, and what it kept before is kept.
var errKeptBudget = fmt.Errorf("its servers are over %d bytes in all: the servers after those not read", MaxFileKeptBytes)

// boundedReader is the decoder's input: it refuses to read on once the
// decoder holds more than MaxTokenBytes it has not consumed (the decoder
// fetches more only to finish the token it is on, so those bytes are
// all one token), or, while a kept value is read, once that value has
// passed MaxKeptBytes.
type boundedReader struct {
	r         io.Reader
	dec       *jsontext.Decoder
	read      int64 // bytes given to dec
	keptStart int64 // input offset where the kept value being read starts; -1 when none
	kept      int64 // bytes of the values kept so far
}

func (b *boundedReader) Read(p []byte) (int, error) {
	switch {
	case b.keptStart >= 0 && b.read-b.keptStart > MaxKeptBytes:
		return 0, errTooLarge
	case b.keptStart >= 0 && b.kept+b.read-b.keptStart > MaxFileKeptBytes:
		return 0, errKeptBudget
	case b.read-b.dec.InputOffset() > MaxTokenBytes:
		return 0, errTooLarge
	}
	n, err := b.r.Read(p)
	b.read += int64(n)
	return n, err
}

// keyPath is a path of object keys from the document's top; "*" matches
// any key.
type keyPath []string

// found is the raw value at one matched path, with the actual keys.
type found struct {
	path  []string
	value []byte
}

// walkJSON reads one JSON object from r and returns a copy of each value
// whose key path matches one of want, skipping everything else without
// building it. A later duplicate of a key wins, as in JavaScript hosts.
// A kept value over MaxKeptBytes, or any token over MaxTokenBytes, is an
// error: memory stays bounded by those, not by the file. Kept values over
// MaxFileKeptBytes in all stop the walk with errKeptBudget, and the
// values kept before it are returned with it.
func walkJSON(r io.Reader, want ...keyPath) ([]found, error) {
	br := &boundedReader{r: r, keptStart: -1}
	dec := jsontext.NewDecoder(br, jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))
	br.dec = dec
	if dec.PeekKind() != '{' {
		if _, err := dec.ReadToken(); err != nil {
			return nil, syntaxError(dec, err)
		}
		return nil, errors.New("the top level is not a JSON object")
	}
	w := &walker{dec: dec, in: br, want: want}
	if err := w.object(nil); errors.Is(err, errKeptBudget) {
		return w.out, err
	} else if err != nil {
		return nil, err
	}
	// Anything but whitespace after the object is corruption.
	if _, err := dec.ReadToken(); !errors.Is(err, io.EOF) {
		return nil, errors.New("data follows the top-level object")
	}
	return w.out, nil
}

type walker struct {
	dec  *jsontext.Decoder
	in   *boundedReader
	want []keyPath
	out  []found
}

// object reads the object that starts at the next token; path is its own.
func (w *walker) object(path []string) error {
	if _, err := w.dec.ReadToken(); err != nil { // '{'
		return syntaxError(w.dec, err)
	}
	for w.dec.PeekKind() != '}' {
		name, err := w.dec.ReadToken()
		if err != nil {
			return syntaxError(w.dec, err)
		}
		sub := append(path[:len(path):len(path)], name.String())
		match, prefix := w.match(sub)
		switch {
		case match:
			w.in.keptStart = w.dec.InputOffset()
			v, err := w.dec.ReadValue()
			w.in.keptStart = -1
			if errors.Is(err, errTooLarge) {
				return fmt.Errorf("the value of %q is over %d bytes: not read", sub[len(sub)-1], MaxKeptBytes)
			}
			if errors.Is(err, errKeptBudget) {
				return errKeptBudget
			}
			if err != nil {
				return syntaxError(w.dec, err)
			}
			w.in.kept += int64(len(v))
			w.keep(sub, bytes.Clone(v))
		case prefix && w.dec.PeekKind() == '{':
			if err := w.object(sub); err != nil {
				return err
			}
		default:
			if err := w.dec.SkipValue(); err != nil {
				return syntaxError(w.dec, err)
			}
		}
	}
	if _, err := w.dec.ReadToken(); err != nil { // '}'
		return syntaxError(w.dec, err)
	}
	return nil
}

func (w *walker) keep(path []string, v []byte) {
	for i := range w.out {
		if equalPath(w.out[i].path, path) {
			w.out[i].value = v
			return
		}
	}
	w.out = append(w.out, found{path: path, value: v})
}

// match reports whether path is wanted, or is a strict prefix of a wanted
// path.
func (w *walker) match(path []string) (match, prefix bool) {
	for _, p := range w.want {
		if len(p) < len(path) {
			continue
		}
		ok := true
		for i, k := range path {
			if p[i] != "*" && p[i] != k {
				ok = false
				break
			}
		}
		if ok {
			if len(p) == len(path) {
				match = true
			} else {
				prefix = true
			}
		}
	}
	return match, prefix
}

func equalPath(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// syntaxError says where the JSON broke, by byte offset only: the decoder's
// message may quote the file, and the file may hold secrets.
func syntaxError(dec *jsontext.Decoder, err error) error {
	if errors.Is(err, errTooLarge) {
		return fmt.Errorf("a single value near byte %d is over %d bytes: not read", dec.InputOffset(), MaxTokenBytes)
	}
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return errors.New("it ends in the middle of the JSON")
	}
	var se *jsontext.SyntacticError
	if errors.As(err, &se) {
		return fmt.Errorf("it is not valid JSON (near byte %d)", se.ByteOffset)
	}
	var pe *fs.PathError
	if errors.As(err, &pe) { // an I/O error from the file, not its content
		return fmt.Errorf("cannot read it at byte %d: %w", dec.InputOffset(), pe.Err)
	}
	return fmt.Errorf("it is not valid JSON (near byte %d)", dec.InputOffset())
}
