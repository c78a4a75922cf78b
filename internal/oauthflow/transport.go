package oauthflow

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// secureTransport refuses plain http to anything but loopback: discovery,
// registration and token requests carry codes, secrets and tokens.
type secureTransport struct {
	base http.RoundTripper
}

func (t secureTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if err := checkSecureURL("OAuth", req.URL.String()); err != nil {
		if req.Body != nil {
			req.Body.Close()
		}
		return nil, err
	}
	return t.base.RoundTrip(req)
}

// maxMetadata bounds how much of a metadata document is kept.
const maxMetadata = 1 << 20

// metadataCapture records the authorization server metadata documents the
// SDK fetches during a login, so that the login can be stored with the
// metadata it used. It only reads what passes through.
type metadataCapture struct {
	base http.RoundTripper

	mu   sync.Mutex
	seen []capturedMetadata
}

type capturedMetadata struct {
	meta *oauthex.AuthServerMeta
	raw  json.RawMessage
}

func (c *metadataCapture) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := c.base.RoundTrip(req)
	if err != nil || req.Method != http.MethodGet || resp.StatusCode != http.StatusOK || !isAuthServerMetadata(req.URL.Path) {
		return resp, err
	}
	data, rerr := io.ReadAll(io.LimitReader(resp.Body, maxMetadata+1))
	resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(data))
	if rerr != nil || len(data) > maxMetadata {
		return resp, nil
	}
	var meta oauthex.AuthServerMeta
	if json.Unmarshal(data, &meta) == nil && meta.TokenEndpoint != "" {
		c.mu.Lock()
		c.seen = append(c.seen, capturedMetadata{meta: &meta, raw: data})
		c.mu.Unlock()
	}
	return resp, nil
}

func isAuthServerMetadata(path string) bool {
	return strings.Contains(path, "/.well-known/oauth-authorization-server") ||
		strings.Contains(path, "/.well-known/openid-configuration")
}

// forTokenEndpoint returns the latest metadata naming tokenURL.
func (c *metadataCapture) forTokenEndpoint(tokenURL string) (*oauthex.AuthServerMeta, json.RawMessage) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i := len(c.seen) - 1; i >= 0; i-- {
		if c.seen[i].meta.TokenEndpoint == tokenURL {
			return c.seen[i].meta, c.seen[i].raw
		}
	}
	return nil, nil
}
