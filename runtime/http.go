package runtime

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/openprogram/mcpvisor/config"
	"github.com/openprogram/mcpvisor/prompts"
	"github.com/openprogram/mcpvisor/tools"
)

// maxBodyBytes bounds every request body of the management API.
const maxBodyBytes = 1 << 20

// Handler returns the management API (DESIGN "Management API"): JSON over
// plain net/http, on a mux of its own.
//
//	GET    /healthz                          {"status":"ok"}, or 503
//	GET    /api/mcp/servers                  {"servers": [...]} in config order
//	POST   /api/mcp/servers                  {"name": ..., <config>} → 201 + the entry
//	GET    /api/mcp/servers/{name}           the entry with tools and stderr_tail
//	PATCH  /api/mcp/servers/{name}           a PATCH body (C4) → the entry
//	DELETE /api/mcp/servers/{name}           {} → 204
//	POST   /api/mcp/servers/{name}/restart   {} → the entry
//	POST   /api/mcp/reload                   {} → {"added", "removed", "restarted"}
//	GET    /api/mcp/tools                    {"tools": [...]}
//	GET    /api/mcp/tools/search?q=&limit=   {"tools": [...]} best first, each with "score"
//	GET    /api/mcp/tools/model              {"tools": [...]} what the host hands its model (ModelTools)
//	POST   /api/mcp/tools/{name}/call        {"arguments": {...}} → the result
//	GET    /api/mcp/prompts                  {"prompts": [...]}
//	POST   /api/mcp/prompts/{name}/get       {"arguments": {"k": "v"}} → the messages
//	POST   /api/mcp/complete                 {"prompt"|"server"+"resource_template", "argument", "value", "context"} → {"values", "has_more"}
//	POST   /api/mcp/resources/subscriptions  {"server", "uri"} → 201 {"id"}
//	DELETE /api/mcp/resources/subscriptions/{id}  {} → 204
//	POST   /api/mcp/resources/read           {"server": NAME, "uri": URI} → {"contents": [...]}
//	GET    /api/mcp/events                   Server-Sent Events (see http_events.go)
//	GET    /api/mcp/catalog                  {"entries": [...], "warnings": [...]} (CatalogList)
//	GET    /api/mcp/catalog/diff?source=S    {"servers": [{"source", "file", "name", "status", "fields"}], "warnings"}
//	POST   /api/mcp/catalog/diff             {"entries": [{"name", "config"}]} or {"format", "content"} → the same
//	POST   /api/mcp/catalog/apply            {"entries": [{"source", "file", "name", "as", "config"}]} → {"results": [...]}
//
// The debug routes are not part of it: see DebugHandler; nor is the web
// console that drives it from a browser: see ConsoleHandler.
//
// Every answer is JSON with X-Content-Type-Options: nosniff, and every
// secret in it is masked; the event stream's 200 is the exception
// (text/event-stream, its errors JSON). An error answer is {"error": "...", "field":
// "..."} ("field" only when one field is to blame) with a 4xx or 5xx code.
// Every state-changing route (POST, PATCH, DELETE) takes a JSON object of
// at most 1 MiB declared as application/json, {} where it needs nothing:
// 415 without that Content-Type, 400 without the object.
//
// Every answer has a write deadline sized to its route (30 s; a tool call
// its server's max_call_seconds plus 30 s; a prompt get its server's
// timeout_seconds plus 30 s; a catalog apply 165 s), set through
// http.ResponseController; the event stream is the exception, with a
// deadline per frame (see http_events.go); a host mounting Handler on its own server sets
// the connection timeouts (ReadHeaderTimeout, ReadTimeout, IdleTimeout).
//
// The API has no authentication: it is meant for a loopback listener. It
// answers only requests whose Host is a loopback name or address (or
// absent), so a web page cannot reach it through DNS rebinding, and it
// refuses cross-origin writes from browsers (http.CrossOriginProtection).
// It refuses (403) every request carrying the Mcpvisor-Request header,
// which the runtime puts on every request it sends, so a server cannot
// make any mcpvisor runtime call it.
func (r *Runtime) Handler() http.Handler {
	mux := http.NewServeMux()
	handleFor := func(pattern string, budget func(*http.Request) time.Duration, h handlerFunc) {
		r.handle(mux, pattern, budget, h)
	}
	handle := func(pattern string, h handlerFunc) { handleFor(pattern, ordinary, h) }
	handle("GET /healthz", r.handleHealthz)
	handle("GET /api/mcp/servers", r.handleListServers)
	handle("POST /api/mcp/servers", r.handleAddServer)
	handle("GET /api/mcp/servers/{name}", r.handleGetServer)
	handleFor("PATCH /api/mcp/servers/{name}", restarting, r.handlePatchServer)
	handleFor("DELETE /api/mcp/servers/{name}", r.removing, r.handleRemoveServer)
	handleFor("POST /api/mcp/servers/{name}/restart", restarting, r.handleRestartServer)
	handleFor("POST /api/mcp/reload", restarting, r.handleReload)
	handle("GET /api/mcp/tools", r.handleListTools)
	handle("GET /api/mcp/tools/search", r.handleSearchTools)
	handle("GET /api/mcp/tools/model", r.handleModelTools)
	handleFor("POST /api/mcp/tools/{name}/call", r.toolBudget, r.handleCallTool)
	handle("GET /api/mcp/prompts", r.handleListPrompts)
	handleFor("POST /api/mcp/prompts/{name}/get", r.promptBudget, r.handleGetPrompt)
	handleFor("POST /api/mcp/complete", r.namedInBodyBudget, r.handleComplete)
	handleFor("POST /api/mcp/resources/subscriptions", r.namedInBodyBudget, r.handleSubscribe)
	handleFor("DELETE /api/mcp/resources/subscriptions/{id}", r.namedInBodyBudget, r.handleUnsubscribe)
	handleFor("POST /api/mcp/resources/read", r.namedInBodyBudget, r.handleReadResource)
	handle("GET /api/mcp/catalog", r.handleCatalog)
	handle("GET /api/mcp/catalog/diff", r.handleCatalogSourceDiff)
	handle("POST /api/mcp/catalog/diff", r.handleCatalogDiff)
	handleFor("POST /api/mcp/catalog/apply", r.applyRouteBudget, r.handleCatalogApply)
	mux.Handle("GET /api/mcp/events", apiHandler{h: r.handleEvents, log: r.logAPIError}) // long-lived: deadlines per frame
	return r.guarded(mux)
}

