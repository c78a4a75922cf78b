package exampleserver

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The lists the change tool can add to, as its argument names them.
const (
	listTools     = "tools"
	listPrompts   = "prompts"
	listResources = "resources"
)

// changeSchema is the input schema of the change tool, written by hand for
// its enum.
const changeSchema = `{"type":"object","properties":{"list":{"type":"string","enum":["tools","prompts","resources"],"description":"the list to add an item to: tools, prompts or resources"}},"required":["list"],"additionalProperties":false}`

// changeArgs are the arguments of the change tool.
type changeArgs struct {
	List string `json:"list"`
}

// changer adds items to a running server's lists for the change tool. The
// SDK announces each addition to the connected sessions with
// notifications/<list>/list_changed.
type changer struct {
	srv  *mcp.Server
	echo mcp.ToolHandlerFor[echoArgs, any] // the handler of every added tool

	mu    sync.Mutex
	added map[string]int // per list, the items added so far
}

// addChangeTool registers the change tool on srv.
func addChangeTool(srv *mcp.Server, t *tools) {
	c := &changer{srv: srv, echo: t.echo, added: map[string]int{}}
	mcp.AddTool(srv, &mcp.Tool{
		Name:        "change",
		Description: "Adds a tool, prompt or resource to the server, which then tells clients that the list changed.",
		InputSchema: json.RawMessage(changeSchema),
	}, c.change)
}

// change adds the next item to the list and says what it added:
// tool extra_<n> (an echo), prompt extra_<n>, or resource demo://extra/<n>,
// counting n from 1 for each list.
func (c *changer) change(_ context.Context, _ *mcp.CallToolRequest, in changeArgs) (*mcp.CallToolResult, any, error) {
	switch in.List {
	case listTools, listPrompts, listResources:
	default:
		// The schema rejects such a call before it gets here.
		return nil, nil, fmt.Errorf("list must be tools, prompts or resources, got %q", in.List)
	}
	c.mu.Lock()
	c.added[in.List]++
	n := c.added[in.List]
	c.mu.Unlock()

	name := fmt.Sprintf("extra_%d", n)
	switch in.List {
	case listTools:
		mcp.AddTool(c.srv, &mcp.Tool{Name: name, Description: "Added by the change tool; returns the given text unchanged."}, c.echo)
		return textResult("added tool " + name), nil, nil
	case listPrompts:
		c.srv.AddPrompt(&mcp.Prompt{Name: name, Description: "Added by the change tool."}, extraPrompt(n))
		return textResult("added prompt " + name), nil, nil
	default:
		uri := fmt.Sprintf("demo://extra/%d", n)
		c.srv.AddResource(&mcp.Resource{URI: uri, Name: name, Description: "Added by the change tool.", MIMEType: "text/plain"},
			textResource(fmt.Sprintf("extra resource %d", n)))
		return textResult("added resource " + uri), nil, nil
	}
}
