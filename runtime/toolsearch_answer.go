package runtime

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"unicode/utf8"

	"github.com/openprogram/mcpvisor/tools"
)

// Bounds of a search_tools answer, which goes straight into the model's
// context. The answer as a whole holds at most searchAnswerBytes, filled
// best match first: 64 KiB (about 16 k tokens) is some ten times what
// five tools of the fleet take (a typical answer is 3–6 KiB) and a
// quarter of the text cap of one tool result (max_output_bytes, 256
// KiB): an answer is an index for choosing a tool, not the output of
// one. Within it, one tool's description is cut after
// searchDescriptionBytes (a marker says so) and an input schema larger
// than searchSchemaBytes is replaced by a note (a permissive object
// schema whose description says what was left out), so that one
// oversized tool cannot take the whole answer from the others. Every
// bound counts bytes as encoded in the answer (encodeJSON), not raw.
const (
	searchAnswerBytes      = 64 << 10
	searchDescriptionBytes = 8 << 10
	searchSchemaBytes      = 16 << 10
)

// searchAnswer is the text of a search_tools answer. Note, when present,
// says what the bounds left out.
type searchAnswer struct {
	Tools []searchAnswerTool `json:"tools"`
	Note  string             `json:"note,omitempty"`
}

type searchAnswerTool struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"input_schema"`
}

// searchHideKey is the context key of withSearchHidden.
type searchHideKey struct{}

// withSearchHidden makes a search_tools call under ctx leave out the
// tools hide reports (the gateway's filter: a client never learns of a
// tool it may not call), as it leaves out the pinned ones.
func withSearchHidden(ctx context.Context, hide func(tools.Tool) bool) context.Context {
	return context.WithValue(ctx, searchHideKey{}, hide)
}

func (r *Runtime) runSearchTool(ctx context.Context, args any) (tools.Result, error) {
	var in struct {
		Query *string `json:"query"`
		Limit *int    `json:"limit"`
	}
	if raw, err := json.Marshal(args); err != nil || json.Unmarshal(raw, &in) != nil {
		return searchToolError("search_tools takes {\"query\": string, \"limit\": integer}")
	}
	limit := r.opts.ToolSearch.Limit
	switch {
	case in.Query == nil || *in.Query == "":
		return searchToolError("search_tools needs a query: what you want to do, in a few words")
	case len(*in.Query) > MaxSearchQueryBytes:
		return searchToolError(fmt.Sprintf("the query is longer than %d bytes; say it in a few words", MaxSearchQueryBytes))
	case in.Limit != nil && (*in.Limit < 1 || *in.Limit > MaxSearchLimit):
		return searchToolError(fmt.Sprintf("limit must be between 1 and %d", MaxSearchLimit))
	case in.Limit != nil:
		limit = *in.Limit
	}
	// The pinned tools are in the model's list already (search_tools'
	// description says the answer holds the others): ask for as many
	// more as there are pins, and leave them out.
	// Hidden tools (withSearchHidden) take matches too: ask for a bounded
	// number more (the index ranks every tool anyway; the extra matches
	// only cost their copies), so that only a filter hiding hundreds of
	// the best matches shortens the answer.
	extra := len(r.ModelTools()) - 1
	skip := func(t tools.Tool) bool { return r.opts.ToolSearch.pins(t.Name) }
	if hide, _ := ctx.Value(searchHideKey{}).(func(tools.Tool) bool); hide != nil {
		extra += 4 * MaxSearchLimit
		skip = func(t tools.Tool) bool { return r.opts.ToolSearch.pins(t.Name) || hide(t) }
	}
	matches := r.searchCurrent(*in.Query, limit, extra, skip)
	text := answerText(matches)
	return tools.Result{Content: []tools.Content{{Type: tools.ContentText, Text: string(text)}}}, nil
}

// answerText is the text of the search_tools answer for matches: the
// bounded answer, encoded as the model gets it.
func answerText(matches []ToolMatch) []byte {
	text, _ := encodeJSON(boundedAnswer(matches)) // every schema in it encodes (boundedTool)
	return text
}

// encodeJSON is v as a search_tools answer carries it: JSON without the
// HTML escapes (a '<' stays one byte for the model, not six) and without a
// trailing newline. The bounds are measured on this encoding, since
// control bytes and invalid UTF-8 still take six bytes each in it.
func encodeJSON(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// encodedLen is how many bytes s takes encoded as a JSON string, quotes
// left out.
func encodedLen(s string) int {
	enc, _ := encodeJSON(s) // a string: cannot fail
	return len(enc) - 2
}

// boundedAnswer is the answer for matches within the bounds above, all
// measured on the encoded answer: each tool's description and schema cut
// to their bounds (boundedTool), then tools in rank order while the
// answer stays within searchAnswerBytes. The field bounds leave the
// first tool a fraction of the answer; a tool that would still not fit
// is left out with those after it, and the note says so. The note counts
// the cuts of the tools the answer holds.
func boundedAnswer(matches []ToolMatch) searchAnswer {
	answer := searchAnswer{Tools: []searchAnswerTool{}}
	size := len(`{"tools":[],"note":""}`) + 256 // the note's words
	cut := 0
	for i, m := range matches {
		at, cuts, enc := boundedTool(m)
		if size+len(enc)+1 > searchAnswerBytes {
			answer.Note = fmt.Sprintf("%d more matching tools left out: the answer holds at most %d bytes; search with more specific words", len(matches)-i, searchAnswerBytes)
			break
		}
		size += len(enc) + 1
		cut += cuts
		answer.Tools = append(answer.Tools, at)
	}
	if cut > 0 {
		sep := ""
		if answer.Note != "" {
			sep = "; "
		}
		answer.Note += fmt.Sprintf("%s%d descriptions or input schemas cut to fit the answer", sep, cut)
	}
	return answer
}

// boundedTool is m as an answer holds it, with how many of its fields
// were cut and its encoding: a description of more than
// searchDescriptionBytes encoded is cut at a rune boundary to fit, with a
// marker; an input schema of more than searchSchemaBytes encoded (or one
// that does not encode) is replaced by a note.
func boundedTool(m ToolMatch) (at searchAnswerTool, cuts int, enc []byte) {
	at = searchAnswerTool{Name: m.Name, Description: m.Description, InputSchema: m.InputSchema}
	if encodedLen(at.Description) > searchDescriptionBytes {
		kept := cutEncoded(at.Description, searchDescriptionBytes)
		at.Description = kept + fmt.Sprintf(" […description cut: %d of %d bytes shown]", len(kept), len(m.Description))
		cuts++
	}
	schema, err := encodeJSON(at.InputSchema)
	if err != nil || len(schema) > searchSchemaBytes {
		note := fmt.Sprintf("input schema of %d bytes left out of this answer (more than %d)", len(m.InputSchema), searchSchemaBytes)
		if err != nil {
			note = "input schema left out of this answer (not valid JSON)"
		}
		at.InputSchema, _ = encodeJSON(map[string]string{"type": "object", "description": note}) // strings: cannot fail
		cuts++
	}
	enc, _ = encodeJSON(at) // strings and a schema that encodes: cannot fail
	return at, cuts, enc
}

// cutEncoded is the longest prefix of s, cut at a rune boundary, that
// takes at most n bytes encoded as a JSON string (a binary search: a few
// encodings of at most n bytes each).
func cutEncoded(s string, n int) string {
	lo, hi := 0, min(len(s), n) // the prefix of lo bytes fits; none longer than hi does
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if encodedLen(truncateUTF8(s, mid)) <= n {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return truncateUTF8(s, lo)
}

// truncateUTF8 is s cut to at most n bytes at a rune boundary.
func truncateUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

func searchToolError(msg string) (tools.Result, error) {
	return tools.Result{IsError: true, Content: []tools.Content{{Type: tools.ContentText, Text: msg}}}, nil
}
