package catalog

import "github.com/openprogram/mcpvisor/config"

// A template is a well-known server. Every value the user must supply is a
// `${VAR}` reference, listed in the entry's Requires: set the variable, or
// overlay the field when applying. A template never holds a secret.
type template struct {
	name        string
	description string
	cfg         serverConfig
}

// templates are the official reference servers (the modelcontextprotocol
// servers repository: npx for the TypeScript ones, uvx for the Python
// ones) and GitHub's remote server.
func templates() []template {
	npx := func(pkg string, args ...string) serverConfig {
		return serverConfig{Type: config.TypeLocal, Command: append([]string{"npx", "-y", pkg}, args...)}
	}
	uvx := func(pkg string, args ...string) serverConfig {
		return serverConfig{Type: config.TypeLocal, Command: append([]string{"uvx", pkg}, args...)}
	}
	return []template{
		{"everything", "the MCP test server: every feature of the protocol", npx("@modelcontextprotocol/server-everything")},
		{"fetch", "fetches a URL and turns the page into markdown", uvx("mcp-server-fetch")},
		{"filesystem", "reads and writes files under the allowed directory", npx("@modelcontextprotocol/server-filesystem", "${FILESYSTEM_ROOT}")},
		{"git", "reads and changes a git repository", uvx("mcp-server-git", "--repository", "${GIT_REPOSITORY}")},
		{"memory", "a knowledge graph kept across sessions", npx("@modelcontextprotocol/server-memory")},
		{"sequential-thinking", "step-by-step problem solving", npx("@modelcontextprotocol/server-sequential-thinking")},
		{"time", "the time and time zone conversions", uvx("mcp-server-time")},
		{"github", "GitHub's remote server (Streamable HTTP) with a personal access token", serverConfig{
			Type:    config.TypeHTTP,
			URL:     "https://api.githubcopilot.com/mcp/",
			Headers: map[string]string{"Authorization": "Bearer ${GITHUB_TOKEN}"},
		}},
	}
}

func readBuiltin(c *collector) {
	for _, t := range templates() {
		c.add(SourceBuiltin, "", t.name, &mapping{cfg: t.cfg})
		c.entries[len(c.entries)-1].Description = t.description
	}
}
