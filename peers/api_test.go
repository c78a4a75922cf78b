//go:build unix

package peers_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
)

// serveAPI sends one request to a runtime's management handler as a
// loopback client does (JSON body when body is not empty) and returns
// the recorded answer.
func serveAPI(h http.Handler, method, path, body string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	req.Host = "127.0.0.1:7077"
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}
