package runtime

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/openprogram/mcpvisor/config"
	"github.com/openprogram/mcpvisor/events"
	"github.com/openprogram/mcpvisor/internal/testutil"
	"github.com/openprogram/mcpvisor/prompts"
)

// TestCompletionsNarrow: on both protocols, the example server's greet
// arguments and note ids complete, narrowing as the value grows and using
// the context; a bad reference or an unknown prompt is refused before
// anything is sent.
func TestCompletionsNarrow(t *testing.T) {
	for _, proto := range protocols {
		t.Run(proto, func(t *testing.T) {
			rt := start(t, Options{}, exampleServer("ex", "-protocol", proto))
			rt.waitReady(t, "ex")
			rt.awaitCatalog(t, "ex", "the prompts", func() bool { return len(rt.Prompts()) > 0 })
			greet := CompletionRef{Prompt: "ex__greet"}
			notes := CompletionRef{Server: "ex", ResourceTemplate: "demo://notes/{id}"}
			for _, tc := range []struct {
				ref        CompletionRef
				arg, value string
				others     map[string]string
				want       []string
			}{
				{greet, "name", "", nil, []string{"Ada", "Alan", "Alice", "Bob", "Grace"}},
				{greet, "name", "A", nil, []string{"Ada", "Alan", "Alice"}},
				{greet, "name", "Al", nil, []string{"Alan", "Alice"}},
				{greet, "name", "Ali", nil, []string{"Alice"}},
				{greet, "name", "Al", map[string]string{"style": "formally"}, []string{"Alan Turing", "Alice Ball"}},
				{greet, "style", "w", nil, []string{"warmly", "wittily"}},
				{notes, "id", "1", nil, []string{"1", "10", "12"}},
				{notes, "id", "12", nil, []string{"12"}},
				{notes, "id", "9", nil, []string{}},
			} {
				got, err := rt.Complete(context.Background(), tc.ref, tc.arg, tc.value, tc.others)
				if err != nil {
					t.Fatalf("Complete(%+v, %s=%q): %v", tc.ref, tc.arg, tc.value, err)
				}
				if !slices.Equal(got.Values, tc.want) || got.HasMore || got.Total != len(tc.want) {
					t.Errorf("Complete(%+v, %s=%q, %v) = %+v, want %v", tc.ref, tc.arg, tc.value, tc.others, got, tc.want)
				}
			}
			for _, ref := range []CompletionRef{{}, {Prompt: "ex__greet", Server: "ex"}, {Server: "ex"}, {ResourceTemplate: "demo://notes/{id}"}} {
				if _, err := rt.Complete(context.Background(), ref, "name", "", nil); !errors.Is(err, ErrBadCompletionRef) {
					t.Errorf("Complete(%+v) = %v, want ErrBadCompletionRef", ref, err)
				}
			}
			if _, err := rt.Complete(context.Background(), CompletionRef{Prompt: "ex__nope"}, "name", "", nil); !errors.Is(err, prompts.ErrUnknownPrompt) {
				t.Errorf("Complete of an unknown prompt = %v, want ErrUnknownPrompt", err)
			}
		})
	}
}

// TestCompletionValuesBoundedAndScrubbed: a server's completion values are
// its own words: at most 100 of them reach the host (has_more then set),
// each cut to 1 KiB and scrubbed of the server's secrets.
func TestCompletionValuesBoundedAndScrubbed(t *testing.T) {
	const secret = "sk-completed-by-server-91cd"
	transport := func(config.Server) mcp.Transport {
		srv := mcp.NewServer(&mcp.Implementation{Name: "chatty"}, &mcp.ServerOptions{
			CompletionHandler: func(context.Context, *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
				values := []string{"key " + secret, strings.Repeat("x", 5000)}
				for i := range 148 {
					values = append(values, fmt.Sprint(i))
				}
				return &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: values}}, nil
			},
		})
		mcp.AddTool(srv, &mcp.Tool{Name: "noop"}, noopTool) // a server without tools is never ready to waitReady
		return connected(srv)
	}
	srv := memServer("chatty")
	srv.Env = map[string]string{"API_KEY": secret}
	rt := start(t, Options{transport: transport}, srv)
	rt.waitReady(t, "chatty")
	got, err := rt.Complete(context.Background(), CompletionRef{Server: "chatty", ResourceTemplate: "mem://{x}"}, "x", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Values) != 100 || !got.HasMore {
		t.Fatalf("got %d values, has_more %v; want 100 and true", len(got.Values), got.HasMore)
	}
	if strings.Contains(strings.Join(got.Values, " "), secret) || !strings.Contains(got.Values[0], "[redacted]") {
		t.Errorf("the secret the server completed with was not scrubbed: first value %q", strings.ReplaceAll(got.Values[0], secret, "<PLANTED SECRET>"))
	}
	if len(got.Values[1]) > 1024+len(" …[line truncated]") {
		t.Errorf("a 5000-byte value came through as %d bytes", len(got.Values[1]))
	}
}

