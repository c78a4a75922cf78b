package config

import (
	"errors"
	"fmt"
	"testing"
)

// TestFieldErrorIsErrInvalid: a validation error matches ErrInvalid, even
// wrapped, and still gives its field through errors.As.
func TestFieldErrorIsErrInvalid(t *testing.T) {
	err := fmt.Errorf("adding: %w", Server{Name: "x", Type: TypeLocal}.Validate())
	var fe *FieldError
	if !errors.Is(err, ErrInvalid) || !errors.As(err, &fe) || fe.Field != "command" {
		t.Fatalf("%v: want it to match ErrInvalid and be a FieldError on command", err)
	}
	if errors.Is(fmt.Errorf("saving: %w", ErrUnparsable), ErrInvalid) {
		t.Error("an unparsable file matches ErrInvalid")
	}
}