// handle registers a route of the API's kind on mux: its answer within
// the budget's deadline (see http_deadline.go), its error as the error
// answer.
func (r *Runtime) handle(mux *http.ServeMux, pattern string, budget func(*http.Request) time.Duration, h handlerFunc) {
	mux.Handle(pattern, apiHandler{h: withDeadline(budget, h), log: r.logAPIError})
}

// guarded puts mux behind what every route of Handler and DebugHandler
// has: the common headers, the refusal of the runtime's own requests, the
// loopback Host check, cross-origin protection and JSON answers for
// unmatched requests.
func (r *Runtime) guarded(mux *http.ServeMux) http.Handler {
	cop := http.NewCrossOriginProtection()
	cop.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		writeError(w, &apiError{Status: http.StatusForbidden,
			Message: "cross-origin request refused: the management API takes writes only from non-browser clients or its own origin"})
	}))
	return commonHeaders(refuseOwnRequests(loopbackOnly(cop.Handler(unmatched{mux}))))
}

// handlerFunc is a route: it writes its answer, or returns the error to
// answer with instead (then it must not have written anything).
type handlerFunc func(w http.ResponseWriter, req *http.Request) error

// apiHandler turns a handlerFunc's error into the error answer.
type apiHandler struct {
	h   handlerFunc
	log func(req *http.Request, status int, err error)
}

func (a apiHandler) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	if err := a.h(w, req); err != nil {
		e := toAPIError(err)
		if e.Status == http.StatusInternalServerError { // not one of the known outcomes
			a.log(req, e.Status, err)
		}
		writeError(w, e)
	}
}

func (r *Runtime) logAPIError(req *http.Request, status int, err error) {
	// Errors of the runtime never hold a secret (C3), and the request body
	// is never logged.
	r.opts.Logger.Warn("management API error", "method", req.Method, "path", req.URL.Path, "status", status, "error", err)
}

// apiError is an error answer: its status code and its JSON body.
type apiError struct {
	Status  int    `json:"-"`
	Message string `json:"error"`
	Field   string `json:"field,omitempty"`
}

func (e *apiError) Error() string { return e.Message }

