package tools

// Annotations are a tool's behaviour hints as its server sent them. They
// are untrusted claims of the server (the MCP spec says so): a host may use
// them to decide when to ask the user, never to skip asking because a
// server says a tool is harmless. A hint the server did not send is nil;
// Hints applies the spec's defaults for those.
//
// On stdio the runtime reads the hints from the bytes the server sent. On
// Streamable HTTP and SSE it sees only the SDK's decoded form, where
// readOnlyHint and idempotentHint are plain booleans: there a false or
// missing one is reported as not sent (nil), a true one as sent.
type Annotations struct {
	// Title is the annotations' human-readable title, if sent.
	Title string `json:"title,omitempty"`
	// ReadOnlyHint: the tool does not modify its environment.
	ReadOnlyHint *bool `json:"read_only_hint,omitempty"`
	// DestructiveHint: the tool may perform destructive updates
	// (meaningful only when it is not read-only).
	DestructiveHint *bool `json:"destructive_hint,omitempty"`
	// IdempotentHint: calling it again with the same arguments has no
	// further effect (meaningful only when it is not read-only).
	IdempotentHint *bool `json:"idempotent_hint,omitempty"`
	// OpenWorldHint: the tool interacts with an open world of external
	// entities.
	OpenWorldHint *bool `json:"open_world_hint,omitempty"`
}

// Hints are a tool's behaviour hints with the spec's defaults filled in.
type Hints struct {
	// ReadOnly: the tool does not change its environment (default false).
	ReadOnly bool
	// Destructive: the tool may delete or overwrite (default true; a
	// read-only tool is never destructive, whatever the server said).
	Destructive bool
	// Idempotent: a repeat call with the same arguments has no further
	// effect (default false).
	Idempotent bool
	// OpenWorld: the tool reaches entities outside the server (the web,
	// other people's data) (default true).
	OpenWorld bool
}

// Hints returns the hints a host should assume: each one the server sent,
// and the spec's default for each one it did not (read-only false,
// destructive true, idempotent false, open-world true). It works on a nil
// *Annotations (a tool without annotations) and changes nothing stored.
func (a *Annotations) Hints() Hints {
	h := Hints{Destructive: true, OpenWorld: true}
	if a == nil {
		return h
	}
	for _, f := range []struct {
		sent *bool
		to   *bool
	}{{a.ReadOnlyHint, &h.ReadOnly}, {a.DestructiveHint, &h.Destructive}, {a.IdempotentHint, &h.Idempotent}, {a.OpenWorldHint, &h.OpenWorld}} {
		if f.sent != nil {
			*f.to = *f.sent
		}
	}
	return h
}

// Icon is one icon a server offers for a tool (or prompt, resource,
// server). Src is a URL or data: URI from the server: a host that renders
// it should treat it as untrusted content. The runtime keeps the first 8
// icons of an item whose src is at most 4 KiB (a longer one, a large
// data: URI, is dropped rather than cut), each scrubbed of the server's
// secrets, its MIME type, theme and up to 8 sizes at most 64 bytes each.
type Icon struct {
	Src      string   `json:"src"`
	MIMEType string   `json:"mime_type,omitempty"`
	Sizes    []string `json:"sizes,omitempty"`
	// Theme is "light" or "dark" when the icon is meant for one.
	Theme string `json:"theme,omitempty"`
}
