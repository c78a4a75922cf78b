package messages

// ListChanged reports that a session's server announced a change of one of
// its lists (notifications/tools|prompts|resources/list_changed). Sent by
// the session to its server actor, which re-lists and swaps its
// registrations.
type ListChanged struct {
	Gen  uint64
	List string // mcpconn.ListTools, ListPrompts or ListResources
}
