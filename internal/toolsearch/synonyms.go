package toolsearch

// synonymGroups are words that people and tool authors use for the same
// action or object. They are general English software vocabulary, written
// once for any tool set (not for any server or query in particular): each
// group is a set of words a user may say for what a tool's name or
// description calls by another of them. A word may be in more than one
// group ("open" is both reading and visiting); its expansions are the
// union. A query word is matched by itself at full weight and by the other
// words of its groups at synonymWeight.
func synonymGroups() [][]string {
	return [][]string{
		// Actions.
		{"get", "fetch", "read", "retrieve", "load", "obtain", "view", "open", "show", "display", "look", "see"},
		{"find", "search", "query", "lookup", "look", "locate", "seek", "filter", "grep"},
		{"list", "enumerate", "browse", "show"},
		{"create", "add", "new", "make", "insert", "append", "post"},
		{"update", "edit", "modify", "change", "patch", "alter", "set", "replace", "revise"},
		{"delete", "remove", "erase", "destroy", "drop", "discard", "trash", "archive", "clear", "forget"},
		{"write", "save", "store", "put", "persist", "record"},
		{"move", "rename", "relocate"},
		{"copy", "duplicate", "clone"},
		{"run", "execute", "evaluate", "eval", "invoke", "call", "perform"},
		{"navigate", "visit", "go", "open", "browse", "goto", "load"},
		{"click", "press", "tap", "select", "choose", "pick"},
		{"type", "enter", "fill", "input", "key", "write"},
		{"close", "quit", "exit", "shut", "end"},
		{"wait", "sleep", "pause", "delay"},
		{"upload", "attach"},
		{"download", "export", "save"},
		{"compare", "diff", "difference"},
		{"drag", "drop"},
		{"hover", "mouse", "point"},
		{"back", "previous", "return"},
		{"resize", "size", "dimension"},
		{"echo", "repeat", "say"},
		{"sum", "add", "total", "plus"},
		{"think", "reason", "reflect", "plan", "analyze", "thought", "step"},
		{"remember", "memory", "recall", "memorize", "knowledge"},
		// Objects.
		{"file", "document", "doc"},
		{"disk", "drive", "filesystem", "local", "storage"},
		{"folder", "directory", "dir"},
		{"content", "text", "body", "contents"},
		{"info", "information", "metadata", "detail", "details", "stat", "stats", "property", "properties", "attribute"},
		{"page", "webpage", "website", "site", "url", "link", "web"},
		{"screenshot", "capture", "screen", "snapshot", "image", "picture"},
		{"user", "person", "people", "member", "account"},
		{"database", "table", "datasource", "collection", "spreadsheet"},
		{"entity", "node", "object", "item"},
		{"relation", "relationship", "link", "connection", "edge"},
		{"tree", "hierarchy", "structure", "nested", "recursive"},
		{"request", "network", "http", "traffic"},
		{"dialog", "alert", "popup", "prompt", "modal"},
		{"error", "failure", "problem", "issue"},
		{"form", "field", "input"},
		{"environment", "env", "variable", "config", "configuration", "setting"},
		{"allowed", "permitted", "accessible", "access"},
	}
}

// synonymWeight is the weight of a match through a synonym, against 1 for
// the word itself: a tool that says what the user said ranks above one
// that says it in other words.
const synonymWeight = 0.6
