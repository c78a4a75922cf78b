package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/openprogram/mcpvisor/runtime"
)

// runServe runs the runtime on a state dir until SIGINT or SIGTERM.
func runServe(args []string) int {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	stateDir := fs.String("state-dir", "", "directory holding mcp_servers.json (required)")
	verbose := fs.Bool("v", false, "log at debug level")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *stateDir == "" {
		fmt.Fprintln(os.Stderr, "demo run: -state-dir is required")
		return 2
	}
	level := slog.LevelInfo
	if *verbose {
		level = slog.LevelDebug
	}
	logger := newLogger(os.Stderr, level)

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	rt, err := runtime.Start(ctx, runtime.Options{StateDir: *stateDir, Logger: logger})
	if err != nil {
		logger.Error("starting runtime", "error", err)
		return 1
	}
	logger.Info("runtime started; stop with Ctrl-C", "state_dir", *stateDir)
	<-ctx.Done()
	logger.Info("shutting down")
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := rt.Shutdown(shutdownCtx); err != nil {
		logger.Error("shutdown", "error", err)
		return 1
	}
	return 0
}
