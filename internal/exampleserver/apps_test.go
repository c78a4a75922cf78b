package exampleserver

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// appsClient is a client that advertises the extension when renders.
func appsClient(renders bool) *mcp.Client {
	var caps *mcp.ClientCapabilities
	if renders {
		caps = &mcp.ClientCapabilities{}
		caps.AddExtension(AppsExtension, map[string]any{"mimeTypes": []string{AppMIMEType}})
	}
	return mcp.NewClient(&mcp.Implementation{Name: "apps-test", Version: "0"}, &mcp.ClientOptions{Capabilities: caps})
}

// The app's tools and resource are listed only to a client that
// advertises the extension, on the session's capabilities (2025-11-25)
// and on the per-request ones (2026-07-28); the resource reads back with
// its _meta for any client.
func TestAppShownOnlyToAppClients(t *testing.T) {
	for _, protocol := range []string{"2025-11-25", ""} {
		for _, renders := range []bool{true, false} {
			cs := connectClient(t, NewServer(Options{Protocol: protocol}), appsClient(renders))
			ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
			defer cancel()
			list, err := cs.ListTools(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, tool := range list.Tools {
				names = append(names, tool.Name)
			}
			shown := slices.Contains(names, AppToolName) && slices.Contains(names, AppOnlyToolName)
			hidden := !slices.Contains(names, AppToolName) && !slices.Contains(names, AppOnlyToolName)
			resources, err := cs.ListResources(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			listed := slices.ContainsFunc(resources.Resources, func(r *mcp.Resource) bool { return r.URI == AppResourceURI })
			if renders != shown || renders == hidden || renders != listed {
				t.Errorf("protocol %q (%s), renders %v: tools %v, resource listed %v", protocol, cs.InitializeResult().ProtocolVersion, renders, names, listed)
			}
			read, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: AppResourceURI})
			if err != nil || len(read.Contents) != 1 {
				t.Fatalf("reading %s: %+v, %v", AppResourceURI, read, err)
			}
			meta, _ := json.Marshal(read.Contents[0].Meta)
			if c := read.Contents[0]; c.MIMEType != AppMIMEType || c.Text != AppHTML || string(meta) != AppResourceMeta {
				t.Errorf("contents = %+v, meta %s", c, meta)
			}
		}
	}
}

// Every tool that names a UI resource (_meta.ui.resourceUri) names one
// the server has: a host that renders it reads it back.
func TestToolUIResourcesExist(t *testing.T) {
	all := Options{ChangeTool: true, UpdateTool: true, LeakTool: true, FaultTools: true, ResultTools: true, IconFlood: true, SizedTools: true}
	cs := connectClient(t, NewServer(all), appsClient(true))
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	list, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	uis := 0
	for _, tool := range list.Tools {
		ui, _ := tool.Meta["ui"].(map[string]any)
		uri, _ := ui["resourceUri"].(string)
		if uri == "" {
			continue
		}
		uis++
		if read, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri}); err != nil || len(read.Contents) == 0 {
			t.Errorf("tool %s: its UI resource %s reads as %+v, %v", tool.Name, uri, read, err)
		}
	}
	if uis < 3 {
		t.Errorf("%d tools with a UI resource, want app, app_refresh and described", uis)
	}
}
