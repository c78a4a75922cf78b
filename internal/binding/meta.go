package binding

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/openprogram/mcpvisor/adapter"
	"github.com/openprogram/mcpvisor/internal/mcpconn"
	"github.com/openprogram/mcpvisor/prompts"
	"github.com/openprogram/mcpvisor/tools"
)

// Resources and prompts (S9) reach the model as four tools per server, on
// the persistent session, only where the server declares the capability:
// {server}__list_resources, __read_resource, __list_prompts, __get_prompt.
// A real tool of the server with one of these names keeps its name.

// metaTool is one resource or prompt tool. run returns, besides the
// result, the URI each of its blocks came from when that is a resource
// (nil otherwise), for the notices of the output caps.
type metaTool struct {
	name, description, schema string
	run                       func(ctx context.Context, conn *mcpconn.Conn, args map[string]any) (tools.Result, []string, error)
}

var resourceTools = []metaTool{
	{
		name:        "list_resources",
		description: "List the resources (files, documents, data) this server offers, and its resource templates. Pass the returned next_cursor as cursor to get the next page.",
		schema:      `{"type":"object","properties":{"cursor":{"type":"string","description":"next_cursor of the previous page"}}}`,
		run:         unsourced(listResources),
	},
	{
		name:        "read_resource",
		description: "Read a resource of this server by its URI (from list_resources, a resource template, or a resource link).",
		schema:      `{"type":"object","properties":{"uri":{"type":"string","description":"the resource's URI"}},"required":["uri"]}`,
		run:         readResource,
	},
}

var promptTools = []metaTool{
	{
		name:        "list_prompts",
		description: "List the prompts (prepared instructions) this server offers, with their arguments.",
		schema:      `{"type":"object","properties":{}}`,
		run:         unsourced(listPrompts),
	},
	{
		name:        "get_prompt",
		description: "Render a prompt of this server with its arguments; returns the prompt's messages.",
		schema:      `{"type":"object","properties":{"name":{"type":"string","description":"the prompt's name"},"arguments":{"type":"object","additionalProperties":{"type":"string"},"description":"the prompt's arguments, all strings"}},"required":["name"]}`,
		run:         unsourced(getPrompt),
	},
}

// unsourced is the run of a meta tool whose blocks come from no resource.
func unsourced(run func(context.Context, *mcpconn.Conn, map[string]any) (tools.Result, error)) func(context.Context, *mcpconn.Conn, map[string]any) (tools.Result, []string, error) {
	return func(ctx context.Context, conn *mcpconn.Conn, args map[string]any) (tools.Result, []string, error) {
		res, err := run(ctx, conn, args)
		return res, nil, err
	}
}

// metaTools returns the resource and prompt tools conn's capabilities call
// for, except names the server's own tools (list, the listing before the
// filter) already use. A meta tool the filter leaves out counts in
// Filtered only when it is the runtime's to add: under a name the server
// uses, the server's own tool was counted (or kept) already.
func (b *Binding) metaTools(conn *mcpconn.Conn, list []*mcp.Tool, p *Policy) []tools.Tool {
	caps := conn.Capabilities()
	var want []metaTool
	if caps.Resources != nil {
		want = append(want, resourceTools...)
	}
	if caps.Prompts != nil {
		want = append(want, promptTools...)
	}
	taken := map[string]bool{}
	for _, t := range list {
		if t != nil {
			taken[adapter.ToolName(b.server, t.Name)] = true
		}
	}
	var out []tools.Tool
	for _, m := range want {
		name := adapter.ToolName(b.server, m.name)
		if taken[name] {
			b.logger.Warn("the server has a tool of its own by this name; no resource/prompt tool under it", "name", name)
			continue
		}
		if !p.Filter.Allows(m.name) {
			b.filtered++
			continue
		}
		out = append(out, tools.NewTool(name, b.server, m.name, m.description, json.RawMessage(m.schema), b.metaExecutor(m, p)))
	}
	return out
}

// metaExecutor runs m on whatever connection is current, like toolCall,
// under the policy current then (built: the one it was registered under).
func (b *Binding) metaExecutor(m metaTool, built *Policy) tools.ExecutorFunc {
	return func(ctx context.Context, args any) (tools.Result, error) {
		p := b.currentPolicy()
		if !allowed(p, built, m.name) {
			return tools.Result{}, errFiltered(b.server, m.name)
		}
		conn := b.current.Load()
		if conn == nil {
			return tools.Result{}, fmt.Errorf("calling %q on %q: %w", m.name, b.server, tools.ErrNotReady)
		}
		var in map[string]any
		if raw, err := json.Marshal(args); err == nil {
			_ = json.Unmarshal(raw, &in)
		}
		res, uris, err := m.run(ctx, conn, in)
		if err == nil {
			capResultFrom(&res, p.MaxText, p.MaxMedia, uris)
		}
		return res, err
	}
}

func textResult(v any) (tools.Result, error) {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return tools.Result{}, err
	}
	return tools.Result{Content: []tools.Content{{Type: tools.ContentText, Text: string(data)}}}, nil
}

func errorResult(msg string) (tools.Result, error) {
	return tools.Result{IsError: true, Content: []tools.Content{{Type: tools.ContentText, Text: msg}}}, nil
}

func stringArg(args map[string]any, name string) string {
	s, _ := args[name].(string)
	return s
}

