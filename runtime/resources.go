package runtime

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
)

// MaxResourceURIBytes bounds the URI of a resource read: a longer one is
// refused before anything is sent.
const MaxResourceURIBytes = 4096

// ResourceContents is one item of a resource the server returned: text or
// a blob (never both), with its MIME type and its _meta. For an MCP App
// (a ui:// resource of MIME type tools.AppMIMEType) Meta's "ui" member
// carries what the host needs to sandbox it: csp (connectDomains,
// resourceDomains, frameDomains, baseUriDomains), permissions (camera,
// microphone, geolocation, clipboardWrite), domain and prefersBorder.
// Text and Blob are not scrubbed or cut: they are the resource, as the
// server wrote it, and their size is bounded by the transport's answer
// limit (16 MiB). URI, MIMEType and Meta are the runtime's description
// of it, and are scrubbed of the connection's secrets like every such
// field (a server may echo one into a URL in _meta): Meta stays valid
// JSON, or becomes the quoted marker.
type ResourceContents struct {
	// URI is the URI of this item (a read may return several).
	URI string
	// MIMEType is the item's MIME type, if the server sent one.
	MIMEType string
	// Text is the item's text, when it is not a blob.
	Text string
	// Blob is the item's binary content (base64 in JSON), nil for text.
	// It is the runtime's own copy.
	Blob []byte
	// Meta is the item's _meta object as JSON (re-encoded from the SDK's
	// decoded form: same meaning, keys possibly reordered), nil if none.
	Meta json.RawMessage
}

// IsBlob reports whether the item is binary (Blob) rather than text.
func (c ResourceContents) IsBlob() bool { return c.Blob != nil }

// ResourceResult is what a resource read returned.
type ResourceResult struct {
	// Contents are the items of the resource, in the server's order (a
	// read may return several, e.g. a directory's files); never nil.
	Contents []ResourceContents
}

// ReadResource reads a resource of the named server (resources/read), a
// ui:// resource of an MCP App included, within the server's
// timeout_seconds. An unknown server fails with ErrUnknownServer, one
// without a live session with ErrNotReady, one whose session does not
// declare resources with ErrNotDeclared, an empty or overlong uri with
// ErrBadResourceURI, all at once; the server's own refusal (an unknown
// URI) is its JSON-RPC error, scrubbed of the server's secrets like every
// error of a connection.
//
// On a 2026-07-28 session the SDK answers a read from its cache while the
// server's ttlMs for it lasts, until notifications/resources/updated for
// the URI; the result is then the same for every caller, which is why the
// runtime copies what it returns.
func (r *Runtime) ReadResource(ctx context.Context, server, uri string) (ResourceResult, error) {
	if r.tel != nil {
		return r.tracedRead(ctx, server, uri)
	}
	return r.readResource(ctx, server, uri)
}

// readResource is ReadResource without its telemetry.
func (r *Runtime) readResource(ctx context.Context, server, uri string) (ResourceResult, error) {
	if err := checkResourceURI(uri); err != nil {
		return ResourceResult{}, fmt.Errorf("reading a resource on %q: %w", server, err)
	}
	what := "reading resource " + strconv.Quote(uri)
	conn, err := r.connOf(server, what)
	if err != nil {
		return ResourceResult{}, err
	}
	if conn.Capabilities().Resources == nil {
		return ResourceResult{}, fmt.Errorf("%s on %q: %w (resources)", what, server, ErrNotDeclared)
	}
	res, err := conn.ReadResource(ctx, uri)
	if err != nil {
		return ResourceResult{}, err
	}
	out := ResourceResult{Contents: make([]ResourceContents, 0, len(res.Contents))}
	for _, c := range res.Contents {
		if c == nil {
			continue
		}
		item := ResourceContents{URI: conn.Scrub(c.URI), MIMEType: conn.Scrub(c.MIMEType), Text: c.Text, Blob: slices.Clone(c.Blob)}
		if len(c.Meta) > 0 {
			// Decoded from JSON by the SDK, so it encodes again.
			meta, _ := json.Marshal(c.Meta)
			item.Meta = conn.ScrubJSON(meta)
		}
		out.Contents = append(out.Contents, item)
	}
	return out, nil
}

// checkResourceURI refuses a URI that is empty or longer than
// MaxResourceURIBytes.
func checkResourceURI(uri string) error {
	switch {
	case uri == "":
		return fmt.Errorf("%w: empty", ErrBadResourceURI)
	case len(uri) > MaxResourceURIBytes:
		return fmt.Errorf("%w: %d bytes, longer than %d", ErrBadResourceURI, len(uri), MaxResourceURIBytes)
	}
	return nil
}
