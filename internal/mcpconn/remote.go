package mcpconn

import (
	"context"
	"fmt"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/openprogram/mcpvisor/config"
)

// remoteTransport returns the go-sdk transport of an http (Streamable
// HTTP) or sse (legacy SSE) server, with its headers and bearer token on
// every request. The http.Transport is the connection's own, so that
// closing the connection also closes its idle sockets.
func remoteTransport(srv config.Server) (mcp.Transport, *http.Transport, error) {
	if srv.Auth != nil && srv.Auth.Kind == config.AuthOAuth {
		return nil, nil, fmt.Errorf("auth kind %q: %w", srv.Auth.Kind, ErrUnsupported)
	}
	base := http.DefaultTransport.(*http.Transport).Clone()
	client := &http.Client{Transport: headerTransport{base: base, headers: requestHeaders(srv)}}
	switch srv.Type {
	case config.TypeHTTP:
		return &mcp.StreamableClientTransport{Endpoint: srv.URL, HTTPClient: client}, base, nil
	case config.TypeSSE:
		return &mcp.SSEClientTransport{Endpoint: srv.URL, HTTPClient: client}, base, nil
	}
	return nil, nil, fmt.Errorf("transport %q: %w", srv.Type, ErrUnsupported)
}

// requestHeaders are the configured headers plus the bearer token.
func requestHeaders(srv config.Server) http.Header {
	h := http.Header{}
	for k, v := range srv.Headers {
		h.Set(k, v)
	}
	if srv.Auth != nil && srv.Auth.Kind == config.AuthBearer && srv.Auth.Token != "" {
		h.Set("Authorization", "Bearer "+srv.Auth.Token)
	}
	return h
}

// headerTransport adds fixed headers to every request.
type headerTransport struct {
	base    http.RoundTripper
	headers http.Header
}

func (t headerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	for k, v := range t.headers {
		req.Header[k] = v
	}
	return t.base.RoundTrip(req)
}

// lifetimeTransport connects its inner transport with ctx instead of the
// caller's: see Dial.
type lifetimeTransport struct {
	inner mcp.Transport
	ctx   context.Context
}

func (t lifetimeTransport) Connect(context.Context) (mcp.Connection, error) {
	return t.inner.Connect(t.ctx)
}
