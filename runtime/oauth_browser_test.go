package runtime

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"sync"
	"testing"
	"time"
)

// browser stands in for the user's browser: it follows the authorization
// URL to the authorization server's redirect and delivers that to the
// callback listener, as a browser would. opened counts logins.
type browser struct {
	mu     sync.Mutex
	opened []string
	// before, if set, runs with the callback URL before the real redirect
	// is delivered (to send a forged one first, say).
	before func(callback *url.URL)
	// stay, if set, makes the browser never come back: the user walked away.
	stay bool
	// changed is closed (and replaced) at each open, for awaitOpens.
	changed chan struct{}
}

func (b *browser) open(ctx context.Context, authURL string) error {
	b.mu.Lock()
	b.opened = append(b.opened, authURL)
	if b.changed != nil {
		close(b.changed)
		b.changed = nil
	}
	stay, before := b.stay, b.before
	b.mu.Unlock()
	if stay {
		return nil
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, authURL, nil)
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	loc, err := url.Parse(resp.Header.Get("Location"))
	if err != nil || resp.StatusCode != http.StatusFound {
		return errors.New("no redirect from the authorization server")
	}
	if before != nil {
		before(loc)
	}
	resp, err = client.Get(loc.String())
	if err != nil {
		return err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return nil
}

// awaitOpens waits until the browser was opened n times in all.
func (b *browser) awaitOpens(t *testing.T, n int) {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		b.mu.Lock()
		if len(b.opened) >= n {
			b.mu.Unlock()
			return
		}
		if b.changed == nil {
			b.changed = make(chan struct{})
		}
		changed := b.changed
		b.mu.Unlock()
		select {
		case <-changed:
		case <-timeout:
			t.Fatalf("the browser opened %d times in 10s, want %d", b.opens(), n)
		}
	}
}

func (b *browser) opens() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.opened)
}

func (b *browser) last() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.opened) == 0 {
		return ""
	}
	return b.opened[len(b.opened)-1]
}
