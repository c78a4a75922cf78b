package mcpconn

import "github.com/modelcontextprotocol/go-sdk/mcp"

// cachingProtocol is the first protocol version on which the SDK caches
// list and read results (SEP-2549).
const cachingProtocol = "2026-07-28"

// uncached keeps the SDK's read cache from holding a result it will never
// serve. On 2026-07-28 sessions the SDK's ReadResource puts every result
// into its per-session cache, keyed by URI, ttlMs or not, and drops an
// entry only when the same URI is read again or updated: reading many
// URIs would hold every answer (up to the 16 MiB answer limit each) for
// the session's life. An entry whose ttlMs is 0 or less is never served
// (the cache deletes it on the next get, so no other read of the URI,
// concurrent ones included, can be handed this pointer), so uncached
// moves its contents into a result of the caller's own and empties the
// one the SDK holds: its entry keeps an empty result and the URI.
//
// A result with a positive ttlMs is left as it is: the SDK serves it to
// every read of the URI until ttlMs has passed, and holds it (all of
// it) until the URI is read again after that, updated, or the session
// ends. A server that gives long TTLs to many large resources is trusted
// with that much of the runtime's memory for its session.
func uncached(res *mcp.ReadResourceResult) *mcp.ReadResourceResult {
	if res == nil || res.TTLMs > 0 {
		return res
	}
	own := *res
	// Only the fields a cache lookup never reads: it reads TTLMs alone
	// (under its lock), so this races with nothing.
	res.Contents, res.Meta, res.InputRequests, res.RequestState = nil, nil, nil, ""
	return &own
}

// uncachedPage is uncached for a page of resources, which the SDK caches
// by cursor: a model paging through list_resources with cursors of its
// choosing would otherwise leave every page it saw in the cache. (The
// other lists are cached under the few cursors of one full listing,
// which the runtime keeps anyway.)
func uncachedPage(res *mcp.ListResourcesResult) *mcp.ListResourcesResult {
	if res == nil || res.TTLMs > 0 {
		return res
	}
	own := *res
	res.Resources, res.Meta, res.NextCursor = nil, nil, ""
	return &own
}
