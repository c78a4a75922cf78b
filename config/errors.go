package config

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// FieldError reports a problem with one field of a server configuration:
// what is invalid in an entry, in a create body or in a PATCH body. The
// management API turns it into a 400 answer naming the field.
//
// Message never contains a secret value; field paths may contain env keys
// and header names, which are not secrets.
type FieldError struct {
	// Server is the name of the server the field belongs to, or "" when
	// unknown or when the name itself is the problem.
	Server string
	// Field is the JSON path of the field inside the entry, such as
	// "command", "auth.kind", "env.PATH" or `headers["bad name"]`; "name"
	// for the server name; "" for the body or entry as a whole.
	Field string
	// Message says what is wrong, for a human.
	Message string
}

// Error formats e as `servers.NAME.FIELD: MESSAGE`, leaving out the parts
// that are empty.
func (e *FieldError) Error() string {
	var b strings.Builder
	if e.Server != "" {
		b.WriteString("servers.")
		b.WriteString(e.Server)
		if e.Field != "" {
			b.WriteByte('.')
		}
	}
	b.WriteString(e.Field)
	if b.Len() > 0 {
		b.WriteString(": ")
	}
	b.WriteString(e.Message)
	return b.String()
}

// ErrInvalid is matched (with errors.Is) by every *FieldError: some field
// of a configuration is invalid.
var ErrInvalid = errors.New("invalid configuration")

// Is makes every FieldError match ErrInvalid.
func (e *FieldError) Is(target error) bool { return target == ErrInvalid }

func fieldErr(field, msg string) *FieldError {
	return &FieldError{Field: field, Message: msg}
}

// inServer sets the server name of e when the name is valid; an invalid
// name is reported on its own and would only garble the path.
func (e *FieldError) inServer(name string) *FieldError {
	if e != nil && e.Server == "" && validName(name) {
		e.Server = name
	}
	return e
}

// ErrUnparsable is matched (with errors.Is) by every error reporting that
// the configuration file on disk does not parse: the *ParseError from
// [Store.Load], and the refusal of [Store.Save] to overwrite such a file.
var ErrUnparsable = errors.New("configuration file does not parse")

// ParseError reports that the configuration file at Path does not parse,
// or is too large to be read (see [Store.Load]).
// It matches [ErrUnparsable], and unwraps to the cause from [Parse].
type ParseError struct {
	Path string
	Err  error

	// refused marks the error of a Save that would have overwritten the
	// file; unusable one about the file's size rather than its JSON. They
	// change only the wording.
	refused, unusable bool
}

func (e *ParseError) Error() string {
	problem := "it does not parse"
	if e.unusable {
		problem = "it cannot be used"
	}
	if e.refused {
		return fmt.Sprintf("refusing to overwrite %s: %s (fix or remove it first): %v", e.Path, problem, e.Err)
	}
	if e.unusable {
		return fmt.Sprintf("%s cannot be used: %v", e.Path, e.Err)
	}
	return fmt.Sprintf("%s does not parse: %v", e.Path, e.Err)
}

// Unwrap returns the cause.
func (e *ParseError) Unwrap() error { return e.Err }

// Is reports whether target is ErrUnparsable.
func (e *ParseError) Is(target error) bool { return target == ErrUnparsable }

// maxQuoted bounds how much of a user-supplied string an error quotes, so a
// pathological input cannot produce a pathological message.
const maxQuoted = 64

// quote quotes s for an error message, cut to maxQuoted bytes. It is only
// for values that are not secrets (names, keys, types, kinds).
func quote(s string) string {
	if len(s) > maxQuoted {
		return strconv.Quote(s[:maxQuoted]) + "..."
	}
	return strconv.Quote(s)
}

// keyPath names the entry key of the map or object at prefix:
// "env.PATH" for plain keys, `env["A=B"]` for anything else.
func keyPath(prefix, key string) string {
	plain := key != "" && len(key) <= maxQuoted
	for i := 0; plain && i < len(key); i++ {
		plain = isNameByte(key[i])
	}
	if plain {
		if prefix == "" {
			return key
		}
		return prefix + "." + key
	}
	return prefix + "[" + quote(key) + "]"
}
