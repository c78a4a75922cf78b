package runtime

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/openprogram/mcpvisor/config"
	"github.com/openprogram/mcpvisor/internal/mcpconn"
)

// syncedMirror is a mirror (no runtime, no run) serving the listings
// given, as syncResources does.
func syncedMirror(t *testing.T, listings ...serverResources) *mirror {
	t.Helper()
	m := newMirror(nil, MCPServerOptions{Logger: slog.New(slog.DiscardHandler)})
	m.srv = mcp.NewServer(&mcp.Implementation{Name: "gw", Version: "1"}, nil)
	for _, l := range listings {
		m.resources[l.server] = l
	}
	m.syncResources()
	return m
}

// A prefixed URI is the server's only when that server serves the URI
// after the prefix (a listed resource, or a URI of a template of it,
// prefixed or not); an unprefixed one only when it is served unprefixed;
// a server's own "mcpvisor:" URI is served prefixed, never as it is.
func TestGatewayResourceOf(t *testing.T) {
	m := syncedMirror(t,
		serverResources{server: "ex",
			resources: []*mcp.Resource{{URI: "demo://readme", Name: "readme"}, {URI: "mcpvisor:other/x", Name: "tricky"}, {URI: "demo://only-ex", Name: "only"}},
			templates: []*mcp.ResourceTemplate{{URITemplate: "demo://notes/{id}", Name: "notes"}}},
		serverResources{server: "b",
			resources: []*mcp.Resource{{URI: "demo://readme", Name: "readme"}},
			templates: []*mcp.ResourceTemplate{{URITemplate: "demo://notes/{id}", Name: "notes"}}})
	for _, c := range []struct {
		uri, server, original string
	}{
		{GatewayURI("ex", "demo://readme"), "ex", "demo://readme"},
		{GatewayURI("b", "demo://readme"), "b", "demo://readme"},
		{GatewayURI("ex", "mcpvisor:other/x"), "ex", "mcpvisor:other/x"},
		{GatewayURI("b", "demo://notes/7"), "b", "demo://notes/7"},
		{GatewayURI("ex", "demo://notes/7"), "ex", "demo://notes/7"},
		{"demo://only-ex", "ex", "demo://only-ex"},
		// Served unprefixed, asked prefixed (as when a shared URI came
		// to have one server left).
		{GatewayURI("ex", "demo://only-ex"), "ex", "demo://only-ex"},
	} {
		if server, original, ok := m.resourceOf(c.uri); !ok || server != c.server || original != c.original {
			t.Errorf("resourceOf(%q) = %q, %q, %v; want %q, %q", c.uri, server, original, ok, c.server, c.original)
		}
	}
	for _, uri := range []string{GatewayURI("ex", "nowhere://x"), GatewayURI("nosuch", "demo://readme"), "mcpvisor:other/x",
		"demo://readme", GatewayURI("ex", "demo://other/7"), GatewayURI("b", "demo://only-ex"), "demo://notes/7"} {
		if server, original, ok := m.resourceOf(uri); ok {
			t.Errorf("resourceOf(%q) = %q, %q; want it not served", uri, server, original)
		}
	}
	if _, ok := m.exposed["r"+"mcpvisor:other/x"]; ok {
		t.Error("ex's own mcpvisor: URI is served as it is")
	}
}

// A listing keeps each description to 8 KiB and the whole to 4 MiB of
// JSON: a server with 1000 resources of 20 KiB descriptions gets the
// first of them served, cut, and the listing says it stopped.
func TestGatewayListingBounded(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "big"}, &mcp.ServerOptions{PageSize: 100})
	long := strings.Repeat("é", 10<<10) // 20 KiB, two bytes a rune
	for i := range 1000 {
		uri := fmt.Sprintf("big://r/%d", i)
		srv.AddResource(&mcp.Resource{URI: uri, Name: uri, Description: long}, func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return nil, mcp.ResourceNotFoundError(uri)
		})
	}
	conn, err := mcpconn.Dial(t.Context(), mcpconn.Options{
		Server:    config.Server{Name: "big", Type: config.TypeLocal, Command: []string{"in-memory"}, Enabled: true},
		Transport: connected(srv), Grace: time.Second, Client: &mcp.Implementation{Name: "test"},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(conn.Close)
	l := serverResources{server: "big"}
	if err := listAll(t.Context(), conn, &l); err == nil || !strings.Contains(err.Error(), "over 4194304 bytes") {
		t.Errorf("listAll = %v, want it to say the listing was cut", err)
	}
	if n := len(l.resources); n == 0 || n >= 1000 {
		t.Fatalf("%d resources served, want some, not all", n)
	}
	total := 0
	for _, r := range l.resources {
		if len(r.Description) > maxResourceDescriptionBytes || !utf8.ValidString(r.Description) {
			t.Fatalf("a description of %d bytes (valid UTF-8: %v) served", len(r.Description), utf8.ValidString(r.Description))
		}
		data, _ := json.Marshal(r)
		total += len(data)
	}
	if total > maxListingBytes {
		t.Errorf("%d bytes of listing served, want at most %d", total, maxListingBytes)
	}
}
