package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/openprogram/mcpvisor/internal/binding"
	"github.com/openprogram/mcpvisor/internal/mcpconn"
	"github.com/openprogram/mcpvisor/status"
)

// Resources through the gateway. Unlike tools and prompts, the runtime
// registers no resources: the gateway lists each server's resources and
// templates when the server becomes ready, and serves those.
//
// URIs stay as the servers wrote them where only one server offers them.
// A URI (or URI template) that two or more servers offer is served, for
// each of them, as
//
//	mcpvisor:{server}/{uri}
//
// which a client reads like any other; the gateway strips the prefix and
// reads uri on server (server names hold no "/", so the first "/" ends
// it). The contents of such a read carry the prefixed URI too. A server's
// own URI that begins with "mcpvisor:" is always served prefixed, so no
// URI the gateway serves unprefixed looks like a prefixed one.

// GatewayURIScheme begins the URI of a resource that more than one server
// offers under the same URI: "mcpvisor:{server}/{uri}".
const GatewayURIScheme = "mcpvisor:"

// GatewayURI is the URI the gateway serves uri of server under when
// another server has a resource of the same URI.
func GatewayURI(server, uri string) string { return GatewayURIScheme + server + "/" + uri }

// SplitGatewayURI undoes GatewayURI: the server and the server's own URI.
func SplitGatewayURI(uri string) (server, original string, ok bool) {
	rest, ok := strings.CutPrefix(uri, GatewayURIScheme)
	if !ok {
		return "", "", false
	}
	server, original, ok = strings.Cut(rest, "/")
	return server, original, ok && server != ""
}

// Bounds of one server's resource listing: at most this many pages and
// items are served, at most maxListingBytes of them (as JSON, after each
// description is cut to maxResourceDescriptionBytes, as the tool search
// index cuts a tool's), and the listing gives up after listingTimeout
// (the server's own timeout_seconds bounds each page too).
const (
	maxResourcePages            = 50
	maxResources                = 5000
	maxListingBytes             = 4 << 20
	maxResourceDescriptionBytes = 8 << 10
	listingTimeout              = 60 * time.Second
)

// serverResources is one listing of a server, scrubbed.
type serverResources struct {
	server    string
	gen       uint64
	resources []*mcp.Resource
	templates []*mcp.ResourceTemplate
}

// relistReady lists the resources of every ready server anew.
func (m *mirror) relistReady() {
	for _, s := range m.rt.Status().Servers {
		if s.State == status.Ready {
			m.relist(s.Name)
		}
	}
}

// relist starts listing server's resources; the listing reports to run,
// which takes it unless a forget came since. One listing per server runs
// at a time: a relist meanwhile makes one more after it (listed), so a
// burst of resources/list_changed costs two listings.
func (m *mirror) relist(server string) {
	if m.inflight[server] {
		m.again[server] = true
		return
	}
	m.gen[server]++
	gen := m.gen[server]
	conn, err := m.rt.connOf(server, "listing resources")
	if err != nil || conn.Capabilities().Resources == nil {
		m.forgetGen(server)
		return
	}
	m.inflight[server] = true
	m.listings.Go(func() {
		l := serverResources{server: server, gen: gen}
		ctx, cancel := context.WithTimeout(context.Background(), listingTimeout)
		defer cancel()
		go func() {
			select {
			case <-m.done:
				cancel()
			case <-ctx.Done():
			}
		}()
		if err := listAll(ctx, conn, &l); err != nil {
			m.logger.Warn("listing resources for the gateway failed; serving what was listed", "server", server, "error", err)
		}
		select {
		case m.reports <- l:
		case <-m.done:
		}
	})
}

// listed takes a listing's report.
func (m *mirror) listed(l serverResources) {
	m.inflight[l.server] = false
	if l.gen == m.gen[l.server] {
		m.resources[l.server] = l
		m.syncResources()
	}
	if m.again[l.server] {
		delete(m.again, l.server)
		m.relist(l.server)
	}
}

