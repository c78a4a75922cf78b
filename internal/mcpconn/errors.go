package mcpconn

import "strings"

// redactedError is an error whose text had secrets removed. It keeps the
// original for errors.Is/As, so callers still match sentinels and causes.
type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }

// redact removes every secret from err's text. A server may echo what it
// was given (an initialize error quoting its API key); such an error
// reaches status, logs and the host, so it is scrubbed like stderr is.
func redact(r *strings.Replacer, err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	if clean := r.Replace(msg); clean != msg {
		return &redactedError{msg: clean, err: err}
	}
	return err
}
