package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/openprogram/mcpvisor/config"
	"github.com/openprogram/mcpvisor/events"
	"github.com/openprogram/mcpvisor/runtime"
	"github.com/openprogram/mcpvisor/status"
	"github.com/openprogram/mcpvisor/tools"
)

// tour runs the runtime on a temporary state dir whose config starts this
// very binary as an example MCP server (with its change tool), and prints
// what a host would see: tools, calls, prompts, resources, a list change,
// recovery from a crash, status and shutdown.
func tour(out io.Writer, logger *slog.Logger) int {
	if err := runTour(out, logger); err != nil {
		fmt.Fprintf(out, "\ntour failed: %v\n", err)
		return 1
	}
	return 0
}

func runTour(out io.Writer, logger *slog.Logger) (err error) {
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("finding this binary: %w", err)
	}
	dir, err := os.MkdirTemp("", "mcpvisor-demo-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)

	file := &config.File{}
	file.Put(config.Server{
		Name: "example", Type: config.TypeLocal, Command: []string{self, "serve", "-change-tool"},
		Env:     map[string]string{"DEMO_API_KEY": "demo-secret-value-1234"},
		Enabled: true, TimeoutSeconds: 10,
	})
	if err := (config.Store{Dir: func() (string, error) { return dir, nil }}).Save(file); err != nil {
		return fmt.Errorf("writing the demo config: %w", err)
	}
	fmt.Fprintf(out, "state dir: %s\nconfig:    %s (owner-only)\n\n", dir, filepath.Join(dir, config.FileName))

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	started := time.Now()
	rt, err := runtime.Start(ctx, runtime.Options{StateDir: dir, Logger: logger})
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "runtime.Start returned in %s (servers connect in the background)\n", time.Since(started).Round(time.Microsecond))
	defer func() {
		var pids []int
		for _, s := range rt.Status().Servers {
			if s.PID > 0 {
				pids = append(pids, s.PID)
			}
		}
		shutdownCtx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		defer cancel()
		began := time.Now()
		if stopErr := rt.Shutdown(shutdownCtx); stopErr != nil {
			err = errors.Join(err, stopErr)
			return
		}
		for _, pid := range pids {
			if processExists(pid) {
				err = errors.Join(err, fmt.Errorf("server process %d still exists after shutdown", pid))
				return
			}
		}
		fmt.Fprintf(out, "\nshut down in %s; server processes %v are gone\n", time.Since(began).Round(time.Millisecond), pids)
	}()

	if err := waitReady(ctx, rt, "example"); err != nil {
		return err
	}
	fmt.Fprintf(out, "server ready after %s\n\ntools:\n", time.Since(started).Round(time.Millisecond))
	width := 0
	for _, t := range rt.Tools() {
		width = max(width, len(t.Name))
	}
	for _, t := range rt.Tools() {
		fmt.Fprintf(out, "  %-*s  %s\n", width, t.Name, t.Description)
	}

	fmt.Fprintln(out, "\ncalls:")
	calls := []struct {
		tool string
		args map[string]any
	}{
		{"example__echo", map[string]any{"text": "hello from the host"}},
		{"example__add", map[string]any{"a": 2, "b": 40}},
		{"example__image", map[string]any{}},
		{"example__resource", map[string]any{}},
		{"example__fail", map[string]any{}},
	}
	for _, c := range calls {
		res, err := rt.CallTool(ctx, c.tool, c.args)
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "  %s(%s) -> %s\n", c.tool, compactJSON(c.args), describe(res))
	}
	short, cancelShort := context.WithTimeout(ctx, 100*time.Millisecond)
	_, err = rt.CallTool(short, "example__sleep", map[string]any{"ms": 5000})
	cancelShort()
	fmt.Fprintf(out, "  example__sleep({\"ms\":5000}) with a 100ms deadline -> error: %v\n", err)
	_, err = rt.CallTool(ctx, "nope__missing", nil)
	fmt.Fprintf(out, "  nope__missing -> error: %v (unknown tool: %v)\n", err, errors.Is(err, tools.ErrUnknownTool))

	if err := showPrompts(ctx, out, rt, "example"); err != nil {
		return err
	}
	if err := showResources(ctx, out, rt, "example"); err != nil {
		return err
	}
	if err := showListChanged(ctx, out, rt, "example"); err != nil {
		return err
	}
	if err := showRecovery(ctx, out, rt, "example"); err != nil {
		return err
	}

	fmt.Fprintln(out, "\nstatus:")
	printStatus(out, rt.Status())
	return nil
}

