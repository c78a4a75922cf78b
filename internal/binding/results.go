package binding

import (
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/openprogram/mcpvisor/adapter"
	"github.com/openprogram/mcpvisor/events"
	"github.com/openprogram/mcpvisor/internal/mcpconn"
	"github.com/openprogram/mcpvisor/tools"
)

// Checking structured results against a tool's output schema (T2) is the
// runtime's: the go-sdk validates them only on its server side, and its
// client hands over whatever the server sent. A tool's schema is checked
// once when a listing brings it (a relisting with the same schema reuses
// the check), never per call, and compiled for keeps at the first result
// it checks: a server's tools are listed at every start, most are never
// called, and a compiled schema is kilobytes of heap per tool (P2). Each
// call then validates the decoded result. On protocol 2026-07-28 the SDK's
// client answers input-required results (MRTR) inside CallTool and
// returns only the final result, which is the one checked here.

// outputCheck is one tool's output schema check. Its schema and verdict
// never change once built, so the executors of several listings may share
// it; the compiled form is built once, at the first result checked.
type outputCheck struct {
	schema   string // the schema as listed, to recognise it in a relisting
	unusable bool   // results go unchecked (the listing said so)

	once     sync.Once
	compiled *compiledSchema // set by once (or built with it); nil: unchecked
}

// get returns the compiled schema, compiling it at the first use; nil for
// an unusable one (see compile).
func (c *outputCheck) get() *compiledSchema {
	c.compile()
	return c.compiled
}

// compile compiles the schema once, at the first use. The compile at the
// listing succeeded and compiling is deterministic, so this one should
// too; if it fails all the same (or panics), the check becomes unusable
// and the error goes to the one caller that compiled, to report: results
// must not go unchecked without a word.
func (c *outputCheck) compile() (err error) {
	c.once.Do(func() {
		if c.compiled != nil || c.unusable {
			return
		}
		c.compiled, err = compileSafely(compileOutputSchema, json.RawMessage(c.schema))
		c.unusable = err != nil
	})
	return err
}

// compileSafely runs compile on raw, a panic in it (jsonschema-go on a
// schema our bounds missed) turned into an error, bounded: the schema is
// the server's.
func compileSafely(compile func(json.RawMessage) (*compiledSchema, error), raw json.RawMessage) (cs *compiledSchema, err error) {
	defer func() {
		if p := recover(); p != nil {
			cs, err = nil, &compilePanic{msg: fmt.Sprintf("compiling the output schema panicked: %.200v", p), stack: debug.Stack()}
		}
	}()
	return compile(raw)
}

// compilePanic is compileSafely's error for a panic. Its stack is kept
// apart from its text: the text goes in the event (the server's schema
// may show in it, scrubbed there), the stack only to the log, so that a
// bug of ours in the bounded checkers does not pass for a server's
// unusable schema.
type compilePanic struct {
	msg   string
	stack []byte
}

func (e *compilePanic) Error() string { return e.msg }

// reportUnusable emits OutputSchemaUnusable for tool (its registry name)
// and, for a panic, logs where it was.
func (b *Binding) reportUnusable(conn *mcpconn.Conn, tool string, err error) {
	var p *compilePanic
	if errors.As(err, &p) && b.logger != nil {
		b.logger.Error("compiling an output schema panicked", "tool", tool, "stack", string(p.stack))
	}
	b.emit(events.OutputSchemaUnusable{Tool: tool, Error: conn.ScrubError(err.Error())})
}

// compileFirst compiles check (of tool original) at its first use and
// emits OutputSchemaUnusable if that fails (see compile).
func (b *Binding) compileFirst(conn *mcpconn.Conn, original string, check *outputCheck) {
	if err := check.compile(); err != nil {
		b.reportUnusable(conn, adapter.ToolName(b.server, original), err)
	}
}

// compiledSchema is a resolved output schema and its shape: recursive
// says it has a $ref back to a schema that encloses it, which a check
// follows as deep as the result goes (see MaxCheckedResultDepth), and
// branches what a check may try and drop (see MaxResultCheckCost).
type compiledSchema struct {
	*jsonschema.Resolved
	schemaShape
}

// checkFor returns the check of tool original (registered as name) for its
// output schema, or nil when it declares none. A schema seen for the first
// time is compiled here, to know it usable, and the compiled form dropped
// (see outputCheck.get); one that cannot be compiled gives a check that
// lets every result through, and one OutputSchemaUnusable event naming
// the tool by its registry name, which is bounded and what the host calls
// it by (the server's name for it is neither). It runs on the binding's
// owner only (see Tools).
func (b *Binding) checkFor(conn *mcpconn.Conn, name, original string, schema json.RawMessage, next map[string]*outputCheck) *outputCheck {
	if schema == nil {
		return nil
	}
	if c := b.checks[original]; c != nil && c.schema == string(schema) {
		next[original] = c
		return c
	}
	c := &outputCheck{schema: string(schema)}
	if _, err := compileSafely(compileOutputSchema, schema); err != nil {
		c.unusable = true
		b.reportUnusable(conn, name, err)
	}
	next[original] = c
	return c
}

