package oauthflow

// Discovery helpers shared by the OAuth handlers of this package.
//
// Protected resource metadata (RFC 9728) is discovered exactly like the
// go-sdk's own handlers do (auth.AuthorizationCodeHandler and
// extauth.ClientCredentialsHandler); the SDK keeps those helpers unexported,
// so they are mirrored here. On top of that, every URL the client is about to
// contact is required to use https unless its host is a loopback address, and
// a violation is reported with an error that names the offending URL.

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"

	"github.com/openprogram/mcpvisor/internal/netaddr"
	"github.com/openprogram/mcpvisor/internal/redact"
)

// parseChallenges parses the WWW-Authenticate challenges of resp.
func parseChallenges(resp *http.Response) ([]oauthex.Challenge, error) {
	cs, err := oauthex.ParseWWWAuthenticate(resp.Header.Values("WWW-Authenticate"))
	if err != nil {
		return nil, fmt.Errorf("failed to parse WWW-Authenticate header: %v", err)
	}
	return cs, nil
}

// resourceMetadataURLFromChallenges returns the resource_metadata parameter
// of the first challenge that has one, or "".
func resourceMetadataURLFromChallenges(cs []oauthex.Challenge) string {
	for _, c := range cs {
		if u := c.Params["resource_metadata"]; u != "" {
			return u
		}
	}
	return ""
}

// scopesFromChallenges returns the scope parameter of the first Bearer
// challenge that has one, split on white space.
func scopesFromChallenges(cs []oauthex.Challenge) []string {
	for _, c := range cs {
		if c.Scheme == "bearer" && c.Params["scope"] != "" {
			return strings.Fields(c.Params["scope"])
		}
	}
	return nil
}

// errorFromChallenges returns the error parameter of the first Bearer
// challenge that has one, or "".
func errorFromChallenges(cs []oauthex.Challenge) string {
	for _, c := range cs {
		if c.Scheme == "bearer" && c.Params["error"] != "" {
			return c.Params["error"]
		}
	}
	return ""
}

// isStepUpChallenge reports whether resp is a 403 asking for more scopes
// (https://modelcontextprotocol.io/specification/2025-11-25/basic/authorization#step-up-authorization-flow).
func isStepUpChallenge(resp *http.Response, cs []oauthex.Challenge) bool {
	return resp.StatusCode == http.StatusForbidden && errorFromChallenges(cs) == "insufficient_scope"
}

// prmCandidate is a URL at which protected resource metadata may be found,
// with the resource identifier the metadata must declare (RFC 9728 §3.3).
type prmCandidate struct {
	URL      string
	Resource string
}

// protectedResourceMetadataURLs returns the URLs to try, in order: the
// resource_metadata URL from the challenge, the path-based well-known URL and
// the root well-known URL (MCP 2025-11-25, "Protected Resource Metadata
// Discovery Requirements").
func protectedResourceMetadataURLs(metadataURL, resourceURL string) []prmCandidate {
	var urls []prmCandidate
	if metadataURL != "" {
		urls = append(urls, prmCandidate{URL: metadataURL, Resource: resourceURL})
	}
	ru, err := url.Parse(resourceURL)
	if err != nil {
		return urls
	}
	mu := *ru
	// At the path of the server's MCP endpoint.
	mu.Path = "/.well-known/oauth-protected-resource/" + strings.TrimLeft(ru.Path, "/")
	urls = append(urls, prmCandidate{URL: mu.String(), Resource: resourceURL})
	// At the root.
	mu.Path = "/.well-known/oauth-protected-resource"
	ru.Path = ""
	urls = append(urls, prmCandidate{URL: mu.String(), Resource: ru.String()})
	return urls
}

