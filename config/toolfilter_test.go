package config

import (
	"strings"
	"testing"
)

func TestToolFilterAllows(t *testing.T) {
	f := ToolFilter{Allow: []string{"read_*", "list_directory"}, Deny: []string{"read_secret*"}}
	for name, want := range map[string]bool{
		"read_file": true, "list_directory": true, "read_secret_key": false, // deny wins
		"write_file": false, "list_directory_tree": false,
	} {
		if got := f.Allows(name); got != want {
			t.Errorf("Allows(%q) = %v, want %v", name, got, want)
		}
	}
	if !(ToolFilter{}).Allows("anything") {
		t.Error("the zero filter lets every tool through")
	}
	if (ToolFilter{Deny: []string{"*"}}).Allows("x") {
		t.Error(`deny ["*"] registers none`)
	}
	if !(ToolFilter{Allow: []string{}, Deny: []string{"b"}}).Allows("a") {
		t.Error("an empty allow list means every tool")
	}
}

func TestToolFilterParseRoundTripAndView(t *testing.T) {
	f, err := Parse([]byte(`{"servers":{"a":{"type":"local","command":["x"],
		"tools":{"allow":["get_*"],"deny":["get_secret"],"future":1}}, "b":{"type":"local","command":["x"]}}}`))
	if err != nil {
		t.Fatal(err)
	}
	a := f.Servers[0]
	if err := a.Validate(); err != nil {
		t.Fatal(err)
	}
	if !a.Tools.Allows("get_x") || a.Tools.Allows("get_secret") || a.Tools.Allows("put") {
		t.Errorf("parsed filter = %+v", a.Tools)
	}
	out, err := Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	again, err := Parse(out)
	if err != nil {
		t.Fatal(err)
	}
	if !again.Servers[0].Equal(a) || !strings.Contains(string(out), `"future"`) {
		t.Errorf("tools not written back with its unknown member:\n%s", out)
	}
	if strings.Count(string(out), `"tools"`) != 1 {
		t.Errorf("an absent filter is not written:\n%s", out)
	}
	v := f.Servers[1].View().Tools
	if v.Allow == nil || v.Deny == nil || len(v.Allow)+len(v.Deny) != 0 {
		t.Errorf("view of no filter = %#v, want two empty lists", v)
	}
}

func TestToolFilterBadInputNamesTheField(t *testing.T) {
	for _, tc := range []struct{ tools, field string }{
		{`{"allow":["ok","[a-"]}`, "tools.allow[1]"},
		{`{"deny":["\\"]}`, "tools.deny[0]"},
		{`{"deny":[""]}`, "tools.deny[0]"},
		{`{"allow":"read_*"}`, "tools.allow"},
		{`{"allow":[1]}`, "tools.allow"},
		{`{"block":["x"]}`, "tools.block"},
		{`["x"]`, "tools"},
		{`{"allow":["` + strings.Repeat("a", MaxToolPatternBytes+1) + `"]}`, "tools.allow[0]"},
	} {
		_, err := DecodeServer([]byte(`{"name":"x","type":"local","command":["x"],"tools":` + tc.tools + `}`))
		if err == nil {
			t.Errorf("%s: accepted", tc.tools)
			continue
		}
		if got := fieldOf(t, err).Field; got != tc.field {
			t.Errorf("%s: error on %q, want %q: %v", tc.tools, got, tc.field, err)
		}
	}
	many := `"` + strings.Repeat(`x","`, MaxToolPatterns) + `x"`
	if _, err := DecodeServer([]byte(`{"name":"x","type":"local","command":["x"],"tools":{"deny":[` + many + `]}}`)); err == nil || fieldOf(t, err).Field != "tools.deny" {
		t.Errorf("%d patterns = %v, want an error on tools.deny", MaxToolPatterns+1, err)
	}
}

