package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/openprogram/mcpvisor/messages"
)

// DebugHandler returns the debug routes, apart from the management API of
// Handler, as net/http/pprof keeps its handlers apart: a host mounts them
// where it wants them, or not at all. The patterns are full paths, so a
// host mounts the handler at "/debug/" (mux.Handle("/debug/",
// rt.DebugHandler())):
//
//	GET    /debug/actors                     the live actor tree (ActorTree)
//	POST   /debug/actors/kill                {"path": ..., "how": ...} → the injection (InjectFailure);
//	                                         only with Options.Debug, absent otherwise
//
// Its answers and guards are those of Handler: JSON with nosniff, the
// loopback Host check, cross-origin protection for writes, the refusal of
// requests the runtime itself sent, a 30 s write deadline per answer.
func (r *Runtime) DebugHandler() http.Handler {
	mux := http.NewServeMux()
	r.handle(mux, "GET /debug/actors", ordinary, r.handleActors)
	if r.opts.Debug {
		r.handle(mux, "POST /debug/actors/kill", ordinary, r.handleKill)
	}
	return r.guarded(mux)
}

func (r *Runtime) handleActors(w http.ResponseWriter, req *http.Request) error {
	tree, err := r.ActorTree(req.Context())
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, tree)
}

// killTimeout bounds the wait for a failure injection to be delivered.
const killTimeout = 2 * time.Second

// errBadInjection: the path or the kind of failure is not one there is.
var errBadInjection = errors.New("bad failure injection")

// InjectFailure makes an actor of the tree fail, to exercise supervision:
// path is "manager/NAME" (the server actor) or "manager/NAME/session", how
// is "panic", "stop" or "poison". It works only with Options.Debug.
func (r *Runtime) InjectFailure(ctx context.Context, path, how string) error {
	if !r.opts.Debug {
		return fmt.Errorf("failure injection needs Options.Debug")
	}
	parts := strings.Split(path, "/")
	var msg messages.Kill
	switch {
	case len(parts) == 2 && parts[0] == "manager":
		msg = messages.Kill{Server: parts[1], Target: "server", How: how}
	case len(parts) == 3 && parts[0] == "manager" && parts[2] == "session":
		msg = messages.Kill{Server: parts[1], Target: "session", How: how}
	default:
		return fmt.Errorf("%w: path must be manager/NAME or manager/NAME/session, not %q", errBadInjection, path)
	}
	reply := make(chan error, 1)
	msg.Reply = reply
	// The target may be dying at this moment and never see the message.
	ctx, cancel := context.WithTimeout(ctx, killTimeout)
	defer cancel()
	err, askErr := ask(ctx, r, msg, reply)
	if askErr != nil {
		return fmt.Errorf("injecting into %s: not delivered (the actor is going away): %w", path, askErr)
	}
	return err
}

func (r *Runtime) handleKill(w http.ResponseWriter, req *http.Request) error {
	body, err := readBody(w, req)
	if err != nil {
		return err
	}
	var in struct {
		Path string `json:"path"`
		How  string `json:"how"`
	}
	if err := json.Unmarshal(body, &in); err != nil {
		return &apiError{Status: http.StatusBadRequest, Message: "invalid JSON: " + err.Error()}
	}
	if in.How != "panic" && in.How != "stop" && in.How != "poison" {
		return &apiError{Status: http.StatusBadRequest, Message: fmt.Sprintf("how must be panic, stop or poison, not %q", in.How), Field: "how"}
	}
	if err := r.InjectFailure(req.Context(), in.Path, in.How); err != nil {
		if errors.Is(err, errBadInjection) {
			return &apiError{Status: http.StatusBadRequest, Message: err.Error(), Field: "path"}
		}
		return err
	}
	return writeJSON(w, http.StatusOK, map[string]string{"injected": in.How, "path": in.Path})
}
