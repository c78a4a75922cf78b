package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// browser plays the user's browser in a login: the suite's authorization
// servers approve at once and redirect to the redirect URI, which is the
// runtime's own loopback callback listener.
var browser = &http.Client{
	Timeout: 10 * time.Second,
	CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse
	},
}

// openURL is the runtime's Options.OpenURL: it GETs the authorization URL
// without following the redirect, then GETs the redirect's Location, so
// that the code reaches the runtime through its callback listener exactly
// as a browser would bring it.
func openURL(ctx context.Context, authURL string) error {
	resp, err := get(ctx, authURL)
	if err != nil {
		return fmt.Errorf("opening the authorization URL: %w", err)
	}
	loc, err := resp.Location()
	if resp.StatusCode < 300 || resp.StatusCode > 399 || err != nil {
		return fmt.Errorf("opening the authorization URL: got %s, want a redirect to the callback%s", resp.Status, bodyHint(resp))
	}
	cb, err := get(ctx, loc.String())
	if err != nil {
		return fmt.Errorf("following the redirect to the callback: %w", err)
	}
	if cb.StatusCode >= 300 {
		return fmt.Errorf("the callback answered %s%s", cb.Status, bodyHint(cb))
	}
	return nil
}

// response is what openURL keeps of an answer: the body is read and
// closed at once.
type response struct {
	*http.Response
	body string
}

func get(ctx context.Context, url string) (response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return response{}, err
	}
	resp, err := browser.Do(req)
	if err != nil {
		return response{}, err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	return response{Response: resp, body: string(body)}, nil
}

func bodyHint(r response) string {
	if b := strings.TrimSpace(r.body); b != "" {
		return fmt.Sprintf(": %.200s", b)
	}
	return ""
}
