package runtime

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"strings"

	"github.com/openprogram/mcpvisor/config"
)

// The one decoder of the JSON object bodies of the routes that take
// named fields (complete, resources/read, resources/subscriptions).

// decodeServerURI decodes {"server": NAME, "uri": URI}, both required
// non-empty strings (the body of resources/read and
// resources/subscriptions); what names the URI's use in the error.
func decodeServerURI(body []byte, what string) (server, uri string, err error) {
	if err := decodeFields(body, map[string]any{"server": &server, "uri": &uri}); err != nil {
		return "", "", err
	}
	switch {
	case server == "":
		return "", "", &apiError{Status: http.StatusBadRequest, Field: "server", Message: `"server" is missing: the name of the server`}
	case uri == "":
		return "", "", &apiError{Status: http.StatusBadRequest, Field: "uri", Message: `"uri" is missing: ` + what}
	}
	return server, uri, nil
}

// decodeFields decodes a JSON object body into the targets by field name:
// an unknown or duplicated field, or one of the wrong type, is a 400
// naming it. A field that is absent or null leaves its target as it is.
func decodeFields(body []byte, targets map[string]any) error {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(body, &fields); err != nil {
		return &apiError{Status: http.StatusBadRequest, Message: "request body must be a JSON object: " + jsonProblem(err)}
	}
	if path, _ := config.DuplicateKey(body); path != "" {
		e := &apiError{Status: http.StatusBadRequest, Message: "duplicate key " + quoteShort(path) + " in the request body"}
		if len(path) <= maxFieldPath {
			e.Field = path
		}
		return e
	}
	known := make([]string, 0, len(targets))
	for k := range targets {
		known = append(known, k)
	}
	slices.Sort(known)
	for k, raw := range fields {
		target, ok := targets[k]
		if !ok {
			return &apiError{Status: http.StatusBadRequest, Field: k,
				Message: "unknown field " + quoteShort(k) + " (known: " + strings.Join(known, ", ") + ")"}
		}
		if err := json.Unmarshal(raw, target); err != nil {
			return &apiError{Status: http.StatusBadRequest, Field: k, Message: fieldProblem(k, err)}
		}
	}
	return nil
}

// fieldProblem describes why a field did not decode without quoting it.
func fieldProblem(field string, err error) string {
	var typ *json.UnmarshalTypeError
	if errors.As(err, &typ) {
		want := "a string"
		if typ.Type.Kind() == reflect.Map {
			want = "an object of strings"
		}
		return fmt.Sprintf("%s must be %s, found a JSON %s", quoteShort(field), want, typ.Value)
	}
	return quoteShort(field) + ": " + jsonProblem(err)
}
