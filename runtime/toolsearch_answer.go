package runtime

import (
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
// oversized tool cannot take the whole answer from the others.
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

func (r *Runtime) runSearchTool(_ context.Context, args any) (tools.Result, error) {
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
	pinned := len(r.ModelTools()) - 1
	matches := r.searchCurrent(*in.Query, limit, pinned, func(t tools.Tool) bool { return r.opts.ToolSearch.pins(t.Name) })
	text, err := json.Marshal(boundedAnswer(matches))
	if err != nil {
		return tools.Result{}, fmt.Errorf("encoding the search_tools answer: %w", err)
	}
	return tools.Result{Content: []tools.Content{{Type: tools.ContentText, Text: string(text)}}}, nil
}

// boundedAnswer is the answer for matches within the bounds above: each
// tool's description and schema cut to their bounds, then tools in rank
// order while the answer stays within searchAnswerBytes. The first tool
// always fits (its cut parts are a fraction of the whole).
func boundedAnswer(matches []ToolMatch) searchAnswer {
	answer := searchAnswer{Tools: []searchAnswerTool{}}
	size := len(`{"tools":[],"note":""}`) + 256 // the note's words
	cut := 0
	for i, m := range matches {
		at := searchAnswerTool{Name: m.Name, Description: m.Description, InputSchema: m.InputSchema}
		if len(at.Description) > searchDescriptionBytes {
			kept := truncateUTF8(at.Description, searchDescriptionBytes)
			at.Description = kept + fmt.Sprintf(" […description cut: %d of %d bytes shown]", len(kept), len(m.Description))
			cut++
		}
		if len(at.InputSchema) > searchSchemaBytes {
			note := fmt.Sprintf("input schema of %d bytes left out of this answer (more than %d)", len(m.InputSchema), searchSchemaBytes)
			at.InputSchema, _ = json.Marshal(map[string]string{"type": "object", "description": note}) // strings: cannot fail
			cut++
		}
		enc, _ := json.Marshal(at) // strings and a JSON value: cannot fail
		if size+len(enc)+1 > searchAnswerBytes && len(answer.Tools) > 0 {
			answer.Note = fmt.Sprintf("%d more matching tools left out: the answer holds at most %d bytes; search with more specific words", len(matches)-i, searchAnswerBytes)
			break
		}
		size += len(enc) + 1
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
