// Package catalog lists MCP servers a user could add to mcpvisor: a small
// built-in list of well-known servers as templates, and the servers already
// configured in other hosts on this machine (Claude Desktop, Claude Code,
// Cursor, VS Code, Windsurf, opencode, goose, Zed, Codex, Gemini CLI).
//
// Each [Entry] holds the server mapped to mcpvisor's storage form (the
// fields of one server of mcp_servers.json, as [config.Parse] reads them)
// and warnings for what could not be mapped. The host's own references to
// environment variables become mcpvisor's `${VAR}` references; a literal
// `${` the host would not expand is written `$${` so that it stays literal.
//
// Config holds the host file's values as they are, secrets included: a
// caller that answers a request masks it through the config package's view
// first. Warnings never hold a value from a file: they name fields, quote
// only names (of servers, types, VS Code inputs), and give positions.
//
// Files are read with bounds: a JSON file is walked as a token stream that
// keeps only the keys that hold servers (a real ~/.claude.json can exceed
// 60 MB of history), and a file over [MaxFileBytes] is refused; what is
// kept of one file is bounded by [MaxFileKeptBytes] and [MaxFileEntries],
// past which the rest is a warning. JSONC, YAML
// and TOML files, which are small settings files, are read whole up to
// [MaxSettingsBytes]. A file that is missing is skipped; one that is
// corrupt, unreadable, not a regular file, or a symlink that resolves
// outside the home directory and the project folders yields one
// [SourceWarning] and nothing else.
package catalog
