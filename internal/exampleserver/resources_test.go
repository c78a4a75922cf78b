package exampleserver

import (
	"context"
	"errors"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestListResources(t *testing.T) {
	cs := connectInMemory(t, Options{})
	if caps := cs.InitializeResult().Capabilities; caps.Resources == nil || !caps.Resources.ListChanged {
		t.Errorf("resources capability = %+v, want one with listChanged", caps.Resources)
	}
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	res, err := cs.ListResources(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Resources) != 1 || res.Resources[0].URI != "demo://readme" || res.Resources[0].MIMEType != "text/markdown" {
		t.Fatalf("resources = %+v, want only demo://readme (text/markdown)", res.Resources)
	}
	templates, err := cs.ListResourceTemplates(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(templates.ResourceTemplates) != 1 || templates.ResourceTemplates[0].URITemplate != "demo://notes/{id}" {
		t.Fatalf("templates = %+v, want only demo://notes/{id}", templates.ResourceTemplates)
	}
}

func TestReadResources(t *testing.T) {
	cs := connectInMemory(t, Options{})
	tests := []struct {
		uri, mimeType, text string
	}{
		{"demo://readme", "text/markdown", readmeText},
		{"demo://notes/7", "text/plain", "note 7"},
		{"demo://notes/shopping-list", "text/plain", "note shopping-list"},
	}
	for _, tt := range tests {
		got := readResource(t, cs, tt.uri)
		if got.URI != tt.uri || got.MIMEType != tt.mimeType || got.Text != tt.text {
			t.Errorf("read %s = %+v, want MIME type %q and text %q", tt.uri, got, tt.mimeType, tt.text)
		}
	}
}

func TestReadMissingResource(t *testing.T) {
	cs := connectInMemory(t, Options{})
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	for _, uri := range []string{"demo://nothing", "demo://notes/", "demo://extra/1"} {
		res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
		var werr *jsonrpc.Error
		if !errors.As(err, &werr) || werr.Code != mcp.CodeResourceNotFound {
			t.Errorf("read %s = %+v, %v; want a resource-not-found error", uri, res, err)
		}
	}
}

// readResource reads a resource that must have exactly one contents entry.
func readResource(t *testing.T, cs *mcp.ClientSession, uri string) *mcp.ResourceContents {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
	if err != nil {
		t.Fatalf("ReadResource(%s): %v", uri, err)
	}
	if len(res.Contents) != 1 {
		t.Fatalf("ReadResource(%s): %d contents, want 1", uri, len(res.Contents))
	}
	return res.Contents[0]
}
