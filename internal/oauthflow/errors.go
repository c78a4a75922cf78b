package oauthflow

import (
	"context"
	"errors"
	"slices"
	"strings"

	"golang.org/x/oauth2"
)

// sentinels are what callers match a login error with.
var sentinels = []error{ErrNeedsReauth, ErrLoginNotTried, ErrLoginCancelled, ErrPrivateOAuthHost, context.Canceled, context.DeadlineExceeded}

// Sentinels returns the errors a caller tells this package's errors by
// (errors.Is): every error of this package that leaves it scrubbed
// (redact.Scrubber.Error) keeps these of its causes, and a caller that
// scrubs them again must keep them too.
func Sentinels() []error { return slices.Clone(sentinels) }

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
	return h.cfg.Scrubber.ErrorText(msg, err, sentinels...)
}
