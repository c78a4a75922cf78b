package redact

import (
	"encoding/json"
	"strconv"
)

// JSON returns raw with every known secret replaced by Marker, for JSON a
// server sent that leaves the connection as JSON (structured content, a
// tool's output schema or _meta). A scrub that cut through JSON syntax (a
// secret's raw form spanning a quote) leaves a JSON string holding Marker
// rather than invalid JSON. raw itself is returned when it held no secret;
// nil stays nil.
func (s *Scrubber) JSON(raw json.RawMessage) json.RawMessage {
	if raw == nil {
		return nil
	}
	scrubbed := s.String(string(raw))
	if scrubbed == string(raw) {
		return raw
	}
	if !json.Valid([]byte(scrubbed)) {
		return json.RawMessage(strconv.Quote(Marker))
	}
	return json.RawMessage(scrubbed)
}
