package exampleserver

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Resources the server lists; tests compare against them.
const (
	readmeURI      = "demo://readme"
	readmeMIMEType = "text/markdown"
	notesTemplate  = "demo://notes/{id}"
	notesPrefix    = "demo://notes/"
)

// readmeText is the text of [readmeURI].
const readmeText = `# mcpvisor example server

The example MCP server that ` + "`demo serve`" + ` runs on stdio.

- Tools: echo, add, sleep, fail, image, resource, env, stderr, future, schema,
  described, consult;
  with -change-tool also change, which adds tools, prompts and resources.
- Prompts: greet {name, style}.
- Resources: this readme, and demo://notes/{id} for any id.
`

// addResources registers the server's static resource and its template,
// whose notes n keeps.
func addResources(srv *mcp.Server, n *notes) {
	srv.AddResource(&mcp.Resource{
		URI:         readmeURI,
		Name:        "readme",
		Title:       "About the example server",
		Description: "What the example server offers.",
		MIMEType:    readmeMIMEType,
		Icons:       []mcp.Icon{SmallIcon(), BigIcon()},
		Annotations: &mcp.Annotations{Audience: []mcp.Role{"user", "assistant"}, Priority: 0.8, LastModified: ReadmeModified},
	}, textResource(readmeText))
	srv.AddResourceTemplate(&mcp.ResourceTemplate{
		URITemplate: notesTemplate,
		Name:        "notes",
		Title:       "Notes",
		Description: "A one-line note for any id: reading demo://notes/7 returns \"note 7\".",
		MIMEType:    "text/plain",
		Icons:       []mcp.Icon{SmallIcon()},
		Annotations: &mcp.Annotations{Audience: []mcp.Role{"assistant"}},
	}, n.read)
}

// textResource returns a handler that answers every read with text; the SDK
// fills in the URI and the MIME type the resource was registered with.
func textResource(text string) mcp.ResourceHandler {
	return func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{Text: text}}}, nil
	}
}
