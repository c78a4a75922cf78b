package mcpconn

import (
	"encoding/json"
	"strings"

	"github.com/openprogram/mcpvisor/tools"
)

// maxUIResourceURI bounds the ui:// URI taken from a tool's _meta: a host
// reads and renders it, so a longer one is not a resource but a payload.
const maxUIResourceURI = 2048

// withAppMeta sets the tool's MCP Apps fields from its _meta (raw, bounded
// by the frame it came in): UIResourceURI from ui.resourceUri, or the
// deprecated flat "ui/resourceUri" when there is no nested one, and
// Visibility from ui.visibility. A value of the wrong type counts as not
// sent; a resource URI that is not ui:// (or too long) is not taken, as
// the extension allows no other scheme and a host would otherwise render
// whatever a server names.
func withAppMeta(meta json.RawMessage, tool tools.Tool) tools.Tool {
	if meta == nil {
		return tool
	}
	var m struct {
		UI   json.RawMessage `json:"ui"`
		Flat json.RawMessage `json:"ui/resourceUri"`
	}
	if json.Unmarshal(meta, &m) != nil {
		return tool
	}
	var ui struct {
		ResourceURI json.RawMessage `json:"resourceUri"`
		Visibility  json.RawMessage `json:"visibility"`
	}
	_ = json.Unmarshal(m.UI, &ui) // not an object: nothing in it
	uri := uiResourceURI(ui.ResourceURI)
	if uri == "" && ui.ResourceURI == nil {
		uri = uiResourceURI(m.Flat)
	}
	tool.UIResourceURI = uri
	var sent []string
	if ui.Visibility != nil && json.Unmarshal(ui.Visibility, &sent) == nil && sent != nil {
		tool.Visibility = visibility(sent)
	}
	return tool
}

// uiResourceURI is raw if it is a JSON string holding a ui:// URI of at
// most maxUIResourceURI bytes, else "".
func uiResourceURI(raw json.RawMessage) string {
	var s string
	if len(raw) > maxUIResourceURI+2 || json.Unmarshal(raw, &s) != nil {
		return ""
	}
	if len(s) > maxUIResourceURI || !strings.HasPrefix(s, tools.AppScheme) || len(s) == len(tools.AppScheme) {
		return ""
	}
	return s
}

// visibility is sent reduced to the known audiences, in a fixed order and
// each once: a server's list of any length costs two strings.
func visibility(sent []string) []string {
	out := []string{}
	for _, who := range []string{tools.VisibleToModel, tools.VisibleToApp} {
		for _, s := range sent {
			if s == who {
				out = append(out, who)
				break
			}
		}
	}
	return out
}
