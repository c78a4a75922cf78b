package runtime

import (
	"encoding/json"
	"net/http"

	"github.com/openprogram/mcpvisor/prompts"
)

// handleListPrompts answers GET /api/mcp/prompts: every prompt of every
// ready server, sorted by name.
func (r *Runtime) handleListPrompts(w http.ResponseWriter, _ *http.Request) error {
	list := r.Prompts()
	if list == nil {
		list = []prompts.Prompt{}
	}
	return writeJSON(w, http.StatusOK, map[string][]prompts.Prompt{"prompts": list})
}

// handleGetPrompt answers POST /api/mcp/prompts/{name}/get: the body is
// {"arguments": {"name": "value", ...}} (values are strings, as MCP
// prompt arguments are); a prompt without any is got with {}.
func (r *Runtime) handleGetPrompt(w http.ResponseWriter, req *http.Request) error {
	body, err := readBody(w, req)
	if err != nil {
		return err
	}
	raw, err := decodeCallBody(body)
	if err != nil {
		return err
	}
	args := map[string]string{}
	if raw != nil {
		if err := json.Unmarshal(raw, &args); err != nil {
			return &apiError{Status: http.StatusBadRequest, Field: "arguments", Message: "prompt arguments must be strings: " + jsonProblem(err)}
		}
	}
	res, err := r.GetPrompt(req.Context(), req.PathValue("name"), args)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, res)
}
