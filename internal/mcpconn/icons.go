package mcpconn

import (
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/openprogram/mcpvisor/internal/redact"
	"github.com/openprogram/mcpvisor/tools"
)

// Bounds on the icons a server gives a tool, prompt, resource, template
// or itself. The runtime keeps them (the registry, status, the history of
// events) and shows them in its API, so a server's thousand icons or
// megabyte data: URI must not become ours.
const (
	// MaxIcons is how many of an item's icons are kept (the first).
	MaxIcons = 8
	// MaxIconSrcBytes bounds each icon's src: an icon whose src is longer
	// (a large data: URI) is dropped, since a cut URI shows nothing.
	MaxIconSrcBytes = 4 << 10
	// maxIconSizes bounds the size list of an icon, and maxIconField each
	// entry of it and the icon's MIME type and theme.
	maxIconSizes, maxIconField = 8, 64
)

// Icons is the one rule for every icon a server sends (of a tool, prompt,
// resource, template or its server info): the first MaxIcons whose src
// fits MaxIconSrcBytes, each scrubbed of the connection's secrets and
// bounded. None is nil.
func (c *Conn) Icons(from []mcp.Icon) []tools.Icon { return boundedIcons(c.scrub, from) }

// boundedIcons is Icons with the scrubber given.
func boundedIcons(scrub *redact.Scrubber, from []mcp.Icon) []tools.Icon {
	var out []tools.Icon
	for _, i := range from {
		if len(out) == MaxIcons {
			break
		}
		src := whole(scrub, i.Source, MaxIconSrcBytes)
		if src == "" {
			continue
		}
		icon := tools.Icon{
			Src:      src,
			MIMEType: whole(scrub, i.MIMEType, maxIconField),
			Theme:    whole(scrub, string(i.Theme), maxIconField),
		}
		for _, size := range i.Sizes[:min(len(i.Sizes), maxIconSizes)] {
			if size = whole(scrub, size, maxIconField); size != "" {
				icon.Sizes = append(icon.Sizes, size)
			}
		}
		out = append(out, icon)
	}
	return out
}