// toAPIError maps an error of the runtime, the config package or a tool
// call onto its answer. The message is the error's text: none of them
// holds a secret (C3), and request bodies are never quoted.
func toAPIError(err error) *apiError {
	var (
		ae    *apiError
		fe    *config.FieldError
		large *http.MaxBytesError
	)
	status := http.StatusInternalServerError
	msg := err.Error()
	var missing *prompts.ArgumentError
	var serverErr *jsonrpc.Error
	switch {
	case errors.As(err, &ae):
		return ae
	case errors.As(err, &large):
		return &apiError{Status: http.StatusRequestEntityTooLarge,
			Message: fmt.Sprintf("request body is larger than %d bytes", large.Limit)}
	case errors.Is(err, ErrShuttingDown):
		status = http.StatusServiceUnavailable
	case errors.Is(err, config.ErrUnparsable):
		status = http.StatusConflict
		msg = unparsableMessage(msg)
	case errors.Is(err, config.ErrTooLarge):
		status = http.StatusRequestEntityTooLarge
	case errors.As(err, &fe):
		return &apiError{Status: http.StatusBadRequest, Message: msg, Field: fe.Field}
	case errors.As(err, &missing):
		return &apiError{Status: http.StatusBadRequest, Message: msg, Field: "arguments." + missing.Argument}
	case errors.Is(err, ErrBadResourceURI):
		return &apiError{Status: http.StatusBadRequest, Message: msg, Field: "uri"}
	case errors.Is(err, ErrBadCompletionRef):
		status = http.StatusBadRequest
	case errors.Is(err, ErrUnknownServer), errors.Is(err, tools.ErrUnknownTool), errors.Is(err, prompts.ErrUnknownPrompt),
		errors.Is(err, ErrUnknownSubscription):
		status = http.StatusNotFound
	case errors.Is(err, ErrNotDeclared): // the session's capabilities; a reconnect may change them
		status = http.StatusConflict
	case errors.Is(err, ErrTooManySubscriptions):
		status = http.StatusTooManyRequests
	case errors.Is(err, ErrServerExists), errors.Is(err, ErrSuperseded), errors.Is(err, ErrDisabled):
		status = http.StatusConflict
	case errors.Is(err, ErrRestartFailed), errors.Is(err, tools.ErrSessionClosed), errors.Is(err, tools.ErrResponseTooLarge),
		errors.As(err, &serverErr):
		// (A JSON-RPC error or an oversized answer is the server's doing:
		// the gateway's fault.)
		status = http.StatusBadGateway
	case errors.Is(err, tools.ErrNotReady), errors.Is(err, ErrServerDied):
		status = http.StatusServiceUnavailable
	case errors.Is(err, tools.ErrTimeout), errors.Is(err, context.DeadlineExceeded), errors.Is(err, ErrProcessesLinger),
		errors.Is(err, tools.ErrUnresponsive):
		status = http.StatusGatewayTimeout
	case errors.Is(err, context.Canceled):
		status = http.StatusServiceUnavailable
	}
	return &apiError{Status: status, Message: msg}
}

// writeJSON writes v as the answer with the given status.
func writeJSON(w http.ResponseWriter, status int, v any) error {
	body, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encoding the answer: %w", err)
	}
	w.WriteHeader(status)
	_, _ = w.Write(append(body, '\n'))
	return nil
}

func writeError(w http.ResponseWriter, e *apiError) {
	body, _ := json.Marshal(e) // two strings: cannot fail
	w.WriteHeader(e.Status)
	_, _ = w.Write(append(body, '\n'))
}

// readBody reads the JSON request body of a state-changing route: at most
// maxBodyBytes, declared application/json (a charset other than UTF-8 is
// refused), and a JSON object ({} where the route needs nothing). A request
// without either cannot change anything, so that a bodiless POST (a
// redirected OAuth token request, a server-chosen URL) or an HTML form,
// which cannot send application/json without a preflight, is refused: 415
// without the type, 400 without an object.
func readBody(w http.ResponseWriter, req *http.Request) ([]byte, error) {
	if err := checkJSONType(req.Header.Get("Content-Type")); err != nil {
		return nil, err
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, req.Body, maxBodyBytes))
	if err != nil {
		var large *http.MaxBytesError
		if errors.As(err, &large) {
			return nil, err
		}
		return nil, &apiError{Status: http.StatusBadRequest, Message: "reading the request body: " + err.Error()}
	}
	trimmed := bytes.TrimSpace(body)
	switch {
	case len(trimmed) == 0:
		return nil, &apiError{Status: http.StatusBadRequest,
			Message: "request body is empty: every state-changing route takes a JSON object (send {} when there is nothing to say)"}
	case trimmed[0] != '{':
		return nil, &apiError{Status: http.StatusBadRequest, Message: "request body must be a JSON object"}
	}
	return body, nil
}