// compileOutputSchema decodes and resolves schema without a loader: a
// $ref to a document outside the schema fails here rather than being
// fetched from wherever a server points it.
//
// Before that, the schema must pass the bounds of MaxOutputSchemaBytes and
// MaxOutputSchemaDepth (a byte scan, before anything decodes it); once
// resolved, its shape must neither loop without stepping into the value,
// nor exceed MaxOutputSchemaPaths, MaxOutputSchemaChain or
// MaxOutputSchemaName, nor recurse over one part of a value by two paths
// (see checkRecursion): jsonschema-go would crash, or take time
// exponential in the schema or in the result's depth, or build errors
// of megabytes, at every result.
func compileOutputSchema(raw json.RawMessage) (*compiledSchema, error) {
	if err := checkSchemaBytes(raw); err != nil {
		return nil, err
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, fmt.Errorf("decoding the output schema: %w", err)
	}
	if !validatable(s.Schema) {
		return nil, fmt.Errorf("output schema version %q: only draft-07 and draft 2020-12 are supported", s.Schema)
	}
	r, err := s.Resolve(nil)
	if err != nil {
		return nil, fmt.Errorf("resolving the output schema: %w", err)
	}
	shape, err := checkSchemaShape(raw)
	if err != nil {
		return nil, err
	}
	return &compiledSchema{r, shape}, nil
}

// validatable mirrors the "$schema" values jsonschema-go's Validate takes,
// so that a schema it would refuse at every call is unusable at once.
func validatable(version string) bool {
	switch version {
	case "", "http://json-schema.org/draft-07/schema#", "https://json-schema.org/draft-07/schema#",
		"https://json-schema.org/draft/2020-12/schema":
		return true
	}
	return false
}

// errNoStructuredContent is the mismatch of a tool that declares an output
// schema and returns no structured content: the spec says it MUST.
var errNoStructuredContent = errors.New("the tool returned no structured content, but it declares an output schema")

// result converts r for the host (structured: its structured content as
// sent, when the connection has it): structured content and resource links
// scrubbed of the connection's secrets (they may echo one), and, when
// check applies, the structured content validated. A result the tool
// marked isError is not validated; one that does not match becomes a tool
// error whose first block says what did not match (scrubbed and bounded:
// the validator quotes the server's data), followed by the server's own
// blocks; its structured content is dropped, so that a host never takes
// it for a checked one.
func result(conn *mcpconn.Conn, check *outputCheck, r *mcp.CallToolResult, structured json.RawMessage) tools.Result {
	res := adapter.ConvertResultJSON(r, structured)
	var compiled *compiledSchema
	if check != nil && r != nil && !r.IsError {
		compiled = check.get()
	}
	if compiled != nil {
		err := errNoStructuredContent
		if r.StructuredContent != nil {
			depth := depthOf(r.StructuredContent)
			switch {
			case compiled.recursive && depth > MaxCheckedResultDepth:
				err = errResultTooDeep
			case checkCost(len(res.StructuredContent), depth, compiled.branches) > MaxResultCheckCost:
				err = nil
				unchecked(&res, depth, compiled.branches)
			default:
				err = compiled.Validate(r.StructuredContent)
			}
		}
		if err != nil {
			return mismatch(conn, res, err)
		}
	}
	scrubResult(conn, &res)
	return res
}

// MaxCheckedResultDepth bounds how deep a structured result is checked
// against a recursive output schema (64 levels of objects and arrays): a
// check costs time quadratic in the depth it follows (jsonschema-go
// wraps its error, and prints the failing value, at every level), and a
// recursive schema follows the result's. A deeper result does not match.
// A schema that does not recurse stops at its own depth.
const MaxCheckedResultDepth = 64

var errResultTooDeep = fmt.Errorf("the structured result is nested deeper than %d levels, the most checked against a recursive output schema", MaxCheckedResultDepth)

func mismatch(conn *mcpconn.Conn, res tools.Result, err error) tools.Result {
	msg := tools.Content{Type: tools.ContentText,
		Text: "[the tool's structured result does not match its output schema: " + conn.ScrubError(err.Error()) + "]"}
	res.Content = append([]tools.Content{msg}, res.Content...)
	res.StructuredContent = nil
	res.IsError = true
	if res.Details == nil {
		res.Details = map[string]any{}
	}
	res.Details[adapter.DetailIsError] = true
	res.Details[adapter.DetailOutputSchemaMismatch] = true
	scrubResult(conn, &res)
	return res
}

// scrubResult scrubs the machine-readable parts of res (the structured
// content as redact.Scrubber.JSON does: valid JSON, or the quoted marker).
func scrubResult(conn *mcpconn.Conn, res *tools.Result) {
	res.StructuredContent = conn.ScrubJSON(res.StructuredContent)
	for _, key := range []string{adapter.DetailResourceLinks, adapter.DetailEmbeddedResources} {
		links, _ := res.Details[key].([]tools.ResourceLink)
		for i := range links {
			l := &links[i]
			l.URI, l.Name, l.Title = conn.Scrub(l.URI), conn.Scrub(l.Name), conn.Scrub(l.Title)
			l.Description, l.MIMEType = conn.Scrub(l.Description), conn.Scrub(l.MIMEType)
		}
	}
}
