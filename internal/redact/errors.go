package redact

import (
	"errors"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// Error returns err with every known secret removed, from its text and
// from everything it unwraps to, and its text bounded
// ([Scrubber.ErrorString]). Any link of err's chain may hold a secret
// its text does not show (a *url.Error's request, a server's JSON-RPC
// error echoing a header, the SDK's copy of an error body), so the result
// unwraps to none of them; it unwraps only to:
//   - those of keep that err matches (errors.Is), so that callers still
//     tell its outcome: pass every sentinel error a caller matches;
//   - a copy of the first *jsonrpc.Error in err's chain, with its Message
//     scrubbed and bounded and its Data dropped, so that a server's JSON-RPC error is
//     still told as such (errors.As) with its code.
//
// A nil err stays nil.
func (s *Scrubber) Error(err error, keep ...error) error {
	if err == nil {
		return nil
	}
	return s.ErrorText(err.Error(), err, keep...)
}

// MaxErrorBytes bounds the text of an error that leaves a connection (see
// [Scrubber.ErrorString]): a server's megabyte error message must not
// become a megabyte status entry, event field or log record.
const MaxErrorBytes = 4096

// ErrorTruncated ends an error text that [Scrubber.ErrorString] cut.
const ErrorTruncated = " …[error truncated]"

// maxScrubbedErrorBytes bounds what of an error's text is scrubbed at all
// (64 KiB, far past MaxErrorBytes): a validator's error can run to
// megabytes, and scrubbing all of it only to keep 4 KiB would cost time
// and memory a server chooses.
const maxScrubbedErrorBytes = 64 << 10

// ErrorString is an error's text as it may leave a connection: scrubbed,
// then cut to MaxErrorBytes on a UTF-8 boundary and marked with
// ErrorTruncated if it is longer. A text past maxScrubbedErrorBytes is cut
// to that first: [Scrubber.Cut] drops the beginning of a secret the cut
// split, so the scrub that follows sees no part of a secret it cannot
// recognise; the text is then marked truncated whatever its length after
// scrubbing.
func (s *Scrubber) ErrorString(text string) string {
	cut := len(text) > maxScrubbedErrorBytes
	if cut {
		text = s.Cut(text, maxScrubbedErrorBytes)
	}
	text = s.String(text)
	if cut || len(text) > MaxErrorBytes {
		text = s.Cut(text, MaxErrorBytes) + ErrorTruncated
	}
	return text
}

// BoundError is [Scrubber.ErrorString] for a text that holds none of our
// secrets but may be as long as its sender likes (an authorization
// server's error description): cut, not scrubbed.
func BoundError(text string) string {
	return (*Scrubber)(nil).ErrorString(text)
}

// ErrorText is [Scrubber.Error] for a caller that rewrote err's text
// first (to drop a response body, say): the result says text, scrubbed
// and bounded ([Scrubber.ErrorString]), and keeps of err's chain what
// Error keeps.
func (s *Scrubber) ErrorText(text string, err error, keep ...error) error {
	ce := &scrubbedError{msg: s.ErrorString(text)}
	for _, k := range keep {
		if errors.Is(err, k) {
			ce.causes = append(ce.causes, k)
		}
	}
	if rpc := (*jsonrpc.Error)(nil); errors.As(err, &rpc) {
		ce.causes = append(ce.causes, &jsonrpc.Error{Code: rpc.Code, Message: s.ErrorString(rpc.Message)})
	}
	return ce
}

// scrubbedError is an error whose text had secrets removed, and whose
// chain holds only what [Scrubber.Error] kept.
type scrubbedError struct {
	msg    string
	causes []error
}

func (e *scrubbedError) Error() string   { return e.msg }
func (e *scrubbedError) Unwrap() []error { return e.causes }
