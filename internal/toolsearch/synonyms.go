package toolsearch

import "strings"

// synonymGroups are words that people and tool authors use for the same
// action or object. They are general English software vocabulary, written
// once for any tool set (not for any server or query in particular): each
// group is a set of words a user may say for what a tool's name or
// description calls by another of them, or a word and its close relatives
// (know and knowledge, which stemming does not join). The groups cover
// the everyday words of computing at large (files, the browser and its
// page, windows and the pointer, code and its console, the network,
// accounts and sign-in, memory and notes, data and its records, time,
// tasks, calendars), not only those of the servers it was measured on. A
// word with several common senses that no group can tell apart ("note": a
// file, a comment, a fact, to remember; "email": an address or a
// message) is left out: its expansions would be wrong as often as right. A word may be in more than one
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
		{"click", "press", "tap", "hit", "select", "choose", "pick"},
		{"type", "enter", "fill", "input", "key", "write"},
		{"close", "quit", "exit", "shut", "end"},
		{"wait", "sleep", "pause", "delay"},
		{"stop", "cancel", "abort", "kill", "terminate", "halt"},
		{"start", "begin", "launch", "spawn"},
		{"send", "submit", "transmit", "dispatch", "deliver"},
		{"undo", "revert", "rollback", "restore"},
		{"refresh", "reload"},
		{"sort", "order", "arrange", "rank"},
		{"check", "verify", "validate", "inspect"},
		{"convert", "transform", "encode", "format"},
		{"compress", "zip", "gzip", "archive", "pack"},
		{"extract", "unzip", "decompress", "unpack"},
		{"scroll", "swipe"},
		{"zoom", "magnify", "scale"},
		{"summarize", "summarise", "summary", "overview", "digest"},
		{"calculate", "compute", "math", "arithmetic"},
		{"upload", "attach"},
		{"download", "export", "save"},
		{"compare", "diff", "difference"},
		{"drag", "drop"},
		{"hover", "mouse", "point", "cursor", "pointer"},
		{"back", "previous", "return"},
		{"resize", "size", "dimension", "width", "height", "resolution"},
		{"echo", "repeat", "say"},
		{"sum", "add", "total", "plus"},
		{"think", "reason", "reflect", "plan", "analyze", "thought", "step"},
		{"remember", "memory", "recall", "memorize", "memorise", "knowledge", "know", "learn"},
		{"remember", "keep", "store", "retain", "memorize"},
		{"login", "signin", "logon", "authenticate", "authentication", "auth"},
		{"logout", "signout", "logoff"},
		// Objects.
		{"file", "document", "doc"},
		{"disk", "drive", "filesystem", "local", "storage"},
		{"folder", "directory", "dir"},
		{"content", "text", "body", "contents"},
		{"info", "information", "metadata", "detail", "details", "stat", "stats", "property", "properties", "attribute"},
		{"page", "webpage", "website", "site", "url", "link", "web", "homepage"},
		{"url", "address", "uri", "href", "link"},
		{"screenshot", "capture", "screen", "snapshot", "image", "picture"},
		{"image", "picture", "photo", "photograph", "img", "graphic"},
		{"audio", "sound", "music", "recording", "voice"},
		{"video", "movie", "clip", "film"},
		{"window", "viewport", "screen", "monitor"},
		{"size", "space", "byte", "big", "usage", "footprint"},
		{"user", "person", "people", "member", "account"},
		{"account", "profile", "identity", "self", "whoami"},
		{"password", "secret", "credential", "token", "passphrase"},
		{"database", "table", "datasource", "collection", "spreadsheet"},
		{"row", "record", "entry"},
		{"column", "field", "property", "attribute"},
		{"entity", "node", "object", "item"},
		{"fact", "observation"},
		{"comment", "remark", "annotation"},
		{"relation", "relationship", "link", "connection", "edge", "association"},
		{"tree", "hierarchy", "structure", "nested", "recursive", "outline"},
		{"request", "network", "http", "traffic", "xhr", "ajax"},
		{"response", "reply", "answer", "result"},
		{"console", "log", "terminal", "stdout", "stderr", "devtools"},
		{"javascript", "js", "script", "code", "snippet"},
		{"dialog", "alert", "popup", "prompt", "modal"},
		{"dropdown", "combobox", "picker", "menu", "option", "choice"},
		{"keyboard", "keystroke", "key", "shortcut", "hotkey"},
		{"error", "failure", "problem", "issue", "exception", "bug", "crash", "fault"},
		{"form", "field", "input"},
		{"environment", "env", "variable", "config", "configuration", "setting"},
		{"allowed", "permitted", "accessible", "access"},
		{"permission", "access", "privilege", "right", "role"},
		{"current", "present", "active"},
		{"recent", "latest", "last", "newest"},
		{"time", "date", "timestamp", "datetime", "clock"},
		{"task", "todo", "ticket"},
		{"repository", "repo", "project"},
		{"calendar", "event", "meeting", "appointment"},
		{"accessibility", "a11y", "aria"},
	}
}

// synonymWeight is the weight of a match through a synonym, against 1 for
// the word itself: a tool that says what the user said ranks above one
// that says it in other words.
const synonymWeight = 0.6

// phrase is a few words of a query that together stand for one word of
// the synonym table, where its words apart say something else ("logged
// in" is not about logs).
type phrase struct {
	words []string
	word  string
}

// queryPhrases are the everyday phrases of requests that mean one word
// of the synonym table: signing in and out, asking who one is, asking
// for a size or a count.
func queryPhrases() []phrase {
	p := func(text, word string) phrase { return phrase{strings.Fields(text), word} }
	return []phrase{
		p("log in", "login"), p("logged in", "login"), p("logging in", "login"),
		p("sign in", "signin"), p("signed in", "signin"), p("signing in", "signin"),
		p("log out", "logout"), p("logged out", "logout"), p("sign out", "signout"), p("signed out", "signout"),
		p("who am i", "whoami"),
		p("how big", "size"), p("how large", "size"), p("how much space", "size"),
		p("how many", "count"),
		p("right now", "current"), p("at the moment", "current"),
	}
}