func listResources(ctx context.Context, conn *mcpconn.Conn, args map[string]any) (tools.Result, error) {
	res, templates, err := conn.ListResources(ctx, stringArg(args, "cursor"))
	if err != nil {
		return tools.Result{}, err
	}
	type resource struct {
		URI string `json:"uri"`
		listedLabels
		Size int64 `json:"size,omitempty"`
		listedMeta
	}
	type template struct {
		URITemplate string `json:"uri_template"`
		listedLabels
		listedMeta
	}
	out := struct {
		Resources  []resource `json:"resources"`
		Templates  []template `json:"resource_templates,omitempty"`
		NextCursor string     `json:"next_cursor,omitempty"`
	}{Resources: []resource{}, NextCursor: res.NextCursor}
	for _, r := range res.Resources {
		if r != nil {
			out.Resources = append(out.Resources, resource{r.URI, labelsOf(conn, r.Name, r.Title, r.Description, r.MIMEType), r.Size,
				listedMeta{listedIcons(conn, r.Icons), annotationsOf(r.Annotations)}})
		}
	}
	for _, t := range templates {
		if t != nil {
			out.Templates = append(out.Templates, template{t.URITemplate, labelsOf(conn, t.Name, t.Title, t.Description, t.MIMEType),
				listedMeta{listedIcons(conn, t.Icons), annotationsOf(t.Annotations)}})
		}
	}
	return textResult(out)
}

// readResource reads the resource args names; the URIs are those of the
// contents, block by block, when there are several.
func readResource(ctx context.Context, conn *mcpconn.Conn, args map[string]any) (tools.Result, []string, error) {
	uri := stringArg(args, "uri")
	if uri == "" {
		res, err := errorResult("read_resource needs a uri")
		return res, nil, err
	}
	res, err := conn.ReadResource(ctx, uri)
	if err != nil {
		return tools.Result{}, nil, err
	}
	var out tools.Result
	var uris []string
	for _, c := range res.Contents {
		if c != nil {
			uris = append(uris, c.URI)
		}
		switch {
		case c == nil:
		case c.Blob == nil:
			// A whole log file is no more welcome in a model's context
			// than a tool's: the server's output caps cut it (capResult).
			out.Content = append(out.Content, tools.Content{Type: tools.ContentText, Text: c.Text})
		case mediaOf(c.MIMEType) != "":
			out.Content = append(out.Content, tools.Content{Type: mediaOf(c.MIMEType), MIMEType: c.MIMEType, Data: c.Blob})
		default:
			// Binary content the model cannot read as text.
			out.Content = append(out.Content, tools.Content{Type: tools.ContentText,
				Text: fmt.Sprintf("[resource: %s (%s, %d bytes of binary data)]", c.URI, orUnknown(c.MIMEType), len(c.Blob))})
		}
	}
	if len(uris) < 2 {
		uris = nil // the one the model asked for: the notice need not name it
	}
	return out, uris, nil
}

// mediaOf is the content type (image, audio) a blob of MIME type mime
// goes to the model as, "" for other binary data.
func mediaOf(mime string) string {
	switch {
	case strings.HasPrefix(mime, "image/"):
		return tools.ContentImage
	case strings.HasPrefix(mime, "audio/"):
		return tools.ContentAudio
	}
	return ""
}

func orUnknown(mime string) string {
	if mime == "" {
		return "unknown type"
	}
	return mime
}

func listPrompts(ctx context.Context, conn *mcpconn.Conn, _ map[string]any) (tools.Result, error) {
	list, err := conn.ListPrompts(ctx)
	if err != nil {
		return tools.Result{}, err
	}
	type prompt struct {
		Name        string             `json:"name"`
		Title       string             `json:"title,omitempty"`
		Description string             `json:"description,omitempty"`
		Icons       []tools.Icon       `json:"icons,omitempty"`
		Arguments   []prompts.Argument `json:"arguments,omitempty"`
	}
	out := struct {
		Prompts []prompt `json:"prompts"`
	}{Prompts: []prompt{}}
	for _, p := range list {
		if p != nil {
			out.Prompts = append(out.Prompts, prompt{p.Name, conn.Scrub(p.Title), p.Description, listedIcons(conn, p.Icons), promptArguments(p)})
		}
	}
	return textResult(out)
}

func getPrompt(ctx context.Context, conn *mcpconn.Conn, args map[string]any) (tools.Result, error) {
	name := stringArg(args, "name")
	if name == "" {
		return errorResult("get_prompt needs a name")
	}
	in := map[string]string{}
	if m, ok := args["arguments"].(map[string]any); ok {
		for k, v := range m {
			if s, ok := v.(string); ok {
				in[k] = s
			} else {
				in[k] = fmt.Sprint(v)
			}
		}
	}
	r, err := renderPrompt(ctx, conn, name, in)
	if err != nil {
		return tools.Result{}, err
	}
	var out tools.Result
	for _, m := range r.Messages {
		c := m.Content
		if c.Type == tools.ContentText {
			c.Text = m.Role + ": " + c.Text
		}
		out.Content = append(out.Content, c)
	}
	return out, nil
}

// renderPrompt gets a prompt and converts its messages (S6 rules).
func renderPrompt(ctx context.Context, conn *mcpconn.Conn, name string, args map[string]string) (prompts.Rendered, error) {
	res, err := conn.GetPrompt(ctx, name, args)
	if err != nil {
		return prompts.Rendered{}, err
	}
	out := prompts.Rendered{Description: res.Description, Messages: []prompts.Message{}}
	for _, m := range res.Messages {
		if m == nil {
			continue
		}
		out.Messages = append(out.Messages, prompts.Message{Role: string(m.Role), Content: adapter.ConvertContent(m.Content)})
	}
	return out, nil
}

func promptArguments(p *mcp.Prompt) []prompts.Argument {
	var out []prompts.Argument
	for _, a := range p.Arguments {
		if a != nil {
			out = append(out, prompts.Argument{Name: a.Name, Description: a.Description, Required: a.Required})
		}
	}
	return out
}
