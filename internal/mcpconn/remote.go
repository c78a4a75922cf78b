package mcpconn

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/openprogram/mcpvisor/config"
	"github.com/openprogram/mcpvisor/internal/oauthflow"
	"github.com/openprogram/mcpvisor/internal/redact"
)

// remoteParts is the transport of an http or sse server and what it owns.
type remoteParts struct {
	transport mcp.Transport
	conns     *http.Transport // the connection's own sockets
	oauth     auth.OAuthHandler
	oauthHTTP *http.Client // discovery, registration, tokens (see oauthTransport)
	closeAuth func()       // stops a login's background refresh
	cut       func()       // fails every request from now on (see cutTransport)
}

// remoteTransport returns the go-sdk transport of an http (Streamable
// HTTP) or sse (legacy SSE) server, with its headers and bearer token on
// every request to its origin and no request to any other (see
// originGuard), and the OAuth handler of an oauth or client_credentials
// server. The http.Transport is the connection's own, so that closing the
// connection also closes its idle sockets. fatal ends the connection with
// an error the SDK cannot report (a refused refresh, an answer too large).
func remoteTransport(owner context.Context, opts Options, scrub *redact.Scrubber, login oauthflow.Login, fatal func(error), listens *listenTracker) (*remoteParts, error) {
	srv := opts.Server
	u, err := url.Parse(srv.URL)
	if ue := (*url.Error)(nil); errors.As(err, &ue) {
		return nil, fmt.Errorf("parsing url: %w", ue.Err) // the URL itself may hold secrets
	} else if err != nil {
		return nil, fmt.Errorf("parsing url: %w", err)
	}
	mark := opts.RequestMark
	if mark == "" {
		mark = "mcpvisor"
	}
	base := http.DefaultTransport.(*http.Transport)
	if opts.baseTransport != nil {
		base = opts.baseTransport
	}
	base = base.Clone()
	r := &remoteParts{conns: base, closeAuth: func() {}}
	r.oauthHTTP = &http.Client{Transport: markTransport{base: oauthTransport(base, srv.URL, opts.AllowPrivateOAuthHosts, nil), mark: mark}}
	headers := requestHeaders(srv)
	headers.Set(RequestMarkHeader, mark)
	to := origin(u)
	client := &http.Client{
		Transport:     boundedAnswers{base: originGuard{base: base, url: u, origin: to, headers: headers, refused: fatal}, tooLarge: fatal},
		CheckRedirect: sameOriginRedirects(to, fatal),
	}
	if srv.Auth != nil {
		switch srv.Auth.Kind {
		case config.AuthOAuth:
			err = r.authCode(owner, opts, scrub, login, fatal)
		case config.AuthClientCredentials:
			err = r.clientCredentials(srv, scrub)
		}
		if err != nil {
			return nil, err
		}
	}
	client.Transport, r.cut = newCutTransport(client.Transport)
	if opts.answeredGrace > 0 {
		client.Transport.(*cutTransport).grace = opts.answeredGrace
	}
	switch srv.Type {
	case config.TypeHTTP:
		// Its subscription streams are POST responses (see listenTracker).
		client.Transport = listenRoundTripper{base: client.Transport, tracker: listens, oauth: r.oauth != nil}
		var oauth auth.OAuthHandler
		if r.oauth != nil {
			oauth = listenAuth{OAuthHandler: r.oauth, tracker: listens}
		}
		r.transport = &mcp.StreamableClientTransport{Endpoint: srv.URL, HTTPClient: client, OAuthHandler: oauth}
	case config.TypeSSE:
		r.transport = &mcp.SSEClientTransport{Endpoint: srv.URL, HTTPClient: client}
	default:
		return nil, fmt.Errorf("transport %q: %w", srv.Type, ErrUnsupported)
	}
	return r, nil
}

func (r *remoteParts) authCode(owner context.Context, opts Options, scrub *redact.Scrubber, login oauthflow.Login, onRefused func(error)) error {
	srv := opts.Server
	h, err := oauthflow.NewAuthCode(oauthflow.AuthCodeConfig{
		Server:            srv.Name,
		URL:               srv.URL,
		ClientID:          srv.Auth.ClientID,
		ClientSecret:      srv.Auth.ClientSecret,
		ClientMetadataURL: srv.Auth.ClientMetadataURL,
		Scopes:            srv.Auth.Scopes,
		Store:             opts.Tokens,
		Life:              owner,
		UserAction:        opts.UserAction,
		Login:             login,
		HTTPClient:        r.oauthHTTP,
		Logger:            opts.Logger,
		Emit:              opts.Emit,
		Go:                opts.Go,
		OnRefused:         onRefused,
		Scrubber:          scrub,
	})
	if err != nil {
		return err
	}
	r.oauth, r.closeAuth = h, h.Close
	return nil
}

func (r *remoteParts) clientCredentials(srv config.Server, scrub *redact.Scrubber) error {
	cc := oauthflow.ClientCredentials{
		ClientID:     srv.Auth.ClientID,
		ClientSecret: srv.Auth.ClientSecret,
		Method:       srv.Auth.TokenAuthMethod(),
		Algorithm:    srv.Auth.SigningAlgorithm(),
		Scopes:       srv.Auth.Scopes,
		HTTPClient:   r.oauthHTTP,
		Scrubber:     scrub,
	}
	if srv.Auth.PrivateKey != "" {
		// Parsed once, when the configuration was decoded.
		if cc.PrivateKey = srv.Auth.Signer(); cc.PrivateKey == nil {
			return errors.New("auth.private_key: not a valid private key (validate the configuration)")
		}
	}
	h, err := oauthflow.NewClientCredentialsHandler(cc)
	if err != nil {
		return err
	}
	r.oauth = h
	return nil
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

// lifetimeTransport connects its inner transport with ctx instead of the
// caller's: see Dial.
type lifetimeTransport struct {
	inner mcp.Transport
	ctx   context.Context
}

func (t lifetimeTransport) Connect(context.Context) (mcp.Connection, error) {
	return t.inner.Connect(t.ctx)
}
