package runtime

import "net/http"

// handleComplete answers POST /api/mcp/complete: the body is
//
//	{"prompt": REGISTRY_PROMPT_NAME, "argument": NAME, "value": PREFIX, "context": {ARG: VALUE}}
//
// or {"server": NAME, "resource_template": URI_TEMPLATE, ...} for a
// resource template's variable, and the answer {"values": [...],
// "has_more": bool, "total": N} (total only if the server sent it).
func (r *Runtime) handleComplete(w http.ResponseWriter, req *http.Request) error {
	var in struct {
		Prompt           string            `json:"prompt"`
		Server           string            `json:"server"`
		ResourceTemplate string            `json:"resource_template"`
		Argument         string            `json:"argument"`
		Value            string            `json:"value"`
		Context          map[string]string `json:"context"`
	}
	body, err := readBody(w, req)
	if err != nil {
		return err
	}
	if err := decodeFields(body, map[string]any{"prompt": &in.Prompt, "server": &in.Server,
		"resource_template": &in.ResourceTemplate, "argument": &in.Argument, "value": &in.Value, "context": &in.Context}); err != nil {
		return err
	}
	switch {
	case in.Prompt != "" && (in.Server != "" || in.ResourceTemplate != ""):
		field := "server"
		if in.Server == "" {
			field = "resource_template"
		}
		return &apiError{Status: http.StatusBadRequest, Field: field,
			Message: `a completion is for a "prompt", or for a "server" and its "resource_template", not both`}
	case in.Prompt == "" && in.Server == "" && in.ResourceTemplate == "":
		return &apiError{Status: http.StatusBadRequest, Field: "prompt",
			Message: `the body names a "prompt", or a "server" and a "resource_template"`}
	case in.Prompt == "" && in.Server == "":
		return &apiError{Status: http.StatusBadRequest, Field: "server", Message: `"server" is missing: a "resource_template" is a server's`}
	case in.Prompt == "" && in.ResourceTemplate == "":
		return &apiError{Status: http.StatusBadRequest, Field: "resource_template", Message: `"resource_template" is missing`}
	case in.Argument == "":
		return &apiError{Status: http.StatusBadRequest, Field: "argument", Message: `"argument" is missing: the name of the argument to complete`}
	}
	ref := CompletionRef{Prompt: in.Prompt, Server: in.Server, ResourceTemplate: in.ResourceTemplate}
	res, err := r.Complete(req.Context(), ref, in.Argument, in.Value, in.Context)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, res)
}