// TestCompleteAndSubscribeOverHTTP: the routes' answers and errors.
func TestCompleteAndSubscribeOverHTTP(t *testing.T) {
	off := exampleServer("off")
	off.Enabled = false
	rt := start(t, Options{}, exampleServer("ex", "-update-tool"), off)
	rt.waitReady(t, "ex")
	rt.awaitCatalog(t, "ex", "the prompts", func() bool { return len(rt.Prompts()) > 0 })
	api := newAPI(t, rt)
	// A configured server without a session: 503 at once.
	api.do("POST", "/api/mcp/complete", `{"server":"off","resource_template":"demo://notes/{id}","argument":"id"}`).want(t, 503)
	api.do("POST", "/api/mcp/resources/subscriptions", `{"server":"off","uri":"demo://notes/1"}`).want(t, 503)

	var c struct {
		Values  []string `json:"values"`
		HasMore *bool    `json:"has_more"`
		Total   int      `json:"total"`
	}
	api.do("POST", "/api/mcp/complete", `{"prompt":"ex__greet","argument":"name","value":"Al","context":{"style":"formally"}}`).want(t, 200).decode(t, &c)
	if !slices.Equal(c.Values, []string{"Alan Turing", "Alice Ball"}) || c.HasMore == nil || *c.HasMore || c.Total != 2 {
		t.Errorf("completion = %+v", c)
	}
	api.do("POST", "/api/mcp/complete", `{"server":"ex","resource_template":"demo://notes/{id}","argument":"id","value":"2"}`).want(t, 200).decode(t, &c)
	if !slices.Equal(c.Values, []string{"2", "20"}) {
		t.Errorf("template completion = %+v", c)
	}
	for _, tc := range []struct {
		body  string
		code  int
		field string
	}{
		{`{"argument":"name"}`, 400, "prompt"},
		{`{"prompt":"ex__greet","server":"ex","argument":"name"}`, 400, "server"},
		{`{"server":"ex","argument":"id"}`, 400, "resource_template"},
		{`{"resource_template":"demo://notes/{id}","argument":"id"}`, 400, "server"},
		{`{"prompt":"ex__greet"}`, 400, "argument"},
		{`{"prompt":"ex__greet","argument":"name","colour":"red"}`, 400, "colour"},
		{`{"prompt":"ex__greet","argument":7}`, 400, "argument"},
		{`{"prompt":"ex__greet","argument":"name","context":{"style":1}}`, 400, "context"},
		{`{"prompt":"ex__nope","argument":"name"}`, 404, ""},
		{`{"server":"nope","resource_template":"x://{y}","argument":"y"}`, 404, ""},
	} {
		e := api.do("POST", "/api/mcp/complete", tc.body).want(t, tc.code).apiError(t)
		if e.Field != tc.field {
			t.Errorf("%s: field %q, want %q (%s)", tc.body, e.Field, tc.field, e.Error)
		}
	}

	sub := rt.subscribe(t, "ex")
	stream := openEvents(t, eventsServer(t, rt.Runtime), "/api/mcp/events?server=ex", nil)
	var created struct{ ID string }
	api.do("POST", "/api/mcp/resources/subscriptions", `{"server":"ex","uri":"demo://notes/3"}`).want(t, 201).decode(t, &created)
	var other struct{ ID string }
	api.do("POST", "/api/mcp/resources/subscriptions", `{"server":"ex","uri":"demo://notes/3"}`).want(t, 201).decode(t, &other)
	if created.ID == "" || created.ID == other.ID {
		t.Fatalf("ids %q and %q", created.ID, other.ID)
	}
	updateUntilSeen(t, rt, sub, "ex", "3")
	// The same update on the management API's event stream.
	for i := 0; ; i++ {
		f, ok := stream.frame(t)
		if !ok || i == 1000 {
			t.Fatal("no resource_updated frame on /api/mcp/events")
		}
		if f.typ == events.TypeResourceUpdated {
			if f.str("uri") != "demo://notes/3" || f.str("server") != "ex" {
				t.Errorf("frame %s, want the update of demo://notes/3 on ex", f.raw)
			}
			break
		}
	}
	api.do("DELETE", "/api/mcp/resources/subscriptions/"+created.ID, "").want(t, 204)
	api.do("DELETE", "/api/mcp/resources/subscriptions/"+created.ID, "").want(t, 404)
	// The other holder still gets the updates.
	mustCall(t, rt, "ex__update", map[string]any{"id": "3"})
	testutil.Await(t, sub, 10*time.Second, "an update for the remaining holder", func(u events.ResourceUpdated) bool { return u.URI == "demo://notes/3" })
	api.do("DELETE", "/api/mcp/resources/subscriptions/"+other.ID, "").want(t, 204)
	for _, tc := range []struct {
		body  string
		code  int
		field string
	}{
		{`{"uri":"demo://notes/3"}`, 400, "server"},
		{`{"server":"ex"}`, 400, "uri"},
		{`{"server":"ex","uri":"demo://notes/3","x":1}`, 400, "x"},
		{`{"server":"nope","uri":"demo://notes/3"}`, 404, ""},
	} {
		e := api.do("POST", "/api/mcp/resources/subscriptions", tc.body).want(t, tc.code).apiError(t)
		if e.Field != tc.field {
			t.Errorf("%s: field %q, want %q (%s)", tc.body, e.Field, tc.field, e.Error)
		}
	}
	api.do("DELETE", "/api/mcp/resources/subscriptions/sub-unknown", "").want(t, 404)
	api.do("DELETE", "/api/mcp/resources/subscriptions/"+other.ID, `{"x":1}`).want(t, 400)
}
