// Package prompts is the slash-command registry of a runtime: every prompt
// of every ready server, named "{server}__{prompt}" like tools, ready for
// a host's command menu. Like the tool registry, a server's prompts are
// swapped as a whole, so a reader never sees half a list.
package prompts

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/openprogram/mcpvisor/tools"
)

// ErrUnknownPrompt: no prompt of that name is registered.
var ErrUnknownPrompt = errors.New("unknown prompt")

// Prompt is one server prompt.
type Prompt struct {
	// Name is the registry name, "{server}__{prompt}".
	Name string `json:"name"`
	// Server is the configured name of the server that provides it.
	Server string `json:"server"`
	// OriginalName is the prompt's name on its server.
	OriginalName string     `json:"original_name"`
	Title        string     `json:"title,omitempty"`
	Description  string     `json:"description"`
	Arguments    []Argument `json:"arguments"`
	// Icons are the prompt's icons as its server sent them, bounded and
	// scrubbed (untrusted content, see tools.Icon).
	Icons []tools.Icon `json:"icons,omitempty"`

	get Getter
}

// Argument is one argument a prompt takes.
type Argument struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	Required    bool   `json:"required"`
}

// Getter renders a prompt on its server's current session.
type Getter func(ctx context.Context, args map[string]string) (Rendered, error)

// Rendered is a prompt filled in by its server: the messages to put into
// the conversation.
type Rendered struct {
	Description string    `json:"description,omitempty"`
	Messages    []Message `json:"messages"`
}

// Message is one message of a rendered prompt.
type Message struct {
	Role    string        `json:"role"`
	Content tools.Content `json:"content"`
}

// New returns a prompt whose Get runs get.
func New(name, server, original, title, description string, args []Argument, get Getter) Prompt {
	return Prompt{Name: name, Server: server, OriginalName: original, Title: title, Description: description, Arguments: args, get: get}
}

// Get renders the prompt with args on its server. A required argument
// that is missing is refused here, with its name, before the server sees
// the request.
func (p Prompt) Get(ctx context.Context, args map[string]string) (Rendered, error) {
	for _, a := range p.Arguments {
		if a.Required && args[a.Name] == "" {
			return Rendered{}, &ArgumentError{Prompt: p.Name, Argument: a.Name}
		}
	}
	if p.get == nil {
		return Rendered{}, ErrUnknownPrompt
	}
	return p.get(ctx, args)
}

// ArgumentError: a required argument is missing.
type ArgumentError struct {
	Prompt, Argument string
}

func (e *ArgumentError) Error() string {
	return "prompt " + e.Prompt + ": argument " + e.Argument + " is required"
}

// Registry holds the prompts of every ready server. Safe for concurrent
// use; a nil Registry drops what it is given (actors built without one).
type Registry struct {
	mu       sync.RWMutex
	byServer map[string][]Prompt
	closed   bool
}

// Close empties the registry for good: nothing registers after a
// runtime's shutdown began.
func (r *Registry) Close() {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.closed = true
	r.byServer = nil
}

// SetServer replaces every prompt of server with list.
func (r *Registry) SetServer(server string, list []Prompt) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return
	}
	if r.byServer == nil {
		r.byServer = map[string][]Prompt{}
	}
	r.byServer[server] = slices.Clone(list)
}

// RemoveServer removes every prompt of server.
func (r *Registry) RemoveServer(server string) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.byServer, server)
}

// List returns every prompt, sorted by name.
func (r *Registry) List() []Prompt {
	r.mu.RLock()
	var out []Prompt
	for _, list := range r.byServer {
		out = append(out, list...)
	}
	r.mu.RUnlock()
	slices.SortFunc(out, func(a, b Prompt) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// Get returns the prompt named name. Two servers whose names run into
// each other ("a" with prompt "b__c", "a__b" with "c") give the same
// registry name; the server first by name keeps it, every time.
func (r *Registry) Get(name string) (Prompt, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	for _, server := range slices.Sorted(maps.Keys(r.byServer)) {
		for _, p := range r.byServer[server] {
			if p.Name == name {
				return p, true
			}
		}
	}
	return Prompt{}, false
}