// listAll reads every page of conn's resources into l, within the bounds.
func listAll(ctx context.Context, conn *mcpconn.Conn, l *serverResources) error {
	cursor := ""
	size := 0 // JSON bytes taken
	fits := func(item any) bool {
		data, _ := json.Marshal(item)
		size += len(data)
		return size <= maxListingBytes
	}
	for page := 0; page < maxResourcePages && len(l.resources) < maxResources; page++ {
		res, templates, err := conn.ListResources(ctx, cursor)
		if err != nil {
			return err
		}
		for _, t := range templates {
			if t != nil && len(l.templates) < maxResources {
				c := *t
				c.URITemplate, c.Name, c.Title, c.Description, c.MIMEType = conn.Scrub(c.URITemplate), conn.Scrub(c.Name), conn.Scrub(c.Title), conn.Scrub(c.Description), conn.Scrub(c.MIMEType)
				c.Icons, c.Meta = scrubIcons(conn, c.Icons), binding.ScrubMeta(conn, c.Meta)
				c.Description = truncateUTF8(c.Description, maxResourceDescriptionBytes)
				if !fits(&c) {
					return fmt.Errorf("the listing is over %d bytes: the rest is left out", maxListingBytes)
				}
				l.templates = append(l.templates, &c)
			}
		}
		for _, r := range res.Resources {
			if r != nil && len(l.resources) < maxResources {
				c := *r
				c.URI, c.Name, c.Title, c.Description, c.MIMEType = conn.Scrub(c.URI), conn.Scrub(c.Name), conn.Scrub(c.Title), conn.Scrub(c.Description), conn.Scrub(c.MIMEType)
				c.Icons, c.Meta = scrubIcons(conn, c.Icons), binding.ScrubMeta(conn, c.Meta)
				c.Description = truncateUTF8(c.Description, maxResourceDescriptionBytes)
				if !fits(&c) {
					return fmt.Errorf("the listing is over %d bytes: the rest is left out", maxListingBytes)
				}
				l.resources = append(l.resources, &c)
			}
		}
		if cursor = res.NextCursor; cursor == "" {
			return nil
		}
	}
	return nil
}

// scrubIcons keeps the first 8 icons whose src is at most 4 KiB, scrubbed
// (the bounds the runtime keeps a tool's icons to).
func scrubIcons(conn *mcpconn.Conn, in []mcp.Icon) []mcp.Icon {
	var out []mcp.Icon
	for _, ic := range in {
		if len(out) == 8 {
			break
		}
		if len(ic.Source) <= 4096 {
			out = append(out, mcp.Icon{Source: conn.Scrub(ic.Source), MIMEType: conn.Scrub(ic.MIMEType), Theme: ic.Theme})
		}
	}
	return out
}

// forget drops server's resources (it is no longer ready or is gone).
func (m *mirror) forget(server string) {
	m.forgetGen(server)
	m.syncResources()
}

func (m *mirror) forgetGen(server string) {
	m.gen[server]++ // a listing still running is stale
	delete(m.resources, server)
}

