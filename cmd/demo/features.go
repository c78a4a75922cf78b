package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/openprogram/mcpvisor/runtime"
	"github.com/openprogram/mcpvisor/tools"
)

// showPrompts lists the runtime's prompts (a host's slash commands) and
// renders the example server's greet prompt.
func showPrompts(ctx context.Context, out io.Writer, rt *runtime.Runtime, server string) error {
	fmt.Fprintln(out, "\nprompts:")
	list := rt.Prompts()
	width := 0
	for _, p := range list {
		width = max(width, len(p.Name))
	}
	for _, p := range list {
		var args []string
		for _, a := range p.Arguments {
			if a.Required {
				args = append(args, a.Name+" (required)")
			} else {
				args = append(args, a.Name)
			}
		}
		fmt.Fprintf(out, "  %-*s  %s  args: %s\n", width, p.Name, p.Description, strings.Join(args, ", "))
	}
	name, args := server+"__greet", map[string]string{"name": "Ada"}
	r, err := rt.GetPrompt(ctx, name, args)
	if err != nil {
		return fmt.Errorf("rendering %s: %w", name, err)
	}
	fmt.Fprintf(out, "  GetPrompt(%s, %s) -> %d message(s)\n", name, compactJSON(args), len(r.Messages))
	for _, m := range r.Messages {
		fmt.Fprintf(out, "    %s: %s\n", m.Role, describe(tools.Result{Content: []tools.Content{m.Content}}))
	}
	return nil
}

// showResources lists the example server's resources through its
// list_resources tool and reads two of them through read_resource: the
// static readme and one from the notes template.
func showResources(ctx context.Context, out io.Writer, rt *runtime.Runtime, server string) error {
	fmt.Fprintln(out, "\nresources:")
	res, err := rt.CallTool(ctx, server+"__list_resources", map[string]any{})
	if err != nil {
		return err
	}
	if res.IsError || len(res.Content) == 0 {
		return fmt.Errorf("%s__list_resources: %s", server, describe(res))
	}
	var listed struct {
		Resources []struct {
			URI      string `json:"uri"`
			MIMEType string `json:"mime_type"`
		} `json:"resources"`
		Templates []struct {
			URITemplate string `json:"uri_template"`
		} `json:"resource_templates"`
	}
	if err := json.Unmarshal([]byte(res.Content[0].Text), &listed); err != nil {
		return fmt.Errorf("%s__list_resources returned %q: %w", server, res.Content[0].Text, err)
	}
	var uris []string
	for _, r := range listed.Resources {
		uris = append(uris, fmt.Sprintf("%s (%s)", r.URI, r.MIMEType))
	}
	for _, t := range listed.Templates {
		uris = append(uris, "template "+t.URITemplate)
	}
	fmt.Fprintf(out, "  %s__list_resources({}) -> %s\n", server, strings.Join(uris, ", "))

	for _, uri := range []string{"demo://readme", "demo://notes/7"} {
		args := map[string]any{"uri": uri}
		res, err := rt.CallTool(ctx, server+"__read_resource", args)
		if err != nil {
			return err
		}
		if res.IsError || len(res.Content) == 0 {
			return fmt.Errorf("reading %s: %s", uri, describe(res))
		}
		text := res.Content[0].Text
		first, _, more := strings.Cut(text, "\n")
		if more {
			fmt.Fprintf(out, "  %s__read_resource(%s) -> %d bytes, first line %q\n", server, compactJSON(args), len(text), first)
		} else {
			fmt.Fprintf(out, "  %s__read_resource(%s) -> %s\n", server, compactJSON(args), describe(res))
		}
	}
	return nil
}

// showListChanged asks the example server to add a tool; the server sends
// notifications/tools/list_changed, the runtime lists its tools again, and
// the new tool appears in the registry, ready to call.
func showListChanged(ctx context.Context, out io.Writer, rt *runtime.Runtime, server string) error {
	fmt.Fprintln(out, "\nlist changed:")
	extra := server + "__extra_1"
	sub := rt.Registry().Subscribe() // before the change, so no signal is missed
	defer sub.Close()
	before := len(rt.Tools())
	args := map[string]any{"list": "tools"}
	began := time.Now()
	res, err := rt.CallTool(ctx, server+"__change", args)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "  %s__change(%s) -> %s\n", server, compactJSON(args), describe(res))
	wait, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	for {
		if t, ok := rt.Registry().Get(extra); ok {
			fmt.Fprintf(out, "  tools/list_changed: %s registered %s after the call (%d tools, was %d): %s\n",
				extra, time.Since(began).Round(time.Millisecond), len(rt.Tools()), before, t.Description)
			break
		}
		select {
		case <-wait.Done():
			return fmt.Errorf("waiting for %s to be registered: %w", extra, wait.Err())
		case <-sub.C:
		}
	}
	callArgs := map[string]any{"text": "a tool that did not exist at startup"}
	res, err = rt.CallTool(ctx, extra, callArgs)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "  %s(%s) -> %s\n", extra, compactJSON(callArgs), describe(res))
	return nil
}