// showRecovery kills the server's process the way a crash would, prints
// the events of its recovery as they arrive (Runtime.Subscribe) and waits
// for the runtime to bring it back on its own.
func showRecovery(ctx context.Context, out io.Writer, rt *runtime.Runtime, name string) error {
	before, _ := serverStatus(rt, name)
	sub := rt.Subscribe(events.SubscribeOptions{Server: name})
	defer sub.Close()
	if err := killProcess(before.PID); err != nil {
		return fmt.Errorf("killing the example server: %w", err)
	}
	fmt.Fprintf(out, "\nrecovery:\n  killed the server process (pid %d) as a crash would\n", before.PID)
	var (
		sawBackoff, sawEvent bool
		back                 time.Time // when status said it is back
	)
	for {
		// An event is printed the moment it comes; between events (at
		// least every 10 ms) the status says what the tour checks.
		wait, cancel := context.WithTimeout(ctx, 10*time.Millisecond)
		e, err := sub.Next(wait)
		cancel()
		switch {
		case err == nil:
			sawEvent = true
			fmt.Fprintf(out, "  event %s\n", e)
		case ctx.Err() != nil:
			st, _ := serverStatus(rt, name)
			return fmt.Errorf("waiting for %q to recover: %w (status %+v)", name, ctx.Err(), st)
		case !errors.Is(err, context.DeadlineExceeded):
			return fmt.Errorf("reading the events of %q: %w", name, err)
		}
		st, _ := serverStatus(rt, name)
		if st.State == status.Backoff && !sawBackoff {
			sawBackoff = true
			fmt.Fprintf(out, "  state %s: tools unregistered (%d left), retry at %s\n", st.State, len(rt.Tools()), st.NextRetryAt.Format("15:04:05.000"))
		}
		if back.IsZero() && st.State == status.Ready && st.PID != before.PID {
			back = time.Now()
			fmt.Fprintf(out, "  back: state %s, pid %d, restarts=%d, %d tools\n", st.State, st.PID, st.Restarts, len(rt.Tools()))
		}
		// Once back, the tour goes on when the new session's tools are
		// registered (ready comes just before them; the tools_changed of
		// the loss does not count), or at once when no event came at all,
		// or after a second.
		if !back.IsZero() && (len(rt.Registry().ServerTools(name)) > 0 || !sawEvent || time.Since(back) > time.Second) {
			res, err := rt.CallTool(ctx, name+"__echo", map[string]any{"text": "still here"})
			if err != nil {
				return err
			}
			fmt.Fprintf(out, "  %s__echo -> %s\n", name, describe(res))
			return nil
		}
	}
}

func serverStatus(rt *runtime.Runtime, name string) (status.Server, bool) {
	for _, s := range rt.Status().Servers {
		if s.Name == name {
			return s, true
		}
	}
	return status.Server{}, false
}

// waitReady waits for a server to leave "starting", watching the tool
// registry rather than sleeping in a loop.
func waitReady(ctx context.Context, rt *runtime.Runtime, name string) error {
	sub := rt.Registry().Subscribe()
	defer sub.Close()
	tick := time.NewTicker(50 * time.Millisecond) // status changes without tool changes (failures) are polled
	defer tick.Stop()
	for {
		for _, s := range rt.Status().Servers {
			if s.Name != name {
				continue
			}
			switch s.State {
			case status.Ready:
				return nil
			case status.Failed:
				return fmt.Errorf("server %q failed: %s", name, s.Error)
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for %q: %w", name, ctx.Err())
		case <-sub.C:
		case <-tick.C:
		}
	}
}

func describe(res tools.Result) string {
	var parts []string
	for _, c := range res.Content {
		switch c.Type {
		case tools.ContentImage, tools.ContentAudio:
			parts = append(parts, fmt.Sprintf("%s %s, %d bytes", c.Type, c.MIMEType, len(c.Data)))
		default:
			parts = append(parts, fmt.Sprintf("%q", c.Text))
		}
	}
	s := strings.Join(parts, ", ")
	if res.IsError {
		s += "  [is_error]"
	}
	return s
}

func printStatus(out io.Writer, st runtime.Status) {
	tw := tabwriter.NewWriter(out, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "  NAME\tSTATE\tREADY\tTOOLS\tPID\tERROR")
	for _, s := range st.Servers {
		tools := fmt.Sprint(s.ToolCount)
		if s.ToolsFiltered > 0 {
			tools += fmt.Sprintf(" (%d filtered)", s.ToolsFiltered)
		}
		fmt.Fprintf(tw, "  %s\t%s\t%v\t%s\t%d\t%s\n", s.Name, s.State, s.Ready, tools, s.PID, s.Error)
	}
	tw.Flush()
}

func compactJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return "?"
	}
	return string(b)
}
