package mcpconn

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/openprogram/mcpvisor/internal/oauthflow"
)

// heartbeat is when the server was last heard from: any message it sent
// (a response, an error answer, a progress report, a notification, a
// request of its own). The keepalive takes it as proof of life, so that a
// server that answers one request at a time, and so queues the probe
// behind a long call it reports progress on, is not taken for hung.
type heartbeat struct {
	last atomic.Int64 // unix nanoseconds
}

func newHeartbeat() *heartbeat {
	h := &heartbeat{}
	h.touch()
	return h
}

func (h *heartbeat) touch() { h.last.Store(time.Now().UnixNano()) }

// silence is how long ago the server was last heard from.
func (h *heartbeat) silence() time.Duration {
	return time.Duration(time.Now().UnixNano() - h.last.Load())
}

// sending notes the answer of every request the client sends (responses
// come back through the sending side's handler); a notification sent is
// no news of the server.
func (h *heartbeat) sending(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if !strings.HasPrefix(method, "notifications/") && serverAnswered(err) {
			h.touch()
		}
		return res, err
	}
}

// receiving notes every message the server sends of its own accord.
func (h *heartbeat) receiving(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		h.touch()
		return next(ctx, method, req)
	}
}

// codeRejected is the code of the go-sdk's jsonrpc2.ErrRejected: on
// Streamable HTTP it wraps what never reached the server or came from
// what stands in front of it (connection refused, DNS, TLS, 502, 503,
// 504, 429). It is a *jsonrpc.Error, but not an answer of the server.
const codeRejected = -32005

// serverAnswered reports whether a request's outcome came from the
// server: a result, or a JSON-RPC error it sent (a server without ping
// says -32601) — not a transport failure, a timeout or a rejection by
// the transport. A 401 or 403 on a request that may start no login
// (oauthflow.ErrLoginNotTried) is the server's answer too: it is there,
// and needs a login.
func serverAnswered(err error) bool {
	if err == nil || errors.Is(err, oauthflow.ErrLoginNotTried) {
		return true
	}
	return hasServerError(err)
}

// hasServerError walks err's whole tree (the SDK joins a decoded error
// body and ErrRejected with several %w) for a JSON-RPC error that is not
// the transport's rejection.
func hasServerError(err error) bool {
	if wire, ok := err.(*jsonrpc.Error); ok && wire.Code != codeRejected {
		return true
	}
	switch u := err.(type) {
	case interface{ Unwrap() error }:
		if next := u.Unwrap(); next != nil {
			return hasServerError(next)
		}
	case interface{ Unwrap() []error }:
		for _, next := range u.Unwrap() {
			if hasServerError(next) {
				return true
			}
		}
	}
	return false
}
