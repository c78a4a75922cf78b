package mcpconn

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/openprogram/mcpvisor/config"
)

// A Dial whose expansion fails says so without the name a secret was
// pasted as, and stays a *config.FieldError naming the field.
func TestDialExpandErrorScrubbed(t *testing.T) {
	const pasted = "ghp_PastedInBraces0123456789"
	srv := config.Server{Name: "x", Type: config.TypeLocal, Enabled: true, Command: []string{"x"},
		Env: map[string]string{"T": "Bearer ${" + pasted + "}"}}
	_, err := Dial(context.Background(), Options{Server: srv, LookupEnv: func(string) (string, bool) { return "", false }})
	var fe *config.FieldError
	if err == nil || strings.Contains(err.Error(), pasted) || !errors.As(err, &fe) || fe.Field != "env.T" {
		t.Fatalf("Dial: %v", err)
	}
	// A message that quotes a secret (as a validator may) is scrubbed.
	err = scrubExpandError(&config.FieldError{Server: "x", Field: "cwd", Message: "bad " + pasted}, srv.Secrets())
	if strings.Contains(err.Error(), pasted) || !errors.As(err, &fe) || fe.Field != "cwd" {
		t.Fatalf("scrubExpandError: %v", err)
	}
}
