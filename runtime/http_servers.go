package runtime

import (
	"errors"
	"net/http"
	"net/url"

	"github.com/openprogram/mcpvisor/config"
)

// The routes of the server set, health and the actor tree. Every write
// goes through the runtime's management methods, which the manager
// serialises; a rejected request changes nothing on disk or in the running
// set.

func (r *Runtime) handleHealthz(w http.ResponseWriter, req *http.Request) error {
	if err := r.Healthy(req.Context()); err != nil {
		return &apiError{Status: http.StatusServiceUnavailable, Message: "not ready: " + err.Error()}
	}
	return writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

// serverList is the answer of GET /api/mcp/servers. ConfigError says why
// the config file is not used (it does not parse); every write is refused
// until it parses again.
type serverList struct {
	Servers     []ServerEntry `json:"servers"`
	ConfigError string        `json:"config_error,omitempty"`
}

func (r *Runtime) handleListServers(w http.ResponseWriter, _ *http.Request) error {
	list := serverList{Servers: r.Servers(), ConfigError: r.Status().ConfigError}
	if list.Servers == nil {
		list.Servers = []ServerEntry{}
	}
	return writeJSON(w, http.StatusOK, list)
}

func (r *Runtime) handleAddServer(w http.ResponseWriter, req *http.Request) error {
	body, err := readBody(w, req)
	if err != nil {
		return err
	}
	s, err := config.DecodeServer(body)
	if err != nil {
		return err
	}
	entry, err := r.AddServer(req.Context(), s)
	if err != nil {
		return err
	}
	w.Header().Set("Location", "/api/mcp/servers/"+url.PathEscape(entry.Name))
	return writeJSON(w, http.StatusCreated, entry)
}

func (r *Runtime) handleGetServer(w http.ResponseWriter, req *http.Request) error {
	d, err := r.Server(req.PathValue("name"))
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, d)
}

func (r *Runtime) handlePatchServer(w http.ResponseWriter, req *http.Request) error {
	body, err := readBody(w, req)
	if err != nil {
		return err
	}
	entry, err := r.PatchServer(req.Context(), req.PathValue("name"), body)
	if err != nil {
		return r.unknownWhileBroken(err)
	}
	return writeJSON(w, http.StatusOK, entry)
}

func (r *Runtime) handleRemoveServer(w http.ResponseWriter, req *http.Request) error {
	if err := readEmptyObject(w, req); err != nil {
		return err
	}
	if err := r.RemoveServer(req.Context(), req.PathValue("name")); err != nil {
		return r.unknownWhileBroken(err)
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (r *Runtime) handleRestartServer(w http.ResponseWriter, req *http.Request) error {
	if err := readEmptyObject(w, req); err != nil {
		return err
	}
	entry, err := r.RestartServer(req.Context(), req.PathValue("name"))
	if err != nil {
		return r.unknownWhileBroken(err)
	}
	return writeJSON(w, http.StatusOK, entry)
}

func (r *Runtime) handleReload(w http.ResponseWriter, req *http.Request) error {
	if err := readEmptyObject(w, req); err != nil {
		return err
	}
	res, err := r.Reload(req.Context())
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, res)
}

// unknownWhileBroken answers a change to an unknown server with 409 while
// the config file does not parse: the servers of that file are not loaded,
// so the runtime calls them unknown, while the real problem is the file.
func (r *Runtime) unknownWhileBroken(err error) error {
	if msg := r.Status().ConfigError; msg != "" && errors.Is(err, ErrUnknownServer) {
		return &apiError{Status: http.StatusConflict, Message: unparsableMessage(msg)}
	}
	return err
}

func unparsableMessage(cause string) string {
	return "the config file does not parse; fix it by hand first, then POST /api/mcp/reload: " + cause
}
