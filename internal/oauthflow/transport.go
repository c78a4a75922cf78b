package oauthflow

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/openprogram/mcpvisor/internal/redact"
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
//
// It also learns the secrets that pass through (codes, verifiers, client
// secrets, tokens, in request forms and JSON answers), so that an error
// quoting one of them (an authorization server echoing its input) can be
// scrubbed before it reaches a log or a status.
type metadataCapture struct {
	base http.RoundTripper

	scrub *redact.Scrubber // learns the secrets

	mu   sync.Mutex
	seen []capturedMetadata
}

// remember adds secret values to scrub.
func (c *metadataCapture) remember(values ...string) { c.scrub.Learn(values...) }

// secretFields are the form and JSON fields whose values are secrets.
var secretFields = []string{"code", "code_verifier", "client_secret", "refresh_token", "access_token", "id_token", "client_assertion"}

// learnRequest remembers the secrets of a form request, keeping its body.
func (c *metadataCapture) learnRequest(req *http.Request) {
	if _, pass, ok := req.BasicAuth(); ok {
		c.remember(pass)
	}
	if req.Body == nil || req.Method != http.MethodPost || !strings.HasPrefix(req.Header.Get("Content-Type"), "application/x-www-form-urlencoded") {
		return
	}
	data, err := io.ReadAll(io.LimitReader(req.Body, maxMetadata))
	req.Body.Close()
	req.Body = io.NopCloser(bytes.NewReader(data))
	if err != nil {
		return
	}
	if form, err := url.ParseQuery(string(data)); err == nil {
		for _, f := range secretFields {
			c.remember(form.Get(f))
		}
	}
}

// learnResponse remembers the secrets of a JSON answer, keeping its body.
func (c *metadataCapture) learnResponse(resp *http.Response) {
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxMetadata))
	resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(data))
	if err != nil {
		return
	}
	var fields map[string]any
	if json.Unmarshal(data, &fields) != nil {
		return
	}
	for _, f := range secretFields {
		if v, ok := fields[f].(string); ok {
			c.remember(v)
		}
	}
}

type capturedMetadata struct {
	meta *oauthex.AuthServerMeta
	raw  json.RawMessage
}

func (c *metadataCapture) RoundTrip(req *http.Request) (*http.Response, error) {
	c.learnRequest(req)
	resp, err := c.base.RoundTrip(req)
	if err == nil && req.Method == http.MethodPost {
		c.learnResponse(resp)
	}
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
