package mcpconn

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// connTransport puts wrap around every connection of a stdio (or
// injected) transport: the wire tap and the listen watch.
type connTransport struct {
	inner mcp.Transport
	wrap  func(mcp.Connection) mcp.Connection
}

func (t connTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return t.wrap(c), nil
}

// wireTap sees the raw JSON-RPC traffic of a session, for two things the
// SDK's decoded types lose:
//   - a tools/call result with a content block of a type the SDK does not
//     know fails to decode as a whole, and the host loses every block
//     (S6: a future block must become a readable line, never an error);
//     the tap rewrites such blocks into text before the SDK decodes them;
//   - the SDK decodes a tool's input and output schemas into maps, which
//     reorders keys and rounds big numbers, and its annotations into plain
//     booleans, which loses whether a hint was sent; the tap keeps the
//     schemas, the annotations and the _meta exactly as sent;
//   - it decodes a result's structuredContent into an `any` the same way;
//     the tap hands the bytes to the call that asked for them (see
//     Conn.CallToolJSON).
//
// It is only used on stdio connections: the SDK's HTTP connections carry
// unexported hooks that a wrapper would hide.
type wireTap struct {
	mcp.Connection

	// tooLarge is the frame error that ended the connection, if one did:
	// the calls it fails may see only "connection closed".
	tooLarge atomic.Pointer[error]

	mu      sync.Mutex
	pending map[jsonrpc.ID]pendingCall // outgoing tools/call and tools/list by id
	schemas map[string]tappedTool      // tool name -> its parts as sent
}

// pendingCall is an outgoing request the tap waits to see answered. The
// entry goes when the answer comes, or when the call returns without one
// (it timed out or was cancelled, and a server that honours
// notifications/cancelled never answers): the caller's slot records the
// ids it was sent under (see forget), so that pending does not grow with
// every abandoned call for the connection's life.
type pendingCall struct {
	method    string
	slot      *structuredSlot // a tools/call's receiver of its structuredContent, or nil
	firstPage bool            // a tools/list without a cursor: the listing starts anew
}

// tappedTool is the part of a tools/list entry the tap keeps as sent.
type tappedTool struct {
	InputSchema  json.RawMessage `json:"inputSchema"`
	OutputSchema json.RawMessage `json:"outputSchema"`
	Annotations  json.RawMessage `json:"annotations"`
	Meta         json.RawMessage `json:"_meta"`
}

func newWireTap() *wireTap {
	return &wireTap{pending: map[jsonrpc.ID]pendingCall{}, schemas: map[string]tappedTool{}}
}

func (w *wireTap) Write(ctx context.Context, msg jsonrpc.Message) error {
	if req, ok := msg.(*jsonrpc.Request); ok && req.IsCall() && (req.Method == "tools/call" || req.Method == "tools/list") {
		slot, _ := ctx.Value(structuredSlotKey{}).(*structuredSlot)
		slot.sent(req.ID)
		w.mu.Lock()
		w.pending[req.ID] = pendingCall{req.Method, slot, req.Method == "tools/list" && !hasCursor(req.Params)}
		w.mu.Unlock()
	}
	return w.Connection.Write(ctx, msg)
}

// hasCursor reports whether a list request asks for a page after the
// first.
func hasCursor(params json.RawMessage) bool {
	var p struct {
		Cursor string `json:"cursor"`
	}
	return json.Unmarshal(params, &p) == nil && p.Cursor != ""
}

// forget drops the pending entries of the requests slot's call sent: the
// call returned, so nobody waits for their answers any more.
func (w *wireTap) forget(slot *structuredSlot) {
	if w == nil || slot == nil {
		return
	}
	slot.mu.Lock()
	ids := slot.ids
	slot.mu.Unlock()
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, id := range ids {
		delete(w.pending, id)
	}
}

