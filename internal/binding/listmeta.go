package binding

import (
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/openprogram/mcpvisor/internal/mcpconn"
	"github.com/openprogram/mcpvisor/tools"
)

// What the model-facing listings (list_resources, list_prompts) show of
// a resource's, template's or prompt's metadata: its title, its icons and
// a resource's annotations, only what the server sent. The listings are
// JSON, so no server string can break them; icons are bounded because a
// data: URI can be any size and the listing goes into the model's context.

// listedLabels are what a resource and a template are called in a
// listing.
type listedLabels struct {
	Name        string `json:"name,omitempty"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	MIMEType    string `json:"mime_type,omitempty"`
}

// labelsOf is what a listing calls a resource or template. Its title is
// scrubbed, as every title the runtime shows (a tool's, a prompt's): the
// server may echo a secret of its config into it. Name and description
// are the server's words to the model, passed as they are, as its text
// blocks are.
func labelsOf(conn *mcpconn.Conn, name, title, description, mimeType string) listedLabels {
	return listedLabels{name, conn.Scrub(title), description, mimeType}
}

// listedMeta are a resource's or template's icons and annotations in a
// listing.
type listedMeta struct {
	Icons       []tools.Icon       `json:"icons,omitempty"`
	Annotations *listedAnnotations `json:"annotations,omitempty"`
}

// Bounds of the icons a listing shows per item, on top of conn.Icons's:
// the first maxListedIcons whose src is at most maxListedIconSrc bytes
// (longer ones, typically embedded images, are left out of the model's
// listing).
const (
	maxListedIcons   = 4
	maxListedIconSrc = 512
)

// listedIcons are the icons a listing shows of from, which conn listed.
func listedIcons(conn *mcpconn.Conn, from []mcp.Icon) []tools.Icon {
	var out []tools.Icon
	for _, i := range conn.Icons(from) {
		if len(out) == maxListedIcons {
			break
		}
		if len(i.Src) <= maxListedIconSrc {
			out = append(out, i)
		}
	}
	return out
}

// listedAnnotations are a resource's or template's annotations as sent:
// who it is for, how important it is (0 to 1; the SDK reads a priority of
// 0 as not sent), when it last changed.
type listedAnnotations struct {
	Audience     []string `json:"audience,omitempty"`
	Priority     float64  `json:"priority,omitempty"`
	LastModified string   `json:"last_modified,omitempty"`
}

// annotationsOf is a's listing form, nil when it says nothing.
func annotationsOf(a *mcp.Annotations) *listedAnnotations {
	if a == nil || (len(a.Audience) == 0 && a.Priority == 0 && a.LastModified == "") {
		return nil
	}
	out := &listedAnnotations{Priority: a.Priority, LastModified: a.LastModified}
	for _, r := range a.Audience {
		out.Audience = append(out.Audience, string(r))
	}
	return out
}
