package tools

// Content is one block of a tool result in the form an agent host hands to
// its model: text or an image. Every other MCP block type (embedded
// resources, resource links, audio, future types) is turned into a readable
// text block by the adapter, so a host only ever has to handle these two.
type Content struct {
	// Type is "text" or "image".
	Type string `json:"type"`
	// Text is set for text blocks.
	Text string `json:"text,omitempty"`
	// MIMEType is set for image blocks, for example "image/png".
	MIMEType string `json:"mime_type,omitempty"`
	// Data holds the raw image bytes (base64 in JSON).
	Data []byte `json:"data,omitempty"`
}

// Content types a host can receive.
const (
	ContentText  = "text"
	ContentImage = "image"
)

// Result is what a tool call returns to the host.
type Result struct {
	// Content is the converted content, in the server's order.
	Content []Content `json:"content"`
	// IsError reports that the tool itself reported a failure (MCP isError).
	// The call still succeeded at the protocol level; the model should see
	// the content as an error message.
	IsError bool `json:"is_error"`
	// Details carries what does not belong in the chat: "is_error" (true
	// when IsError), "structured_content" (the server's structured result),
	// and similar machine-readable extras.
	Details map[string]any `json:"details,omitempty"`
}
