package main

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestOpenURL(t *testing.T) {
	var got string
	callback := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r.URL.Query().Get("code")
		if got == "bad" {
			http.Error(w, "state mismatch", http.StatusBadRequest)
		}
	}))
	defer callback.Close()
	authorize := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if code := r.URL.Query().Get("code"); code != "" {
			http.Redirect(w, r, callback.URL+"/callback?code="+code, http.StatusFound)
			return
		}
		w.Write([]byte("a login page"))
	}))
	defer authorize.Close()

	if err := openURL(t.Context(), authorize.URL+"/authorize?code=abc"); err != nil || got != "abc" {
		t.Fatalf("openURL = %v, callback got code %q; want nil and abc", err, got)
	}
	for _, tc := range []struct{ url, want string }{
		{authorize.URL + "/authorize", "want a redirect"},
		{authorize.URL + "/authorize?code=bad", "state mismatch"},
	} {
		if err := openURL(t.Context(), tc.url); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("openURL(%s) = %v, want an error with %q", tc.url, err, tc.want)
		}
	}
}

func TestUnknownScenario(t *testing.T) {
	t.Setenv("MCP_CONFORMANCE_SCENARIO", "no-such-scenario")
	if code := run([]string{"http://127.0.0.1:1/mcp"}); code != 2 {
		t.Fatalf("run = %d, want 2", code)
	}
}

func TestScenarioTable(t *testing.T) {
	for name, sc := range scenarios {
		if sc.run == nil {
			t.Errorf("scenario %q has no run", name)
		}
		if strings.HasPrefix(name, "auth/") != (sc.auth != nil) {
			t.Errorf("scenario %q: auth configured = %v", name, sc.auth != nil)
		}
	}
}
