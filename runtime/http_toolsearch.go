package runtime

import (
	"fmt"
	"net/http"
	"strconv"

	"github.com/openprogram/mcpvisor/tools"
)

// The routes of tool search and of the deferred mode (toolsearch.go).

// handleSearchTools answers GET /api/mcp/tools/search?q=QUERY&limit=N:
// {"tools": [...]} the best matches first, each a tool as in GET
// /api/mcp/tools with its "score". q is required, at most
// MaxSearchQueryBytes; limit defaults to 10, between 1 and MaxSearchLimit.
func (r *Runtime) handleSearchTools(w http.ResponseWriter, req *http.Request) error {
	params := req.URL.Query()
	for _, name := range []string{"q", "limit"} {
		if len(params[name]) > 1 {
			return &apiError{Status: http.StatusBadRequest, Field: name, Message: "query parameter " + name + " is given more than once"}
		}
	}
	q := params.Get("q")
	switch {
	case q == "":
		return &apiError{Status: http.StatusBadRequest, Field: "q", Message: "query parameter q is required: what the tool should do, in words"}
	case len(q) > MaxSearchQueryBytes:
		return &apiError{Status: http.StatusBadRequest, Field: "q", Message: fmt.Sprintf("query parameter q is longer than %d bytes", MaxSearchQueryBytes)}
	}
	limit := defaultSearchLimit
	if s, ok := params["limit"]; ok {
		n, err := strconv.Atoi(s[0])
		if err != nil || n < 1 || n > MaxSearchLimit {
			return &apiError{Status: http.StatusBadRequest, Field: "limit",
				Message: fmt.Sprintf("query parameter limit must be an integer between 1 and %d, got %s", MaxSearchLimit, quoteShort(s[0]))}
		}
		limit = n
	}
	matches := r.SearchTools(q, limit)
	if matches == nil {
		matches = []ToolMatch{}
	}
	return writeJSON(w, http.StatusOK, map[string][]ToolMatch{"tools": matches})
}

// handleModelTools answers GET /api/mcp/tools/model: {"tools": [...]},
// exactly what ModelTools returns.
func (r *Runtime) handleModelTools(w http.ResponseWriter, _ *http.Request) error {
	list := r.ModelTools()
	if list == nil {
		list = []tools.Tool{}
	}
	return writeJSON(w, http.StatusOK, map[string][]tools.Tool{"tools": list})
}
