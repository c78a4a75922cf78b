package exampleserver

import (
	"errors"
	"io/fs"
	"os"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Who the server says it is in initialize, beside [Options.Name].
const (
	// Title is the server's human-readable name.
	Title = "mcpvisor example server"
	// WebsiteURL is the server's website.
	WebsiteURL = "https://github.com/openprogram/mcpvisor"
	// IconURL is the src of its second icon (a URL; the first is a small
	// data: URI).
	IconURL = "https://example.invalid/mcpvisor-example-dark.png"
)

// iconSVG is the server's first icon: a data: URI small enough for any
// client to keep.
const iconSVG = "data:image/svg+xml;base64,PHN2ZyB4bWxucz0iaHR0cDovL3d3dy53My5vcmcvMjAwMC9zdmciIHZpZXdCb3g9IjAgMCAxIDEiLz4="

// implementation is the serverInfo the server sends.
func implementation(opts Options) *mcp.Implementation {
	return &mcp.Implementation{
		Name: opts.Name, Title: Title, Version: version, WebsiteURL: WebsiteURL,
		Icons: []mcp.Icon{
			{Source: iconSVG, MIMEType: "image/svg+xml", Sizes: []string{"any"}},
			{Source: IconURL, MIMEType: "image/png", Sizes: []string{"48x48"}, Theme: mcp.IconThemeDark},
		},
	}
}

// instructionsOf is the server's instructions: the fixed text, then the
// text of [Options.InstructionsFile] as it is when the server starts. A
// missing file adds nothing; one that cannot be read is said on stderr.
func instructionsOf(opts Options, stderr *lockedWriter) string {
	if opts.InstructionsFile == "" {
		return instructions
	}
	extra, err := os.ReadFile(opts.InstructionsFile)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return instructions
	case err != nil:
		_ = stderr.writeLine("example server: reading the instructions file: " + err.Error())
		return instructions
	}
	return instructions + "\n" + string(extra)
}