// discoverProtectedResource finds the protected resource metadata for the MCP
// endpoint mcpServerURL, whose request was answered with the challenges cs.
//
// Candidates that cannot be fetched or do not validate are skipped, as in the
// SDK. The first metadata document found must name an authorization server.
// If none is found, the MCP server root is taken as the authorization server
// (2025-03-26 fallback).
//
// Before anything is fetched, the MCP endpoint and the resource_metadata URL
// from the challenge must be https or loopback.
func discoverProtectedResource(ctx context.Context, client *http.Client, cs []oauthex.Challenge, mcpServerURL string) (*oauthex.ProtectedResourceMetadata, error) {
	if err := checkSecureURL("MCP server", mcpServerURL); err != nil {
		return nil, err
	}
	hint := resourceMetadataURLFromChallenges(cs)
	if hint != "" {
		if err := checkSecureURL("protected resource metadata", hint); err != nil {
			return nil, err
		}
	}
	for _, c := range protectedResourceMetadataURLs(hint, mcpServerURL) {
		prm, err := oauthex.GetProtectedResourceMetadata(ctx, c.URL, c.Resource, client)
		if err != nil || prm == nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			continue
		}
		if len(prm.AuthorizationServers) == 0 {
			// Metadata was found: enforce 2025-11-25 and do not search further.
			return nil, errors.New("protected resource metadata has no authorization servers specified")
		}
		return prm, nil
	}
	// 2025-03-26: the MCP server root is the authorization server.
	// https://modelcontextprotocol.io/specification/2025-03-26/basic/authorization#server-metadata-discovery
	u, err := url.Parse(mcpServerURL)
	if err != nil {
		return nil, fmt.Errorf("failed to parse MCP server URL: %v", err)
	}
	u.Path = ""
	u.RawPath = ""
	u.RawQuery = ""
	u.Fragment = ""
	return &oauthex.ProtectedResourceMetadata{
		AuthorizationServers: []string{u.String()},
		Resource:             mcpServerURL,
	}, nil
}

// discoverAuthServer fetches the metadata (RFC 8414 / OpenID discovery) of the
// first authorization server listed in prm with auth.GetAuthServerMetadata.
// If the server publishes none, the 2025-03-26 defaults are used
// (issuer = the server URL, token endpoint = <server>/token).
// The authorization server URL and its token endpoint must be https or
// loopback.
func discoverAuthServer(ctx context.Context, client *http.Client, prm *oauthex.ProtectedResourceMetadata) (*oauthex.AuthServerMeta, error) {
	if len(prm.AuthorizationServers) == 0 {
		return nil, errors.New("protected resource metadata has no authorization servers specified")
	}
	asURL := prm.AuthorizationServers[0]
	if err := checkSecureURL("authorization server", asURL); err != nil {
		return nil, err
	}
	asm, err := auth.GetAuthServerMetadata(ctx, asURL, client)
	if err != nil {
		return nil, fmt.Errorf("failed to get authorization server metadata: %w", err)
	}
	if asm == nil {
		// https://modelcontextprotocol.io/specification/2025-03-26/basic/authorization#fallbacks-for-servers-without-metadata-discovery
		asm = &oauthex.AuthServerMeta{
			Issuer:        asURL,
			TokenEndpoint: strings.TrimSuffix(asURL, "/") + "/token",
		}
	}
	if asm.TokenEndpoint == "" {
		return nil, fmt.Errorf("authorization server %s publishes no token_endpoint", redact.URL(asURL, false))
	}
	if err := checkSecureURL("token endpoint", asm.TokenEndpoint); err != nil {
		return nil, err
	}
	return asm, nil
}

// checkSecureURL returns an error unless raw is an absolute https URL, or an
// http URL whose host is loopback (netaddr.Loopback).
// what names the URL's role in the error message; the URL is shown with
// its user info replaced by the marker and without query or fragment
// (redact.URL).
func checkSecureURL(what, raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("oauthflow: invalid %s URL %q", what, redact.URL(raw, false))
	}
	switch strings.ToLower(u.Scheme) {
	case "https":
		if u.Host == "" {
			return fmt.Errorf("oauthflow: invalid %s URL %q: no host", what, redact.URL(raw, false))
		}
		return nil
	case "http":
		if netaddr.Loopback(u.Hostname()) {
			return nil
		}
	}
	return fmt.Errorf("oauthflow: refusing %s URL %q: https is required unless the host is loopback (127.0.0.0/8, ::1, localhost)", what, redact.URL(raw, false))
}

// scopesFromToken returns the scopes a token response granted (its "scope"
// member), or nil if it did not say.
func scopesFromToken(tok *oauth2.Token) []string {
	if s, ok := tok.Extra("scope").(string); ok {
		return strings.Fields(s)
	}
	return nil
}

// unionScopes returns a followed by the members of b not already present,
// so that step-up authorization keeps earlier grants (SEP-2350).
func unionScopes(a, b []string) []string {
	out := slices.Clone(a)
	for _, s := range b {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// truncate shortens s to at most n bytes for an error message.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
