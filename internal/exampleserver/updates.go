package exampleserver

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// notes holds the version of each note of demo://notes/{id}: the update
// tool raises one, which changes its text and tells the clients
// subscribed to it (notifications/resources/updated).
type notes struct {
	mu       sync.Mutex
	versions map[string]int
}

// text is a note's text: "note <id>", then " (version <n>)" once updated.
func (n *notes) text(id string) string {
	n.mu.Lock()
	defer n.mu.Unlock()
	if v := n.versions[id]; v > 0 {
		return fmt.Sprintf("note %s (version %d)", id, v)
	}
	return "note " + id
}

// read reads demo://notes/{id}. An empty id is not found.
func (n *notes) read(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	id, ok := strings.CutPrefix(req.Params.URI, notesPrefix)
	if !ok || id == "" {
		return nil, mcp.ResourceNotFoundError(req.Params.URI)
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{Text: n.text(id)}}}, nil
}

// subscribable makes the server's resources subscribable and completable:
// the SDK keeps each session's subscriptions (resources/subscribe, or a
// subscriptions/listen stream from protocol 2026-07-28 on) and sends
// ResourceUpdated to the subscribed ones only.
func subscribable(so *mcp.ServerOptions) {
	so.SubscribeHandler = func(context.Context, *mcp.SubscribeRequest) error { return nil }
	so.UnsubscribeHandler = func(context.Context, *mcp.UnsubscribeRequest) error { return nil }
	so.CompletionHandler = complete
}

// updateSchema is the input schema of the update tool.
const updateSchema = `{"type":"object","properties":{"id":{"type":"string","description":"the id of the note demo://notes/{id} to change"}},"required":["id"],"additionalProperties":false}`

// updateArgs are the arguments of the update tool.
type updateArgs struct {
	ID string `json:"id"`
}

// addUpdateTool registers the update tool, which changes a note and sends
// notifications/resources/updated to the sessions subscribed to it.
func addUpdateTool(srv *mcp.Server, n *notes) {
	mcp.AddTool(srv, &mcp.Tool{
		Name:        "update",
		Description: "Changes the note demo://notes/{id} (its version goes up) and tells the clients subscribed to it.",
		InputSchema: json.RawMessage(updateSchema),
	}, func(ctx context.Context, _ *mcp.CallToolRequest, in updateArgs) (*mcp.CallToolResult, any, error) {
		if in.ID == "" {
			return nil, nil, fmt.Errorf("id must not be empty")
		}
		n.mu.Lock()
		if n.versions == nil {
			n.versions = map[string]int{}
		}
		n.versions[in.ID]++
		v := n.versions[in.ID]
		n.mu.Unlock()
		uri := notesPrefix + in.ID
		if err := srv.ResourceUpdated(ctx, &mcp.ResourceUpdatedNotificationParams{URI: uri}); err != nil {
			return nil, nil, fmt.Errorf("notifying the subscribers of %s: %w", uri, err)
		}
		return textResult(fmt.Sprintf("updated %s to version %d", uri, v)), nil, nil
	})
}
