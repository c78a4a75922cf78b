package catalog

import (
	"slices"
	"testing"

	"github.com/openprogram/mcpvisor/config"
)

// Every host form converts so that literal text never becomes a reference
// and a nested form is kept literal whole with a warning: the output reads
// back (config.ReferencedNames) to exactly the references the host meant,
// and expands to the host's text where the host expands nothing.
func TestConversionsKeepLiteralText(t *testing.T) {
	dollarHome := editorVars{host: "VS Code", home: "/home/u$", workspace: "/w/app$", sep: "/"}.dialect()
	user := editorVars{host: "VS Code", home: "/home/u", sep: "/"}.dialect()
	windsurf := editorVars{host: "Windsurf", envOnly: true, sep: "/"}.dialect()
	for _, c := range []struct {
		name     string
		d        dialect
		in, out  string
		names    []string
		warnings int
	}{
		{"editor home ending in $ then {x}", dollarHome, "${userHome}{x}", "/home/u$${x}", nil, 0},
		{"editor basename ending in $ then {x}", dollarHome, "${workspaceFolderBasename}{x}", "app$${x}", nil, 0},
		{"editor home ending in $ then a reference", dollarHome, "${userHome}${env:T}", "/home/u$${T:-}", nil, 1},
		{"editor $ then a variable then {x}", user, "$${pathSeparator}{x}", "$/{x}", nil, 0},
		{"editor nested input", user, "${input:${x}}", "$${input:$${x}}", nil, 1},
		{"editor nested env", user, "Bearer ${env:${T}}", "Bearer $${env:$${T}}", nil, 1},
		{"editor nested keeps the rest", user, "${env:A}-${input:${x}}", "${A:-}-$${input:$${x}}", []string{"A"}, 1},
		{"windsurf nested", windsurf, "${env:${T}}", "$${env:$${T}}", nil, 1},
		{"opencode literal ${X}", opencodeDialect, "${X} {env:Y}", "$${X} ${Y:-}", []string{"Y"}, 0},
		{"opencode literal $ then {x}", opencodeDialect, "a${x}", "a$${x}", nil, 0},
		{"opencode literal ${env:X}-shaped text", opencodeDialect, "${env:X}", "$${X:-}", nil, 1},
		{"opencode nested", opencodeDialect, "{env:{env:X}}", "{env:{env:X}}", nil, 1},
		{"opencode file then {x}", opencodeDialect, "${file:k}{x}", "$${file:k}{x}", nil, 1},
		{"gemini nested", geminiDialect, "${input:${x}}", "$${input:$${x}}", nil, 1},
		{"gemini literal $ then {x} after a var", geminiDialect, "$A${", "${A}$${", []string{"A"}, 1},
		{"claude code nested default", shellDialect, "${A:-x${B}}", "$${A:-x$${B}}", nil, 1},
		{"claude code literal then ref", shellDialect, "{x}${A}{y}", "{x}${A}{y}", []string{"A"}, 0},
		{"literal host $ then {x}", literalDialect, "a$", "a$", nil, 0},
		{"literal host ${env:X}", literalDialect, "${env:X}", "$${env:X}", nil, 0},
	} {
		m := newMapping(c.d)
		got := m.text("f", c.in)
		names, err := config.ReferencedNames(got)
		if got != c.out || err != nil || !slices.Equal(names, c.names) || len(m.warnings) != c.warnings {
			t.Errorf("%s: %q → %q (names %q, %v) with %q; want %q (names %q) with %d warnings",
				c.name, c.in, got, names, err, m.warnings, c.out, c.names, c.warnings)
		}
	}
}
