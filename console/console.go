// Package console holds the web console of the management API (DESIGN
// W1–W3): a static page — index.html, its ES modules and one stylesheet —
// embedded in the binary, with no build step and nothing loaded from
// another origin. runtime.ConsoleHandler serves it; the page talks only to
// the management API of the origin it was loaded from.
package console

import (
	"embed"
	"io/fs"
)

//go:embed index.html app.css *.js
var files embed.FS

// Files returns the console's files: index.html at the root and its
// assets (*.js, app.css) beside it.
func Files() fs.FS { return files }