func TestToolFilterPatch(t *testing.T) {
	base := localServer()
	base.Tools = ToolFilter{Allow: []string{"a*"}, Deny: []string{"ab"}}
	s, err := ApplyPatch(base, []byte(`{"tools":{"deny":["ac"]}}`))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(s.Tools.Allow, ",") != "a*" || strings.Join(s.Tools.Deny, ",") != "ac" {
		t.Errorf("deny replaced, allow kept: %+v", s.Tools)
	}
	if strings.Join(base.Tools.Deny, ",") != "ab" {
		t.Errorf("the base was modified: %+v", base.Tools)
	}
	s, err = ApplyPatch(s, []byte(`{"tools":{"allow":[]}}`))
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Tools.Allow) != 0 || !s.Tools.Allows("zzz") || s.Tools.Allows("ac") {
		t.Errorf("allow lifted, deny kept: %+v", s.Tools)
	}
	if s.Equal(base) {
		t.Error("a changed filter is a changed server (the manager restarts on it)")
	}
	for body, field := range map[string]string{
		`{"tools":{"allow":null}}`:  "tools.allow",
		`{"tools":{"allow":["["]}}`: "tools.allow[0]",
		`{"tools":{"other":[]}}`:    "tools.other",
	} {
		if _, err := ApplyPatch(base, []byte(body)); err == nil || fieldOf(t, err).Field != field {
			t.Errorf("%s = %v, want an error on %s", body, err, field)
		}
	}
}

// WithLive takes the tools filter and output caps of another config and
// nothing else: a change of those alone compares equal after it, any
// other change does not.
func TestWithLive(t *testing.T) {
	cur := Server{Name: "a", Type: TypeLocal, Command: []string{"x"}, Enabled: true}
	live := cur.Clone()
	live.Tools = ToolFilter{Deny: []string{"rm*"}}
	live.MaxOutputBytes, live.MaxMediaBytes = 4096, NoCap
	if got := cur.WithLive(live); !live.Equal(got) || cur.Equal(got) {
		t.Errorf("a live-only change: WithLive = %+v", got)
	}
	other := live.Clone()
	other.Command = []string{"y"}
	if other.Equal(cur.WithLive(other)) {
		t.Error("a command change passed for a live one")
	}
	if cur.Tools.Deny != nil || cur.MaxOutputBytes != 0 {
		t.Errorf("WithLive changed its receiver: %+v", cur)
	}
}

// A server may send names with "/" (the go-sdk client does not check
// them): "*" matches it like any other character.
func TestToolFilterGlobsMatchSlash(t *testing.T) {
	for _, tc := range []struct {
		f    ToolFilter
		name string
		want bool
	}{
		{ToolFilter{Deny: []string{"*"}}, "fs/delete_file", false},
		{ToolFilter{Deny: []string{"*delete*"}}, "fs/delete_file", false},
		{ToolFilter{Deny: []string{"fs?delete_file"}}, "fs/delete_file", false},
		{ToolFilter{Allow: []string{"fs/*"}}, "fs/x", true},
		{ToolFilter{Allow: []string{"fs/*"}}, "fs/x/y", true},
		{ToolFilter{Allow: []string{"fs/*"}}, "fsx", false},
		{ToolFilter{Allow: []string{`fs\/*`}}, "fs/x", true},
		{ToolFilter{Allow: []string{"fs[/]x"}}, "fs/x", true},
		{ToolFilter{Allow: []string{"fs/x"}}, "fs\x00x", false},
	} {
		if got := tc.f.Allows(tc.name); got != tc.want {
			t.Errorf("%+v.Allows(%q) = %v, want %v", tc.f, tc.name, got, tc.want)
		}
	}
	_, err := DecodeServer([]byte(`{"name":"x","type":"local","command":["x"],"tools":{"deny":["a\u0000b"]}}`))
	if err == nil || fieldOf(t, err).Field != "tools.deny[0]" {
		t.Errorf("a NUL in a glob = %v, want an error on tools.deny[0]", err)
	}
}

// Names are the server's: under a filter one past the specification's
// bound is left out, so no name sets what a match costs.
func TestToolFilterLongNamesLeftOut(t *testing.T) {
	long := strings.Repeat("a", MaxFilteredNameBytes+1)
	if (ToolFilter{Allow: []string{"*"}}).Allows(long) {
		t.Error("a name past the bound passes a filter")
	}
	if !(ToolFilter{Allow: []string{"*"}}).Allows(long[1:]) {
		t.Error("a name at the bound is left out")
	}
	if !(ToolFilter{}).Allows(long) {
		t.Error("without a filter a long name is the server's business")
	}
	// Left out under a deny list too, which no glob of it matches.
	if (ToolFilter{Deny: []string{"*b*"}}).Allows(long) {
		t.Error("a name past the bound passes a deny list")
	}
}
