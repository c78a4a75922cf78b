package runtime

import (
	"context"
	"fmt"
	"log/slog"
	"os/exec"
	goruntime "runtime"
)

// defaultOpenURL logs the authorization URL, so a user on a headless
// machine can open it elsewhere, and tries the platform's opener.
func defaultOpenURL(logger *slog.Logger) func(ctx context.Context, url string) error {
	return func(ctx context.Context, url string) error {
		logger.Info("open this URL in a browser to log in", "url", url)
		var cmd *exec.Cmd
		switch goruntime.GOOS {
		case "darwin":
			cmd = exec.CommandContext(ctx, "open", url)
		case "windows":
			cmd = exec.CommandContext(ctx, "rundll32", "url.dll,FileProtocolHandler", url)
		default:
			cmd = exec.CommandContext(ctx, "xdg-open", url)
		}
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("running %s: %w", cmd.Args[0], err)
		}
		return nil
	}
}
