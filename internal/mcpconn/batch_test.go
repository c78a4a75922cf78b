package mcpconn

import (
	"errors"
	"strings"
	"testing"
)

// The command line that runs a batch file through cmd.exe quotes every
// argument that holds anything but safe characters, doubles quotes,
// doubles backslashes only before a quote, and parts each % from what
// follows, so that cmd.exe neither runs (&, |, <, >) nor expands (%VAR%)
// anything an argument holds. The cases follow Rust's standard library,
// whose algorithm this is.
func TestBatchCommandLine(t *testing.T) {
	const script = `C:\Program Files\nodejs\npx.cmd`
	const head = `cmd.exe /e:ON /v:OFF /d /c ""C:\Program Files\nodejs\npx.cmd"`
	for _, tc := range []struct {
		args []string
		want string // after head
	}{
		{nil, `"`},
		{[]string{"-y", "@modelcontextprotocol/server-everything"}, ` -y @modelcontextprotocol/server-everything"`},
		{[]string{""}, ` """`},
		{[]string{"a b"}, ` "a b""`},
		{[]string{"a&calc.exe"}, ` "a&calc.exe""`},
		{[]string{`"&calc.exe`}, ` """&calc.exe""`},
		{[]string{"x|y", "<in", ">out", "(a)", "^"}, ` "x|y" "<in" ">out" "(a)" "^""`},
		{[]string{"%PATH%"}, ` "%%cd:~,%PATH%%cd:~,%""`},
		{[]string{"!PATH!"}, ` "!PATH!""`},
		{[]string{`C:\dir\`}, ` "C:\dir\\""`},
		{[]string{`C:\dir\file`}, ` C:\dir\file"`},
		{[]string{`a\"b`}, ` "a\\""b""`},
		{[]string{"tab\there"}, ` "tab	here""`},
		{[]string{"ünïcode"}, ` ünïcode"`},
	} {
		got, err := batchCommandLine(script, tc.args)
		if err != nil {
			t.Errorf("%q: %v", tc.args, err)
			continue
		}
		if got != head+tc.want {
			t.Errorf("%q:\n got %s\nwant %s", tc.args, got, head+tc.want)
		}
		assertMetaQuoted(t, got[len(head):])
	}
}

// assertMetaQuoted fails if one of cmd.exe's metacharacters stands
// outside a quoted stretch of line (where cmd.exe would act on it). A %
// is expanded even inside quotes: the cases check its escape.
func assertMetaQuoted(t *testing.T, line string) {
	t.Helper()
	// cmd.exe drops the outer quotes after /c (its last byte is the
	// closing one); past the script's quoted name, a quote toggles.
	in := false
	for i, r := range line[:len(line)-1] {
		if r == '"' {
			in = !in
			continue
		}
		if !in && strings.ContainsRune("&|<>()^", r) {
			t.Errorf("%q: %q at %d outside quotes", line, r, i)
		}
	}
}

// A line break or NUL in an argument, or a quote in the script's name,
// is refused, not escaped: cmd.exe cannot be given them safely. The
// refusal names the script, not the argument (it may be a secret).
func TestBatchCommandLineRefuses(t *testing.T) {
	for _, arg := range []string{"a\nb", "a\rb", "a\x00b"} {
		_, err := batchCommandLine(`C:\x\run.bat`, []string{"ok", arg})
		if !errors.Is(err, errBatchArg) || strings.Contains(err.Error(), arg) || !strings.Contains(err.Error(), "run.bat") {
			t.Errorf("%q: %v, want errBatchArg naming run.bat without the argument", arg, err)
		}
	}
	for _, script := range []string{`C:\x\"run.bat`, `C:\x\`} {
		if _, err := batchCommandLine(script, nil); err == nil {
			t.Errorf("script %q accepted", script)
		}
	}
}

// Batch files are told by their extension, in any case, with the
// trailing dots and spaces Windows drops from a name ignored.
func TestIsBatchFile(t *testing.T) {
	for path, want := range map[string]bool{
		`C:\nodejs\npx.cmd`: true,
		`C:\x\RUN.BAT`:      true,
		`run.cmd. `:         true,
		`run.bat...`:        true,
		`C:\x\node.exe`:     false,
		`run.cmd.exe`:       false,
		`cmd`:               false,
		`C:\x.cmd\node.exe`: false,
	} {
		if got := isBatchFile(path); got != want {
			t.Errorf("isBatchFile(%q) = %v, want %v", path, got, want)
		}
	}
}
