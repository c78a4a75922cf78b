package tools

import "encoding/json"

// Content is one block of a tool result in the form an agent host hands to
// its model: text, an image or audio. Every other MCP block type (embedded
// resources, resource links, future types) is turned into a readable text
// block by the adapter, so a host only ever has to handle these three.
type Content struct {
	// Type is "text", "image" or "audio".
	Type string `json:"type"`
	// Text is set for text blocks.
	Text string `json:"text,omitempty"`
	// MIMEType is set for image and audio blocks, for example "image/png"
	// or "audio/wav".
	MIMEType string `json:"mime_type,omitempty"`
	// Data holds the raw image or audio bytes (base64 in JSON).
	Data []byte `json:"data,omitempty"`
	// Annotations are the block's annotations, nil when the server sent
	// none. Like tool annotations they are the server's claims.
	Annotations *ContentAnnotations `json:"annotations,omitempty"`
}

// Content types a host can receive.
const (
	ContentText  = "text"
	ContentImage = "image"
	ContentAudio = "audio"
)

// ContentAnnotations are what a server said about a content block (MCP
// annotations): who it is for, how much it matters and when it changed.
// Only what the server sent is set.
type ContentAnnotations struct {
	// Audience is who the block is meant for: "user", "assistant" or both.
	Audience []string `json:"audience,omitempty"`
	// Priority is how important the block is, from 0 (optional) to 1
	// (required); nil when not sent.
	Priority *float64 `json:"priority,omitempty"`
	// LastModified is when the content last changed, as the server wrote
	// it (ISO 8601).
	LastModified string `json:"last_modified,omitempty"`
}

// ResourceLink is a resource a tool result pointed to (an MCP resource
// link block), or the identity of a resource it embedded (then only URI
// and MIMEType are set). The model sees a text line for it; a host that
// wants to fetch or show the resource finds these in Details.
type ResourceLink struct {
	// URI is the resource's URI, to read it by (resources/read).
	URI string `json:"uri"`
	// Name is the server's name for the resource.
	Name string `json:"name,omitempty"`
	// Title is its human-readable name, if the server sent one.
	Title string `json:"title,omitempty"`
	// Description says what the resource is, if the server said.
	Description string `json:"description,omitempty"`
	// MIMEType is the resource's MIME type, if the server sent one.
	MIMEType string `json:"mime_type,omitempty"`
	// Size is the resource's size in bytes, nil when not sent.
	Size *int64 `json:"size,omitempty"`
}

// Result is what a tool call returns to the host.
type Result struct {
	// Content is the converted content, in the server's order.
	Content []Content `json:"content"`
	// StructuredContent is the tool's structured result as JSON, nil when
	// the tool returned none. When the tool declares an output schema the
	// runtime has checked it against that schema: a result that does not
	// match arrives as IsError with a text block saying why, no
	// StructuredContent and Details["output_schema_mismatch"] true (the SDK
	// validates only on its server side, so this check is the runtime's).
	// It goes unchecked when the tool set isError (a failure need not
	// match), and when the schema is unusable (it does not compile, has a
	// $ref outside itself, or is past the runtime's bounds of size, depth
	// or cost; one output_schema_unusable event said so when it was
	// listed), and when checking this result would cost too much memory:
	// its JSON bytes × (depth + 10) × (1 + 4 × branches × (depth + 1)) is
	// over 10 000 000, where depth is its nesting of objects and arrays and
	// branches the anyOf, oneOf, not, if and contains subschemas the
	// schema tries on a value (a flat schema has none, and checks some
	// 750 KB of table). Such a result is passed on whole, not an error,
	// with Details["output_schema_unchecked"] a short reason naming the
	// bound.
	StructuredContent json.RawMessage `json:"structured_content,omitempty"`
	// IsError reports that the tool itself reported a failure (MCP isError),
	// or that its structured result did not match its output schema.
	// The call still succeeded at the protocol level; the model should see
	// the content as an error message.
	IsError bool `json:"is_error"`
	// Details carries what does not belong in the chat, under the keys
	// documented in package adapter: "is_error" (true when IsError),
	// "output_schema_mismatch" (true when the runtime made it an error),
	// "output_schema_unchecked" (why the runtime did not check it),
	// "resource_links" and "embedded_resources" ([]ResourceLink), and
	// "truncated" (a Truncation) when the runtime cut the result to the
	// server's max_output_bytes or max_media_bytes.
	Details map[string]any `json:"details,omitempty"`
}

// Truncation says how the runtime cut a result to its server's output
// caps (Details["truncated"]). Text counts the bytes of every text block
// the model sees, in order; media the bytes of image and audio data. A
// cap of -1 is no cap. Each cut is also said in a text block at the end
// of Content, so the model knows it did not get everything.
type Truncation struct {
	// TextBytes is the text the result had, TextShown what is left of it;
	// TextBlocksDropped counts the text blocks past the cut.
	TextBytes         int `json:"text_bytes"`
	TextShown         int `json:"text_shown"`
	TextBlocksDropped int `json:"text_blocks_dropped"`
	MaxOutputBytes    int `json:"max_output_bytes"`
	// MediaBytes is the image and audio data the result had, MediaShown
	// what is left; MediaBlocksDropped counts the blocks left out.
	MediaBytes         int `json:"media_bytes"`
	MediaShown         int `json:"media_shown"`
	MediaBlocksDropped int `json:"media_blocks_dropped"`
	MaxMediaBytes      int `json:"max_media_bytes"`
	// StructuredContentDropped is the size of the structured content left
	// out for being over MaxOutputBytes (0: kept, or there was none). It
	// was checked against the output schema before it was dropped.
	StructuredContentDropped int `json:"structured_content_dropped"`
	// BlocksDropped counts the blocks left out past the first 1024 of a
	// result, which the caps' figures above do not count as shown.
	BlocksDropped int `json:"blocks_dropped"`
}
