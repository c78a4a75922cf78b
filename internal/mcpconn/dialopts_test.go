package mcpconn

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/openprogram/mcpvisor/config"
)

// testDial is Dial with the options the runtime always resolves filled in
// where a test leaves them out: Dial itself has no defaults of its own.
func testDial(ctx context.Context, opts Options) (*Conn, error) {
	if opts.Grace == 0 {
		opts.Grace = 2 * time.Second
	}
	if opts.Client == nil {
		opts.Client = &mcp.Implementation{Name: "mcpconn-test"}
	}
	return Dial(ctx, opts)
}

// TestDialRequiresResolvedOptions: a stop grace or client name left at
// zero is the caller's bug; Dial says which one instead of defaulting it
// a second time, and starts nothing.
func TestDialRequiresResolvedOptions(t *testing.T) {
	srv := config.Server{Name: "ex", Type: config.TypeLocal, Command: []string{"/nonexistent/cmd"}, Enabled: true}
	client := &mcp.Implementation{Name: "test"}
	for _, tc := range []struct {
		name string
		opts Options
		want error
	}{
		{"no grace", Options{Server: srv, Client: client}, errGraceUnset},
		{"no client", Options{Server: srv, Grace: time.Second}, errClientUnset},
	} {
		_, err := Dial(context.Background(), tc.opts)
		if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), "must be set") {
			t.Errorf("%s: Dial = %v, want %v", tc.name, err, tc.want)
		}
	}
}
