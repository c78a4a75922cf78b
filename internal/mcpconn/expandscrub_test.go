package mcpconn

import (
	"context"
	"errors"
	"strconv"
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

// A value that fails validation after expanding may be quoted (a cwd is);
// when its variable is also a secret field's, the expanded value is
// scrubbed from the error, in its escaped forms too, though the
// unexpanded server held only a reference.
func TestDialExpandErrorScrubsExpandedValue(t *testing.T) {
	const secret = `relative"expanded\secret-5e1f`
	srv := config.Server{Name: "x", Type: config.TypeLocal, Enabled: true, Command: []string{"x"},
		Cwd: "${TOK}", Env: map[string]string{"T": "Bearer ${TOK}"}}
	lookup := func(k string) (string, bool) { return secret, k == "TOK" }
	_, err := Dial(context.Background(), Options{Server: srv, LookupEnv: lookup})
	var fe *config.FieldError
	if err == nil || !errors.As(err, &fe) || fe.Field != "cwd" || !strings.Contains(err.Error(), "[redacted]") {
		t.Fatalf("Dial: %v", err)
	}
	for _, form := range []string{secret, strconv.Quote(secret), "relative", "secret-5e1f"} {
		if strings.Contains(err.Error(), form) {
			t.Errorf("the error shows %q: %v", form, err)
		}
	}
}
