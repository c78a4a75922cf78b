package exampleserver

import (
	"context"
	"encoding/json"
	"os"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The server's MCP App (the io.modelcontextprotocol/ui extension): a tool
// whose results the app shows, an app-only tool and the app's ui://
// resource. Like real servers it shows the two tools and the resource only
// to clients that advertise the extension; a read of the resource works
// for any client.
const (
	// AppsExtension is the extension's identifier in client capabilities.
	AppsExtension = "io.modelcontextprotocol/ui"
	// AppMIMEType is the MIME type of the app's resource.
	AppMIMEType = "text/html;profile=mcp-app"
	// AppToolName is the tool with the app: "app opened", shown in
	// [AppResourceURI].
	AppToolName = "app"
	// AppOnlyToolName is the tool only the app calls (visibility ["app"]):
	// "app refreshed".
	AppOnlyToolName = "app_refresh"
	// AppResourceURI is the app's HTML resource.
	AppResourceURI = "ui://demo/app"
	// AppHTML is the text of [AppResourceURI].
	AppHTML = "<!DOCTYPE html><html><body><p id=\"out\">example app</p></body></html>"
	// AppResourceMeta is the _meta of the resource's contents: its content
	// security policy, the permissions it asks for and its border.
	AppResourceMeta = `{"ui":{"csp":{"connectDomains":["https://api.example.com"],"resourceDomains":["https://cdn.example.com"]},"permissions":{"clipboardWrite":{}},"prefersBorder":true}}`
	// appLeakTemplate is a careless app resource ([Options.LeakTool]): a
	// read of ui://demo/leak/NAME fails with an error quoting the
	// environment variable NAME.
	appLeakTemplate = "ui://demo/leak/{name}"
	appLeakPrefix   = "ui://demo/leak/"
)

// addApp registers the app's tools and resource, and the middleware that
// hides them from clients that do not advertise the extension.
func addApp(srv *mcp.Server, leak bool) {
	srv.AddTool(&mcp.Tool{
		Name: AppToolName, Description: "Opens the example MCP App.",
		InputSchema: json.RawMessage(`{"type":"object"}`),
		Meta:        mcp.Meta{"ui": map[string]any{"resourceUri": AppResourceURI}},
	}, textTool("app opened"))
	srv.AddTool(&mcp.Tool{
		Name: AppOnlyToolName, Description: "Refreshes the example MCP App (called by the app only).",
		InputSchema: json.RawMessage(`{"type":"object"}`),
		Meta:        mcp.Meta{"ui": map[string]any{"resourceUri": AppResourceURI, "visibility": []string{"app"}}},
	}, textTool("app refreshed"))
	var meta mcp.Meta
	_ = json.Unmarshal([]byte(AppResourceMeta), &meta) // a constant that decodes
	srv.AddResource(&mcp.Resource{URI: AppResourceURI, Name: "app", Title: "Example MCP App", MIMEType: AppMIMEType},
		func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{Text: AppHTML, Meta: meta}}}, nil
		})
	if leak {
		srv.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: appLeakTemplate, Name: "leak", MIMEType: AppMIMEType}, readLeak)
	}
	srv.AddReceivingMiddleware(hideApp)
}

func textTool(text string) mcp.ToolHandler {
	return func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil
	}
}

// readLeak fails quoting the environment variable the URI names, as a
// careless server would.
func readLeak(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	name, _ := strings.CutPrefix(req.Params.URI, appLeakPrefix)
	return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "cannot render the app: " + name + "=" + os.Getenv(name)}
}

// hideApp drops the app's tools and resource from the lists of a client
// that does not advertise the extension (from initialize, or per request
// on 2026-07-28, which the SDK's ClientCapabilities reads).
func hideApp(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if err != nil {
			return res, err
		}
		switch r := res.(type) {
		case *mcp.ListToolsResult:
			if lr, ok := req.(*mcp.ListToolsRequest); ok && !rendersApps(lr.ClientCapabilities()) {
				r.Tools = slices.DeleteFunc(slices.Clone(r.Tools), func(t *mcp.Tool) bool {
					return t.Name == AppToolName || t.Name == AppOnlyToolName
				})
			}
		case *mcp.ListResourcesResult:
			if lr, ok := req.(*mcp.ListResourcesRequest); ok && !rendersApps(lr.ClientCapabilities()) {
				r.Resources = slices.DeleteFunc(slices.Clone(r.Resources), func(res *mcp.Resource) bool { return res.URI == AppResourceURI })
			}
		}
		return res, nil
	}
}

// rendersApps reports whether caps advertise the extension with the app's
// MIME type.
func rendersApps(caps *mcp.ClientCapabilities) bool {
	if caps == nil {
		return false
	}
	settings, ok := caps.Extensions[AppsExtension].(map[string]any)
	if !ok {
		return false
	}
	types, _ := settings["mimeTypes"].([]any)
	return slices.Contains(types, any(AppMIMEType))
}
