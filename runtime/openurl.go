package runtime

import (
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"os/exec"
	goruntime "runtime"
	"strings"
)

// defaultOpenURL logs the authorization URL, so a user on a headless
// machine can open it elsewhere, and tries the platform's opener.
func defaultOpenURL(logger *slog.Logger) func(ctx context.Context, url string) error {
	return func(ctx context.Context, url string) error {
		logger.Info("open this URL in a browser to log in", "url", url)
		argv, err := openerArgv(goruntime.GOOS, url)
		if err != nil {
			return err
		}
		cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("running %s: %w", argv[0], err)
		}
		return nil
	}
}

// openerArgv returns the command that opens rawURL in the browser on goos:
// open on macOS; on Windows rundll32's url.dll FileProtocolHandler, which
// takes the URL as one argument (never `cmd /c start`: cmd.exe would read
// the & of a query as a command separator); xdg-open elsewhere. Only an
// http or https URL is opened: the authorization server names the URL,
// and every one of these openers would as well run a file or another
// scheme's handler (and a leading "-" would be an option). Nor is one
// with a space, a double quote or a control character, on every platform:
// rundll32 splits its raw command line itself, so that a space or a quote
// there could make a second argument, and an authorization server has no
// reason to send any of them unencoded.
func openerArgv(goos, rawURL string) ([]string, error) {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("opening the authorization URL: not an http or https URL")
	}
	if i := strings.IndexFunc(rawURL, func(r rune) bool { return r <= ' ' || r == 0x7f || r == '"' }); i >= 0 {
		return nil, fmt.Errorf("opening the authorization URL: it holds a space, a quote or a control character")
	}
	switch goos {
	case "darwin":
		return []string{"open", rawURL}, nil
	case "windows":
		return []string{"rundll32", "url.dll,FileProtocolHandler", rawURL}, nil
	default:
		return []string{"xdg-open", rawURL}, nil
	}
}
