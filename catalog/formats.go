package catalog

import (
	"bytes"
	"errors"
	"fmt"
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
		if out, err = walkJSON(f, want...); err == nil {
			return out, true
		}
	}
	c.fileError(src, path, err)
	return nil, false
}

// jsoncFile reads a JSON-with-comments file (VS Code, Zed, opencode:
// comments and trailing commas) through hujson, which rewrites it to
// standard JSON in place, then walks it like a JSON file.
func (c *collector) jsoncFile(src Source, path string, want ...keyPath) ([]found, bool) {
	data, err := c.fs.readAll(path, MaxSettingsBytes)
	if err == nil {
		if data, err = hujson.Standardize(data); err != nil {
			err = fmt.Errorf("it is not valid JSON with comments%s", lineOf(err))
		} else {
			var out []found
			if out, err = walkJSON(bytes.NewReader(data), want...); err == nil {
				return out, true
			}
		}
	}
	c.fileError(src, path, err)
	return nil, false
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
	if !errors.Is(err, errMissing) {
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
