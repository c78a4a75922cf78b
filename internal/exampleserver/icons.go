package exampleserver

import (
	"encoding/base64"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The icons of the greet prompt and of the resources: a small one, and one
// whose data: URI is larger than a model-facing listing shows.

// ReadmeModified is the readme resource's lastModified annotation.
const ReadmeModified = "2026-12-01T00:00:00Z"

// SmallIcon is a PNG icon as a short data: URI.
func SmallIcon() mcp.Icon {
	return mcp.Icon{Source: "data:image/png;base64,AA==", MIMEType: "image/png", Sizes: []string{"16x16"}}
}

// BigIcon is an SVG icon whose data: URI is over 1 KiB.
func BigIcon() mcp.Icon {
	svg := `<svg xmlns="http://www.w3.org/2000/svg">` + strings.Repeat(`<rect width="1" height="1"/>`, 40) + `</svg>`
	return mcp.Icon{Source: "data:image/svg+xml;base64," + base64.StdEncoding.EncodeToString([]byte(svg)), MIMEType: "image/svg+xml", Sizes: []string{"any"}}
}
