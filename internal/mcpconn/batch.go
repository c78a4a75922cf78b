package mcpconn

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"unicode"
)

// Windows runs a batch file (npx.cmd, as PATHEXT resolves `npx`) through
// cmd.exe, which parses its command line by rules of its own: Go's
// os/exec quotes for CommandLineToArgvW, so an argument holding & | < >
// or %VAR% would be run or expanded by cmd.exe (the "BatBadBut" class,
// CVE-2024-24576; os/exec documents it and leaves the quoting to the
// caller through SysProcAttr.CmdLine, golang/go#27199). We build that
// command line ourselves, as Rust's standard library does since its fix:
// cmd.exe with AutoRun off (/d), extensions on (/e:ON: the %-escape below
// needs them), delayed expansion off (/v:OFF: no !VAR!), and every
// argument quoted for cmd.exe. The functions are pure, so tested on Linux;
// process_windows.go uses them.

// isBatchFile reports whether path names a batch file. Windows drops
// trailing dots and spaces from a file name, so "x.cmd. " is one too
// (CVE-2024-43402).
func isBatchFile(path string) bool {
	ext := strings.ToLower(filepath.Ext(strings.TrimRight(path, ". ")))
	return ext == ".bat" || ext == ".cmd"
}

// errBatchArg is the refusal of an argument that cannot be passed to a
// batch file safely: a line break ends cmd.exe's command line early, a
// NUL ends the string.
var errBatchArg = errors.New("an argument of a batch file (.bat, .cmd) holds a line break or NUL, which cmd.exe cannot be given safely")

// batchCommandLine returns the command line that runs script with args
// through cmd.exe, each argument reaching the script as given (in %1…%9
// and %*, quoted where it needs quotes).
func batchCommandLine(script string, args []string) (string, error) {
	if strings.ContainsAny(script, "\"\x00") || strings.HasSuffix(script, `\`) {
		return "", fmt.Errorf("running %s: a Windows file name cannot hold a quote or end with a backslash", filepath.Base(script))
	}
	var b strings.Builder
	// The outer quotes around everything after /c: cmd.exe strips them.
	b.WriteString(`cmd.exe /e:ON /v:OFF /d /c ""`)
	b.WriteString(script)
	b.WriteByte('"')
	for _, arg := range args {
		if strings.ContainsAny(arg, "\r\n\x00") {
			return "", fmt.Errorf("running %s: %w", filepath.Base(script), errBatchArg)
		}
		b.WriteByte(' ')
		appendBatchArg(&b, arg)
	}
	b.WriteByte('"')
	return b.String(), nil
}

// batchSafe are the ASCII symbols an unquoted argument may hold; any other
// ASCII symbol or space, or a control character, gets the argument quoted.
const batchSafe = `#$*+-./:?@\_`

// appendBatchArg appends arg quoted for cmd.exe and, through it, for the
// CommandLineToArgvW parsing of the program the script passes it to.
func appendBatchArg(b *strings.Builder, arg string) {
	// An empty argument would vanish unquoted; one ending in a backslash
	// must be quoted so a script's "%~1" cannot have it escape a quote.
	quote := arg == "" || strings.HasSuffix(arg, `\`)
	for _, r := range arg {
		if r <= unicode.MaxASCII && !isAlnum(r) && !strings.ContainsRune(batchSafe, r) || unicode.IsControl(r) {
			quote = true
			break
		}
	}
	if quote {
		b.WriteByte('"')
	}
	backslashes := 0
	for _, r := range arg {
		if r == '\\' {
			backslashes++
			b.WriteRune(r)
			continue
		}
		switch r {
		case '"':
			// Double the backslashes before it, and the quote itself:
			// both parsers read "" inside quotes as one quote.
			b.WriteString(strings.Repeat(`\`, backslashes))
			b.WriteByte('"')
		case '%':
			// %cd:~,% is an empty substring of %cd%: it parts the percent
			// from what follows, so no %VAR% after it is expanded.
			b.WriteString(`%%cd:~,`)
		}
		backslashes = 0
		b.WriteRune(r)
	}
	if quote {
		b.WriteString(strings.Repeat(`\`, backslashes))
		b.WriteByte('"')
	}
}

func isAlnum(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9'
}
