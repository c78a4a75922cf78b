package runtime

import (
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openprogram/mcpvisor/config"
)

// TestEverySentinelHasItsStatus: each exported Err* of the package,
// wrapped as the runtime returns it, has its HTTP status in toAPIError;
// a sentinel added without a row here fails the test, so none falls
// through to 500 by being forgotten.
func TestEverySentinelHasItsStatus(t *testing.T) {
	wrap := func(err error) error { return fmt.Errorf("doing something on %q: %w", "x", err) }
	table := map[string]struct {
		sentinel, err error
		code          int
	}{
		"ErrUnknownServer":        {ErrUnknownServer, wrap(ErrUnknownServer), http.StatusNotFound},
		"ErrServerExists":         {ErrServerExists, wrap(ErrServerExists), http.StatusConflict},
		"ErrRestartFailed":        {ErrRestartFailed, wrap(ErrRestartFailed), http.StatusBadGateway},
		"ErrShuttingDown":         {ErrShuttingDown, wrap(ErrShuttingDown), http.StatusServiceUnavailable},
		"ErrDisabled":             {ErrDisabled, wrap(ErrDisabled), http.StatusConflict},
		"ErrServerDied":           {ErrServerDied, wrap(ErrServerDied), http.StatusServiceUnavailable},
		"ErrSuperseded":           {ErrSuperseded, wrap(ErrSuperseded), http.StatusConflict},
		"ErrProcessesLinger":      {ErrProcessesLinger, wrap(ErrProcessesLinger), http.StatusGatewayTimeout},
		"ErrNeedsLogin":           {ErrNeedsLogin, fmt.Errorf("calling %q: %w: server %q %w", "x__y", ErrUnknownTool, "x", errNeedsLoginState), http.StatusNotFound},
		"ErrUnknownTool":          {ErrUnknownTool, wrap(ErrUnknownTool), http.StatusNotFound},
		"ErrNotReady":             {ErrNotReady, wrap(ErrNotReady), http.StatusServiceUnavailable},
		"ErrSessionClosed":        {ErrSessionClosed, wrap(ErrSessionClosed), http.StatusBadGateway},
		"ErrCallTimeout":          {ErrCallTimeout, wrap(ErrCallTimeout), http.StatusGatewayTimeout},
		"ErrResponseTooLarge":     {ErrResponseTooLarge, wrap(ErrResponseTooLarge), http.StatusBadGateway},
		"ErrUnresponsive":         {ErrUnresponsive, wrap(ErrUnresponsive), http.StatusGatewayTimeout},
		"ErrUnknownPrompt":        {ErrUnknownPrompt, wrap(ErrUnknownPrompt), http.StatusNotFound},
		"ErrInvalidConfig":        {ErrInvalidConfig, &config.FieldError{Server: "x", Field: "command", Message: "is required"}, http.StatusBadRequest},
		"ErrConfigUnparsable":     {ErrConfigUnparsable, wrap(&config.ParseError{Path: "/p", Err: errors.New("bad")}), http.StatusConflict},
		"ErrConfigTooLarge":       {ErrConfigTooLarge, wrap(ErrConfigTooLarge), http.StatusRequestEntityTooLarge},
		"ErrNotDeclared":          {ErrNotDeclared, wrap(ErrNotDeclared), http.StatusConflict},
		"ErrBadResourceURI":       {ErrBadResourceURI, wrap(fmt.Errorf("%w: empty", ErrBadResourceURI)), http.StatusBadRequest},
		"ErrBadCompletionRef":     {ErrBadCompletionRef, wrap(ErrBadCompletionRef), http.StatusBadRequest},
		"ErrTooManySubscriptions": {ErrTooManySubscriptions, wrap(ErrTooManySubscriptions), http.StatusTooManyRequests},
		"ErrUnknownSubscription":  {ErrUnknownSubscription, wrap(ErrUnknownSubscription), http.StatusNotFound},
	}
	// Sentinels that are never the error of a request.
	notAnswers := map[string]string{"ErrSubscriptionClosed": "a subscription's Err after its Close", "ErrInvalidOptions": "Start's refusal of its Options"}

	for name, row := range table {
		if !errors.Is(row.err, row.sentinel) {
			t.Errorf("%s: the row's error %v does not match it", name, row.err)
		}
		if e := toAPIError(row.err); e.Status != row.code || e.Message == "" {
			t.Errorf("%s: %d %q, want %d", name, e.Status, e.Message, row.code)
		}
	}
	for _, name := range exportedSentinels(t) {
		if _, ok := table[name]; !ok && notAnswers[name] == "" {
			t.Errorf("%s has no row: which HTTP status does it answer?", name)
		}
	}
}

// exportedSentinels are the names of the package's exported package-level
// Err* variables, read from its source.
func exportedSentinels(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	fset := token.NewFileSet()
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, f, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range file.Decls {
			gen, ok := decl.(*ast.GenDecl)
			if !ok || gen.Tok != token.VAR {
				continue
			}
			for _, spec := range gen.Specs {
				for _, id := range spec.(*ast.ValueSpec).Names {
					if strings.HasPrefix(id.Name, "Err") && id.IsExported() {
						names = append(names, id.Name)
					}
				}
			}
		}
	}
	if len(names) < 20 {
		t.Fatalf("found %d sentinels (%v): the source was not read", len(names), names)
	}
	return names
}
