package config

import (
	"strings"
	"testing"
)

// DuplicateKey finds a repeated key at any depth, names it by its path,
// and finds none where keys repeat only across objects.
func TestDuplicateKey(t *testing.T) {
	deep := strings.Repeat(`{"a":`, 5000) + `{"k":1,"k":2}` + strings.Repeat(`}`, 5000)
	for _, tt := range []struct{ doc, want string }{
		{`{"a":1,"b":2}`, ""},
		{`{"a":{"x":1},"b":{"x":2}}`, ""},
		{`[{"x":1},{"x":2}]`, ""},
		{`{"arguments":{},"arguments":{}}`, "arguments"},
		{`{"arguments":{"x":1,"y":[1,2],"x":2}}`, "arguments.x"},
		{`{"arguments":{"list":[0,{"k":1},{"k":1,"k":2}]}}`, "arguments.list[2].k"},
		{`{"arguments":{"a b":{"c":1,"c":1}}}`, `arguments["a b"].c`},
		{`{"s":"{\"k\":1,\"k\":2}"}`, ""}, // inside a string is not a key
		{deep, strings.Repeat("a.", 5000) + "k"},
	} {
		got, err := DuplicateKey([]byte(tt.doc))
		if err != nil || got != tt.want {
			name := tt.doc
			if len(name) > 60 {
				name = name[:60] + "..."
			}
			t.Errorf("DuplicateKey(%s) = %q, %v; want %q", name, got, err, tt.want)
		}
	}
	if _, err := DuplicateKey([]byte(`{"a":`)); err == nil {
		t.Error("DuplicateKey of broken JSON: no error")
	}
}
