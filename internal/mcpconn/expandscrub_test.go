package mcpconn

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/openprogram/mcpvisor/config"
	"github.com/openprogram/mcpvisor/internal/redact"
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
	err = scrubFieldError(redact.New(srv.Secrets()...), &config.FieldError{Server: "x", Field: "cwd", Message: "bad " + pasted})
	if strings.Contains(err.Error(), pasted) || !errors.As(err, &fe) || fe.Field != "cwd" {
		t.Fatalf("scrubFieldError: %v", err)
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

// A cwd that expands to a missing directory is reported after the
// expansion validated, quoting the expanded path: when its variable is
// also a secret field's, the connection's scrubber takes the value out,
// and the error is still a *config.FieldError on cwd.
func TestDialMissingCwdScrubsExpandedValue(t *testing.T) {
	const secret = "cwd-secret-9c2d41"
	srv := config.Server{Name: "x", Type: config.TypeLocal, Enabled: true, Command: []string{"x"},
		Cwd: "/nonexistent-mcpvisor/${TOK}", Env: map[string]string{"T": "${TOK}"}}
	lookup := func(k string) (string, bool) { return secret, k == "TOK" }
	_, err := Dial(context.Background(), Options{Server: srv, LookupEnv: lookup, Grace: time.Second, Client: &mcp.Implementation{Name: "t"}})
	var fe *config.FieldError
	if err == nil || !errors.As(err, &fe) || fe.Field != "cwd" || !strings.Contains(err.Error(), "does not exist") {
		t.Fatalf("Dial: %v", err)
	}
	if strings.Contains(err.Error(), secret) || strings.Contains(fe.Message, secret) {
		t.Errorf("the error shows the expanded value: %v", err)
	}
}
