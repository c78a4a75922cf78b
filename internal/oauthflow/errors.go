package oauthflow

import (
	"context"
	"errors"
	"strings"

	"golang.org/x/oauth2"
)

// cleanError is an error whose text was scrubbed of secrets; it still
// matches the sentinels the original matched.
type cleanError struct {
	msg    string
	causes []error
}

func (e *cleanError) Error() string   { return e.msg }
func (e *cleanError) Unwrap() []error { return e.causes }

// sentinels are what callers match a login error with.
var sentinels = []error{ErrNeedsReauth, ErrLoginCancelled, context.Canceled, context.DeadlineExceeded}

// clean scrubs an error leaving Authorize: the go-sdk wraps token endpoint
// answers (oauth2.RetrieveError, whose text includes the response body)
// and registration failures as they are, and an authorization server may
// echo the code, the verifier or the client secret it was sent.
func (h *AuthCode) clean(err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	var re *oauth2.RetrieveError
	if errors.As(err, &re) {
		// Keep the text before the endpoint's own, and its error code.
		if i := strings.Index(msg, re.Error()); i >= 0 {
			msg = msg[:i] + safeError(re, h.cfg.Scrubber).Error() + msg[i+len(re.Error()):]
		}
	}
	msg = h.cfg.Scrubber.String(msg)
	ce := &cleanError{msg: msg}
	for _, s := range sentinels {
		if errors.Is(err, s) {
			ce.causes = append(ce.causes, s)
		}
	}
	return ce
}