// syncResources serves the resources and templates of the listings held,
// prefixed where their URIs collide (see GatewayURI). Who owns what is
// published before the SDK lists it, so a client that lists and then
// completes or subscribes at once finds it (a refused item is dropped
// from it after).
func (m *mirror) syncResources() {
	uses := map[string]int{}
	for server, l := range m.resources {
		if !m.serverVisible(server) {
			continue // what a client does not see cannot collide
		}
		seen := map[string]bool{}
		for _, r := range l.resources {
			if !seen["r"+r.URI] {
				seen["r"+r.URI] = true
				uses["r"+r.URI]++
			}
		}
		for _, t := range l.templates {
			if !seen["t"+t.URITemplate] {
				seen["t"+t.URITemplate] = true
				uses["t"+t.URITemplate]++
			}
		}
	}
	var plan []servedItem
	planned := map[string]bool{}
	add := func(it servedItem) {
		if !planned[it.key] { // the same URI twice in one listing: the first is served
			planned[it.key] = true
			plan = append(plan, it)
		}
	}
	for _, server := range sortedKeys(m.resources) {
		l := m.resources[server]
		if !m.serverVisible(server) {
			continue
		}
		for _, r := range l.resources {
			c := *r
			prefixed := uses["r"+r.URI] > 1 || strings.HasPrefix(r.URI, GatewayURIScheme)
			if prefixed {
				c.URI = GatewayURI(server, r.URI)
			}
			add(servedItem{key: "r" + c.URI, item: &c, owner: servedOwner{server, r.URI},
				add: func() { m.srv.AddResource(&c, m.readResource(server, r.URI, prefixed)) }})
		}
		for _, t := range l.templates {
			c := *t
			prefixed := uses["t"+t.URITemplate] > 1 || strings.HasPrefix(t.URITemplate, GatewayURIScheme)
			if prefixed {
				c.URITemplate = GatewayURI(server, t.URITemplate)
			}
			add(servedItem{key: "t" + c.URITemplate, item: &c, owner: servedOwner{server, t.URITemplate},
				add: func() { m.srv.AddResourceTemplate(&c, m.readResource(server, "", prefixed)) }})
		}
	}
	m.publishOwners(plan, planned)
	want := map[string]bool{}
	for _, it := range plan {
		if m.serve(it) {
			want[it.key] = true
		}
	}
	if len(want) < len(plan) {
		m.publishOwners(plan, want)
	}
	var gone, goneTemplates []string
	for key := range m.exposed {
		if want[key] {
			continue
		}
		delete(m.exposed, key)
		if uri, ok := strings.CutPrefix(key, "r"); ok {
			gone = append(gone, uri)
		} else {
			goneTemplates = append(goneTemplates, key[1:])
		}
	}
	if len(gone) > 0 {
		m.srv.RemoveResources(gone...)
	}
	if len(goneTemplates) > 0 {
		m.srv.RemoveResourceTemplates(goneTemplates...)
	}
}

// servedItem is a resource ("r"+URI) or template ("t"+URI template) to
// serve: what to list, its owner, and how to add it to the server.
type servedItem struct {
	key   string
	item  any
	owner servedOwner
	add   func()
}

// publishOwners publishes the owners of the items of plan in served, for
// completions and subscriptions.
func (m *mirror) publishOwners(plan []servedItem, served map[string]bool) {
	resources, templates := map[string]servedOwner{}, map[string]servedOwner{}
	for _, it := range plan {
		if !served[it.key] {
			continue
		}
		if uri, ok := strings.CutPrefix(it.key, "r"); ok {
			resources[uri] = it.owner
		} else {
			templates[it.key[1:]] = it.owner
		}
	}
	m.servedResources.Store(&resources)
	m.templates.Store(&templates)
}

// serve adds an item unless the same is served already, reporting whether
// it is served; one the SDK refuses (a template it cannot parse) is
// logged and skipped.
func (m *mirror) serve(it servedItem) bool {
	sum := digestOf(it.item)
	if m.exposed[it.key] == sum {
		return true
	}
	if err := catch(it.add); err != nil {
		m.logger.Warn("not serving a resource the MCP server refused", "uri", it.key[1:], "error", err)
		return false
	}
	m.exposed[it.key] = sum
	return true
}

// readResource is the handler of a resource (original set) or template
// (original empty: the URI read is the server's) of server.
func (m *mirror) readResource(server, original string, prefixed bool) mcp.ResourceHandler {
	return func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		uri := original
		if uri == "" {
			uri = req.Params.URI
			if prefixed {
				_, uri, _ = SplitGatewayURI(uri)
			}
		}
		res, err := m.rt.ReadResource(ctx, server, uri)
		var rpc *jsonrpc.Error
		switch {
		case errors.As(err, &rpc) && rpc.Code == mcp.CodeResourceNotFound:
			return nil, mcp.ResourceNotFoundError(req.Params.URI)
		case err != nil:
			return nil, err
		}
		out := &mcp.ReadResourceResult{Contents: make([]*mcp.ResourceContents, 0, len(res.Contents))}
		for _, c := range res.Contents {
			item := &mcp.ResourceContents{URI: c.URI, MIMEType: c.MIMEType, Text: c.Text, Blob: c.Blob}
			if prefixed {
				item.URI = GatewayURI(server, c.URI)
			}
			if len(c.Meta) > 0 {
				_ = json.Unmarshal(c.Meta, &item.Meta)
			}
			out.Contents = append(out.Contents, item)
		}
		return out, nil
	}
}
