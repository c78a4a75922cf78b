package runtime

import (
	"errors"
	"fmt"
	"net/http"
)

// handleSubscribe answers POST /api/mcp/resources/subscriptions: the body
// is {"server": NAME, "uri": URI}, the answer 201 {"id": ID}. 201 means
// "requested": on a 2026-07-28 session the server acknowledges later, if
// at all. The subscription lives until its DELETE (or its server's
// removal, or Shutdown), across reconnects; its updates arrive as
// resource_updated events on GET /api/mcp/events.
func (r *Runtime) handleSubscribe(w http.ResponseWriter, req *http.Request) error {
	body, err := readBody(w, req)
	if err != nil {
		return err
	}
	server, uri, err := decodeServerURI(body, "the resource to subscribe to")
	if err != nil {
		return err
	}
	sub, err := r.subscribeResource(req.Context(), nil, server, uri)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusCreated, map[string]string{"id": sub.ID()})
}

// handleUnsubscribe answers DELETE /api/mcp/resources/subscriptions/{id}
// (body {}): 204, or 404 for an id that names no live subscription. It
// ends that one subscription; the server is unsubscribed only when it
// was the last of its URI, within the request's context (a client that
// gives up ends the subscription all the same; the server may then keep
// sending updates of the URI, which are no longer events).
func (r *Runtime) handleUnsubscribe(w http.ResponseWriter, req *http.Request) error {
	if err := readEmptyObject(w, req); err != nil {
		return err
	}
	id := req.PathValue("id")
	sub, ok := r.subs.get(id)
	if !ok {
		return fmt.Errorf("ending resource subscription %s: %w", quoteShort(id), ErrUnknownSubscription)
	}
	if err := sub.close(req.Context()); err != nil && !errors.Is(err, ErrUnknownSubscription) {
		// The subscription ended; only the server's unsubscribe failed.
		r.opts.Logger.Warn("unsubscribing from a resource failed", "server", sub.Server(), "error", err)
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