func (w *wireTap) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := w.Connection.Read(ctx)
	resp, ok := msg.(*jsonrpc.Response)
	if err != nil || !ok {
		if fe := frameError(err); fe != err {
			w.tooLarge.Store(&fe)
			return msg, fe
		}
		return msg, err
	}
	w.mu.Lock()
	call, tracked := w.pending[resp.ID]
	delete(w.pending, resp.ID)
	w.mu.Unlock()
	if !tracked || resp.Error != nil {
		return msg, nil
	}
	switch call.method {
	case "tools/call":
		resp.Result = readableContent(resp.Result)
		call.slot.keep(resp.Result)
	case "tools/list":
		w.keepSchemas(resp.Result, call.firstPage)
	}
	return msg, nil
}

// frameTooLarge returns the frame error that ended the connection, or nil.
func (w *wireTap) frameTooLarge() error {
	if w == nil {
		return nil
	}
	if err := w.tooLarge.Load(); err != nil {
		return *err
	}
	return nil
}

// tool returns the parts of a tool's list entry exactly as the server sent
// them.
func (w *wireTap) tool(name string) (tappedTool, bool) {
	if w == nil {
		return tappedTool{}, false
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	t, ok := w.schemas[name]
	return t, ok
}

// keepSchemas keeps the tools of one page of a tools/list answer. The
// first page of a listing replaces what the tap held, so that tools a
// server dropped do not stay for the connection's life; later pages add
// to it.
func (w *wireTap) keepSchemas(result json.RawMessage, firstPage bool) {
	var list struct {
		Tools []struct {
			Name string `json:"name"`
			tappedTool
		} `json:"tools"`
	}
	if json.Unmarshal(result, &list) != nil {
		return // the SDK reports the malformed list
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if firstPage {
		w.schemas = make(map[string]tappedTool, len(list.Tools))
	}
	for _, t := range list.Tools {
		// The list's bytes belong to the SDK; keep copies.
		w.schemas[t.Name] = tappedTool{
			InputSchema: bytes.Clone(t.InputSchema), OutputSchema: bytes.Clone(t.OutputSchema),
			Annotations: bytes.Clone(t.Annotations), Meta: bytes.Clone(t.Meta),
		}
	}
}

// knownContent are the block types the SDK decodes in a tool result.
var knownContent = map[string]bool{"text": true, "image": true, "audio": true, "resource_link": true, "resource": true}

// readableContent replaces every content block of an unknown type with a
// text block naming it. Almost every result has only known types; a scan
// of the raw bytes finds those without decoding anything.
func readableContent(result json.RawMessage) json.RawMessage {
	if onlyKnownTypes(result) {
		return result
	}
	var fields map[string]json.RawMessage
	var blocks []json.RawMessage
	if json.Unmarshal(result, &fields) != nil || json.Unmarshal(fields["content"], &blocks) != nil {
		return result // malformed: let the SDK say so
	}
	changed := false
	for i, b := range blocks {
		var head struct {
			Type string `json:"type"`
		}
		if json.Unmarshal(b, &head) != nil || knownContent[head.Type] {
			continue
		}
		text, _ := json.Marshal(map[string]string{"type": "text", "text": fmt.Sprintf("[unsupported content: %s]", head.Type)})
		blocks[i], changed = text, true
	}
	if !changed {
		return result
	}
	fields["content"], _ = json.Marshal(blocks)
	out, err := json.Marshal(fields)
	if err != nil {
		return result
	}
	return out
}

// onlyKnownTypes reports whether every `"type": "<value>"` pair in raw has
// a known content type as value. It may answer false for a result that is
// fine (a "type" key inside structured content); the slow path then finds
// nothing to change.
func onlyKnownTypes(raw []byte) bool {
	key := []byte(`"type"`)
	for rest := raw; ; {
		i := bytes.Index(rest, key)
		if i < 0 {
			return true
		}
		rest = rest[i+len(key):]
		v := bytes.TrimLeft(rest, " \t\r\n")
		if len(v) == 0 || v[0] != ':' {
			continue
		}
		v = bytes.TrimLeft(v[1:], " \t\r\n")
		if len(v) == 0 || v[0] != '"' {
			return false
		}
		end := bytes.IndexByte(v[1:], '"')
		if end < 0 || !knownContent[string(v[1:1+end])] {
			return false
		}
	}
}
