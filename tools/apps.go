package tools

import "slices"

// MCP Apps (the io.modelcontextprotocol/ui extension, SEP-1865): a tool may
// name a ui:// resource that a host renders as its interface, and may be
// meant for that interface only.
const (
	// AppsExtension is the extension's identifier in the client and server
	// capabilities.
	AppsExtension = "io.modelcontextprotocol/ui"
	// AppMIMEType is the MIME type of an MCP App's HTML resource.
	AppMIMEType = "text/html;profile=mcp-app"
	// AppScheme is the URI scheme of an MCP App's resource.
	AppScheme = "ui://"
)

// The audiences of a tool's _meta.ui.visibility.
const (
	// VisibleToModel: the tool is offered to the host's model.
	VisibleToModel = "model"
	// VisibleToApp: the tool may be called by the server's own MCP App
	// (through the host).
	VisibleToApp = "app"
)

// DefaultVisibility returns the visibility of a tool whose server sent
// none: model and app, as the extension says.
func DefaultVisibility() []string { return []string{VisibleToModel, VisibleToApp} }

// ForModel reports whether the host may offer the tool to its model: its
// visibility includes "model" (a tool without one, such as a meta tool,
// is for the model). Runtime.Tools leaves out the tools for which it is
// false, and so must any search over the tools meant for the model. Such
// a tool stays registered and callable by the host (for its MCP App).
func (t Tool) ForModel() bool {
	return t.Visibility == nil || slices.Contains(t.Visibility, VisibleToModel)
}

// ForApp reports whether the server's MCP App may call the tool: its
// visibility includes "app". A host relaying a call from an app's frame
// refuses one for which it is false, and any call of a tool of another
// server.
func (t Tool) ForApp() bool {
	return t.Visibility == nil || slices.Contains(t.Visibility, VisibleToApp)
}
