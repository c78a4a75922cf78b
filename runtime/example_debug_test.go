package runtime

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
)

// A host serves the management API and, if it wants them, the debug
// routes beside it on its own mux, as it would mount net/http/pprof.
func ExampleRuntime_DebugHandler() {
	dir, _ := os.MkdirTemp("", "example-")
	defer os.RemoveAll(dir)
	rt, err := Start(context.Background(), Options{StateDir: dir})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer rt.Shutdown(context.Background())

	mux := http.NewServeMux()
	mux.Handle("/", rt.Handler())
	mux.Handle("/debug/", rt.DebugHandler())

	for _, path := range []string{"/healthz", "/debug/actors"} {
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "http://127.0.0.1"+path, nil))
		var body map[string]any
		_ = json.Unmarshal(rec.Body.Bytes(), &body)
		fmt.Println(path, rec.Code, body["status"], body["kind"])
	}
	// Output:
	// /healthz 200 ok <nil>
	// /debug/actors 200 <nil> manager
}
