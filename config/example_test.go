package config_test

import (
	"fmt"
	"os"

	"github.com/openprogram/mcpvisor/config"
)

func Example() {
	dir, err := os.MkdirTemp("", "mcpvisor-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	store := config.Store{Dir: func() (string, error) { return dir, nil }}

	f, err := store.Load() // a missing file is an empty configuration
	if err != nil {
		panic(err)
	}
	s, err := config.DecodeServer([]byte(`{"name": "remote", "type": "http",
		"url": "https://example.com/mcp", "auth": {"kind": "bearer", "token": "tok-0123456789abcd"}}`))
	if err != nil {
		panic(err)
	}
	f.Put(s)
	if err := store.Save(f); err != nil {
		panic(err)
	}

	// A PATCH that switches to OAuth drops the bearer token.
	s, err = config.ApplyPatch(s, []byte(`{"auth": {"kind": "oauth", "client_id": "mcpvisor"}}`))
	if err != nil {
		panic(err)
	}
	fmt.Println(s.View().Auth.Kind, s.View().Auth.HasToken)

	// Errors name the field.
	_, err = config.ApplyPatch(s, []byte(`{"timeout_seconds": 0}`))
	fmt.Println(err)
	// Output:
	// oauth false
	// servers.remote.timeout_seconds: must be between 1 and 3600 (leave it out for the default of 30)
}

func ExampleMask() {
	fmt.Printf("%q %q %q\n", config.Mask(""), config.Mask("short"), config.Mask("sk-0123456789abcdef"))
	// Output: "" "****" "****cdef"
}

func ExampleServer_View() {
	s, err := config.DecodeServer([]byte(`{"name": "fs", "type": "local",
		"command": ["npx", "-y", "server-fs"], "env": {"API_KEY": "sk-0123456789abcdef"}}`))
	if err != nil {
		panic(err)
	}
	fmt.Println(s) // a Server prints its response form
	// Output:
	// {"name":"fs","type":"local","command":["npx","-y","server-fs"],"env":{"API_KEY":{"has_value":true,"masked":"****cdef"}},"headers":{},"auth":{"kind":"none","has_token":false,"has_client_secret":false,"has_private_key":false},"enabled":true,"timeout_seconds":30,"max_concurrent_calls":0,"connect_timeout_seconds":30,"max_call_seconds":300,"max_output_bytes":262144,"max_media_bytes":5242880,"tools":{"allow":[],"deny":[]}}
}
