package catalog

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"

	"github.com/tailscale/hujson"
)

// jsonFile streams a JSON file and returns the values at want; ok false
// means the file was missing or a warning was recorded.
func (c *collector) jsonFile(src Source, path string, want ...keyPath) ([]found, bool) {
	f, err := c.fs.open(path, MaxFileBytes)
	if err == nil {
		defer f.Close()
		var out []found
		if out, err = walkLimited(f, MaxFileBytes, want...); err == nil {
			return out, true
		}
		if errors.Is(err, errKeptBudget) {
			c.warn(src, path, "%v", err)
			return out, true
		}
	}
	c.fileError(src, path, err)
	return nil, false
}

// walkLimited walks r (a file checked to hold at most limit bytes when it
// was opened) reading no more than limit+1 bytes of it: a file that grows
// while read (a host appending its history) is not read to its end, and
// is an error of its own.
func walkLimited(r io.Reader, limit int64, want ...keyPath) ([]found, error) {
	lr := &io.LimitedReader{R: r, N: limit + 1}
	out, err := walkJSON(lr, want...)
	if lr.N == 0 {
		return nil, grewError(limit)
	}
	return out, err
}

// jsoncFile reads a JSON-with-comments file (VS Code, Zed, opencode:
// comments and trailing commas) through hujson, which rewrites it to
// standard JSON in place, then walks it like a JSON file.
func (c *collector) jsoncFile(src Source, path string, want ...keyPath) ([]found, bool) {
	data, err := c.fs.readAll(path, MaxSettingsBytes)
	if err == nil {
		data, err = standardize(data)
	}
	if err == nil {
		var out []found
		if out, err = walkJSON(bytes.NewReader(data), want...); err == nil {
			return out, true
		}
	}
	c.fileError(src, path, err)
	return nil, false
}

// standardize rewrites JSON with comments to JSON, in place.
func standardize(data []byte) ([]byte, error) {
	if err := checkDepth(data); err != nil {
		return nil, err
	}
	std, err := hujson.Standardize(data)
	if err != nil {
		return nil, fmt.Errorf("it is not valid JSON with comments%s", lineOf(err))
	}
	return std, nil
}

// settingsFile reads a whole YAML or TOML file and decodes it with decode.
func (c *collector) settingsFile(src Source, path string, decode func([]byte) error) bool {
	data, err := c.fs.readAll(path, MaxSettingsBytes)
	if err == nil {
		if err = decode(data); err == nil {
			return true
		}
	}
	c.fileError(src, path, err)
	return false
}

func (c *collector) fileError(src Source, path string, err error) {
	if !errors.Is(err, errMissing) && !errors.Is(err, errReadAlready) {
		c.warn(src, path, "%v", err)
	}
}

var reLine = regexp.MustCompile(`line (\d+)`)

// lineOf gives the line a parser error names, for a warning: parsers'
// messages may quote the file, and the file may hold secrets, so only the
// number is kept.
func lineOf(err error) string {
	if m := reLine.FindStringSubmatch(err.Error()); m != nil {
		return " (line " + m[1] + ")"
	}
	return ""
}

// maxDepth is how deeply a JSON-with-comments file may nest, as
// encoding/json allows.
const maxDepth = 10000

// checkDepth refuses data nested deeper than maxDepth before hujson sees
// it: hujson parses recursively, and a file of a few million '[' would
// overflow the stack, which no recover catches. It only counts brackets
// outside strings and comments; hujson does the parsing.
func checkDepth(data []byte) error {
	depth := 0
	for i := 0; i < len(data); i++ {
		switch c := data[i]; {
		case c == '"':
			for i++; i < len(data) && data[i] != '"'; i++ {
				if data[i] == '\\' {
					i++
				}
			}
		case c == '/' && i+1 < len(data) && data[i+1] == '/':
			for i < len(data) && data[i] != '\n' {
				i++
			}
		case c == '/' && i+1 < len(data) && data[i+1] == '*':
			end := bytes.Index(data[i+2:], []byte("*/"))
			if end < 0 {
				return nil // unterminated: hujson says so
			}
			i += end + 3
		case c == '[' || c == '{':
			if depth++; depth > maxDepth {
				return fmt.Errorf("it nests deeper than %d levels: not read", maxDepth)
			}
		case c == ']' || c == '}':
			depth--
		}
	}
	return nil
}
