package testutil

import (
	"encoding/json"
	"reflect"
)

// JSONEqual reports whether a and b are the same JSON value (key order
// and spacing aside); text that is not JSON equals nothing.
func JSONEqual(a, b string) bool {
	var x, y any
	return json.Unmarshal([]byte(a), &x) == nil && json.Unmarshal([]byte(b), &y) == nil && reflect.DeepEqual(x, y)
}
