// Package adapter translates between the MCP wire types of the go-sdk and the
// tool types an agent host works with. Every function is pure: no I/O, no
// shared state, safe for concurrent use.
//
// # Tool names
//
// [ToolName] builds the registry name "{server}__{tool}" that a model sees.
// Models and their APIs accept only a small alphabet and a bounded length, so
// the name is sanitised to [A-Za-z0-9_-] and capped at [MaxToolNameLen],
// keeping the tool's own name rather than the server's when something must go.
//
// # Results
//
// [ConvertResult] and [ConvertContent] turn an MCP tool result into a
// tools.Result that holds only text, image and audio blocks. Everything
// else (embedded resources, resource links, block types this package does
// not know) becomes one readable text line, so nothing disappears silently
// and no resource payload is pushed into the chat; the URIs of resource
// links and embedded resources are also listed in Details for the host.
// Structured content is kept as JSON in Result.StructuredContent.
//
// # Schemas
//
// [SchemaJSON] gives a tool's input schema as JSON for the host's registry.
package adapter
