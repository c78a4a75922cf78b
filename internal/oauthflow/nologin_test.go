package oauthflow

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
)

// A background request (a keepalive probe) refused with a 401 or 403
// neither opens a login nor waits behind one in progress: Authorize
// fails at once with ErrLoginNotTried, while the login goes on.
func TestAuthorizeWithoutLoginFailsFast(t *testing.T) {
	var logins atomic.Int32
	h := tokAuthCodeWith(t, tokStore(t), func(cfg *AuthCodeConfig) {
		cfg.Login = func(context.Context, LoginRequest) (*auth.AuthorizationResult, error) {
			logins.Add(1)
			return nil, errors.New("no login in this test")
		}
	})
	// A step-up login of another request holds the login lock.
	h.authorizing.Lock()
	defer h.authorizing.Unlock()
	for _, code := range []int{http.StatusUnauthorized, http.StatusForbidden} {
		req, _ := http.NewRequest(http.MethodPost, tokServerURL, nil)
		resp := &http.Response{StatusCode: code, Header: http.Header{}, Body: io.NopCloser(strings.NewReader(""))}
		got := make(chan error, 1)
		go func() { got <- h.Authorize(WithoutLogin(context.Background()), req, resp) }()
		select {
		case err := <-got:
			if !errors.Is(err, ErrLoginNotTried) {
				t.Errorf("%d: Authorize = %v, want ErrLoginNotTried", code, err)
			}
		case <-time.After(2 * time.Second):
			// Unlocking lets it through; the deferred Unlock must not run twice.
			t.Fatalf("%d: Authorize waited behind the login in progress", code)
		}
	}
	if n := logins.Load(); n != 0 {
		t.Errorf("%d logins started for background requests, want none", n)
	}
}