// readEmptyObject reads the body of a route that takes no parameters
// (DELETE, restart, reload): readBody's rules, and the object must be {}.
func readEmptyObject(w http.ResponseWriter, req *http.Request) error {
	body, err := readBody(w, req)
	if err != nil {
		return err
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(body, &fields); err != nil {
		return &apiError{Status: http.StatusBadRequest, Message: "request body must be a JSON object: " + jsonProblem(err)}
	}
	for k := range fields {
		return &apiError{Status: http.StatusBadRequest, Field: k,
			Message: fmt.Sprintf("unknown field %s: %s %s takes the empty object {}", quoteShort(k), req.Method, quoteShort(req.URL.Path))}
	}
	return nil
}

func checkJSONType(ct string) error {
	if ct == "" {
		return &apiError{Status: http.StatusUnsupportedMediaType,
			Message: "request has no Content-Type: every state-changing route takes a JSON object as application/json"}
	}
	media, params, err := mime.ParseMediaType(ct)
	if err != nil || media != "application/json" {
		return errUnsupportedType(ct)
	}
	if cs, ok := params["charset"]; ok && !strings.EqualFold(cs, "utf-8") {
		return errUnsupportedType(ct)
	}
	return nil
}

func errUnsupportedType(got string) *apiError {
	return &apiError{Status: http.StatusUnsupportedMediaType,
		Message: fmt.Sprintf("request body must be application/json (UTF-8), got Content-Type %s", quoteShort(got))}
}

// quoteShort quotes a client-supplied value for an error message, cut so
// that a huge header cannot make a huge answer.
func quoteShort(s string) string {
	const max = 64
	if len(s) > max {
		return fmt.Sprintf("%q...", s[:max])
	}
	return fmt.Sprintf("%q", s)
}

// commonHeaders sets the headers every answer carries, error answers of
// the mux and of the guards included.
func commonHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		h := w.Header()
		h.Set("Content-Type", "application/json")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Cache-Control", "no-store")
		next.ServeHTTP(w, req)
	})
}

// unmatched answers requests that match no route with a JSON error: 405
// (with Allow) when the path exists for other methods, 404 otherwise, and
// the mux's redirect for a path that is not in canonical form.
type unmatched struct{ mux *http.ServeMux }

func (u unmatched) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	h, pattern := u.mux.Handler(req)
	if pattern != "" {
		u.mux.ServeHTTP(w, req)
		return
	}
	// Let the mux's own answer decide the status and headers (Allow,
	// Location), and replace its text body with a JSON one.
	rec := &statusRecorder{header: http.Header{}}
	h.ServeHTTP(rec, req)
	for _, k := range []string{"Allow", "Location"} {
		if v := rec.header.Get(k); v != "" {
			w.Header().Set(k, v)
		}
	}
	switch rec.status {
	case http.StatusMethodNotAllowed:
		writeError(w, &apiError{Status: rec.status,
			Message: fmt.Sprintf("method %s not allowed on %s (allowed: %s)", req.Method, quoteShort(req.URL.Path), rec.header.Get("Allow"))})
	case http.StatusNotFound:
		writeError(w, &apiError{Status: rec.status, Message: fmt.Sprintf("no route %s", quoteShort(req.URL.Path))})
	default:
		writeError(w, &apiError{Status: rec.status, Message: http.StatusText(rec.status)})
	}
}

// statusRecorder keeps the status and headers of an answer and drops its
// body.
type statusRecorder struct {
	header http.Header
	status int
}

func (s *statusRecorder) Header() http.Header { return s.header }
func (s *statusRecorder) WriteHeader(code int) {
	if s.status == 0 {
		s.status = code
	}
}
func (s *statusRecorder) Write(p []byte) (int, error) {
	s.WriteHeader(http.StatusOK)
	return len(p), nil
}
