//go:build unix

// Package peers_test runs mcpvisor's runtime against real third-party MCP
// servers: the official server-everything (npm), over stdio, legacy SSE and
// Streamable HTTP, and a fleet of popular servers for tool search
// (fleet_test.go).
//
// The tests install what they need themselves: TestMain puts the pinned
// server-everything into <repo>/.cache/everything and the fleet into
// <repo>/.cache/fleet, and the gateway's clients (the TypeScript SDK and
// the MCP Inspector, gatewayclients_test.go) into <repo>/.cache/gatewayclients
// with npm, once (a later run finds them there and downloads nothing). npm and Node (20 or later)
// must be on PATH; without them the run fails rather than skips.
package peers_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/openprogram/mcpvisor/internal/testutil"
)

const (
	everythingPkg     = "@modelcontextprotocol/server-everything"
	everythingVersion = "2026.8.31"

	// installTimeout bounds npm install (a cold install takes ~3 s here)
	// and the wait for another test process's install of the same cache.
	installTimeout = 5 * time.Minute
)

var (
	// marker tags every process these tests start (the HTTP servers and the
	// runtime's stdio servers), so that leftovers are found.
	marker = fmt.Sprintf("peers-test-%d", os.Getpid())
	// everythingJS is the absolute path of server-everything's dist/index.js;
	// loopbackJS that of the preload that keeps the HTTP servers on loopback.
	everythingJS string
	loopbackJS   string
)

func TestMain(m *testing.M) {
	tmp, err := os.MkdirTemp("", "mcpvisor-peers-")
	if err != nil {
		fmt.Fprintf(os.Stderr, "FAIL: peers: %v\n", err)
		os.Exit(1)
	}
	if err := setup(tmp); err != nil {
		os.RemoveAll(tmp)
		fmt.Fprintf(os.Stderr, "FAIL: peers: %v\n", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(tmp)
	if left := testutil.ProcessesWithMarker(marker); len(left) > 0 {
		fmt.Fprintf(os.Stderr, "FAIL: processes left behind: %v\n", left)
		code = 1
	}
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintf(os.Stderr, "FAIL: goroutines leaked: %v\n", err)
			code = 1
		}
	}
	os.Exit(code)
}

// setup installs server-everything, the fleet and the gateway clients if
// needed, resolves the paths, and builds the demo binary into tmp.
func setup(tmp string) error {
	if _, err := exec.LookPath("node"); err != nil {
		return errors.New("node is not on PATH; the peer tests need Node 20 or later")
	}
	root, err := repoRoot()
	if err != nil {
		return err
	}
	dir := filepath.Join(root, ".cache", "everything")
	if err := installEverything(dir); err != nil {
		return err
	}
	everythingJS = filepath.Join(dir, "node_modules", everythingPkg, "dist", "index.js")
	if _, err := os.Stat(everythingJS); err != nil {
		return fmt.Errorf("server-everything is installed but its entry point is missing: %w", err)
	}
	loopbackJS, err = filepath.Abs(filepath.Join("testdata", "loopback.mjs"))
	if err != nil {
		return err
	}
	fleetDir = filepath.Join(root, ".cache", "fleet")
	if err := installPinned(fleetDir, fleetPackages()); err != nil {
		return err
	}
	return installGatewayClients(root, tmp)
}

// repoRoot is the module root: the tests run in the package directory, one
// below it.
func repoRoot() (string, error) {
	root, err := filepath.Abs("..")
	if err != nil {
		return "", err
	}
	mod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil || !bytes.Contains(mod, []byte("module github.com/openprogram/mcpvisor\n")) {
		return "", fmt.Errorf("%s is not the mcpvisor module root (the tests must run in peers/)", root)
	}
	return root, nil
}

// npmPackage is one pinned npm package the tests run.
type npmPackage struct{ name, version string }

// installEverything installs the pinned server-everything into dir unless
// that version is there already.
func installEverything(dir string) error {
	return installPinned(dir, []npmPackage{{everythingPkg, everythingVersion}})
}

// installPinned installs pkgs at their pinned versions into dir unless
// every one is there already. A file lock serialises test processes that
// share the cache (two runs of this package at once). No package of the
// tests downloads anything of its own at install (a browser), nor at run
// time.
func installPinned(dir string, pkgs []npmPackage) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	unlock, err := lockDir(dir)
	if err != nil {
		return err
	}
	defer unlock()
	var specs []string
	for _, p := range pkgs {
		if installedVersion(dir, p.name) != p.version {
			specs = append(specs, p.name+"@"+p.version)
		}
	}
	if len(specs) == 0 {
		return nil
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		return fmt.Errorf("npm is not on PATH; it is needed once to install %s into %s", strings.Join(specs, " "), dir)
	}
	fmt.Fprintf(os.Stderr, "peers: installing %s into %s\n", strings.Join(specs, " "), dir)
	ctx, cancel := context.WithTimeout(context.Background(), installTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, npm, append([]string{"install", "--prefix", dir, "--no-audit", "--no-fund", "--save-exact"}, specs...)...)
	// @playwright/mcp lists tools without a browser: never fetch one.
	cmd.Env = append(os.Environ(), testutil.MarkerEnv+"="+marker, "PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("npm install %s failed: %v\n%s", strings.Join(specs, " "), err, out)
	}
	for _, p := range pkgs {
		if got := installedVersion(dir, p.name); got != p.version {
			return fmt.Errorf("npm install finished but %s is at version %q, want %q\n%s", p.name, got, p.version, out)
		}
	}
	return nil
}

// installedVersion is the version of package pkg in dir, or "" when it
// is not there whole: an npm install cut short (killed, out of disk)
// leaves a package's package.json with some of its dependencies missing,
// so each dependency it names must be installed too, beside it or below
// it, as npm places them.
func installedVersion(dir, pkg string) string {
	var meta struct {
		Version      string            `json:"version"`
		Dependencies map[string]string `json:"dependencies"`
	}
	data, err := os.ReadFile(filepath.Join(dir, "node_modules", pkg, "package.json"))
	if err != nil || json.Unmarshal(data, &meta) != nil {
		return ""
	}
	for dep := range meta.Dependencies {
		_, nested := os.Stat(filepath.Join(dir, "node_modules", pkg, "node_modules", dep, "package.json"))
		_, hoisted := os.Stat(filepath.Join(dir, "node_modules", dep, "package.json"))
		if nested != nil && hoisted != nil {
			return ""
		}
	}
	return strings.TrimSpace(meta.Version)
}

// lockDir takes an exclusive lock on dir/.install.lock, waiting at most
// installTimeout for another process to release it.
func lockDir(dir string) (unlock func(), err error) {
	f, err := os.OpenFile(filepath.Join(dir, ".install.lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	// flock has no deadline of its own: try until the holder lets go.
	testutil.Within(installTimeout, func() bool {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		return !errors.Is(err, syscall.EWOULDBLOCK)
	})
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("locking %s: %w", f.Name(), err)
	}
	return func() { _ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN); f.Close() }, nil
}
