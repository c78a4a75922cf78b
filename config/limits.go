package config

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MaxCallSecondsLimit is the largest max_call_seconds [Server.Validate]
// accepts, and the cap of its default: a day.
const MaxCallSecondsLimit = 24 * 60 * 60

// DefaultMaxOutputBytes is the text cap of one tool result of a server
// whose entry has no max_output_bytes: 256 KiB.
const DefaultMaxOutputBytes = 256 << 10

// DefaultMaxMediaBytes is the image and audio cap of one tool result of a
// server whose entry has no max_media_bytes: 5 MiB.
const DefaultMaxMediaBytes = 5 << 20

// MaxOutputBytesLimit is the largest max_output_bytes and max_media_bytes
// [Server.Validate] accepts: the transport reads no answer larger than
// 16 MiB anyway, so a larger cap would only look like a promise.
const MaxOutputBytesLimit = 16 << 20

// MinOutputBytes is the smallest cap accepted: below it the notice that a
// result was cut would be most of what the model sees.
const MinOutputBytes = 1024

// NoCap is the value of max_output_bytes and max_media_bytes that turns
// the cap off (the transport's bound still applies).
const NoCap = -1

// zeroFields records which of the fields whose explicit 0 is an error the
// entry set to 0, so that Validate can say so instead of applying a
// default the user did not ask for.
type zeroFields uint8

const (
	zeroConnectTimeout zeroFields = 1 << iota
	zeroMaxCall
	zeroMaxOutput
	zeroMaxMedia
)

// zeroBit returns the bit of the int field named key, or 0 when an
// explicit 0 is not an error for that field.
func zeroBit(key string) zeroFields {
	switch key {
	case "connect_timeout_seconds":
		return zeroConnectTimeout
	case "max_call_seconds":
		return zeroMaxCall
	case "max_output_bytes":
		return zeroMaxOutput
	case "max_media_bytes":
		return zeroMaxMedia
	}
	return 0
}

// decodeLimit decodes the int field named key (one of the fields zeroBit
// knows) into s.
func (s *Server) decodeLimit(key string, raw json.RawMessage) *FieldError {
	n, err := decodeInt(key, raw)
	if err == nil {
		s.setInt(key, n)
	}
	return err
}

// setInt stores v in the int field named key (one of the fields zeroBit
// knows) and records an explicit zero.
func (s *Server) setInt(key string, v int) {
	switch key {
	case "connect_timeout_seconds":
		s.ConnectTimeoutSeconds = v
	case "max_call_seconds":
		s.MaxCallSeconds = v
	case "max_output_bytes":
		s.MaxOutputBytes = v
	case "max_media_bytes":
		s.MaxMediaBytes = v
	}
	bit := zeroBit(key)
	if v == 0 {
		s.zeros |= bit
	} else {
		s.zeros &^= bit
	}
}

// ConnectTimeout returns the effective bound of one connect: the call
// timeout when ConnectTimeoutSeconds is not positive, and never more than
// MaxTimeoutSeconds.
func (s Server) ConnectTimeout() time.Duration {
	n := s.ConnectTimeoutSeconds
	switch {
	case n <= 0:
		return s.Timeout()
	case n > MaxTimeoutSeconds:
		n = MaxTimeoutSeconds
	}
	return time.Duration(n) * time.Second
}

// MaxCallDuration returns the effective cap of a call whose timeout
// progress keeps restarting: 10 × the call timeout when MaxCallSeconds is
// not positive, never less than the call timeout and never more than
// MaxCallSecondsLimit.
func (s Server) MaxCallDuration() time.Duration {
	limit := time.Duration(MaxCallSecondsLimit) * time.Second
	d := 10 * s.Timeout()
	if s.MaxCallSeconds > 0 {
		d = time.Duration(s.MaxCallSeconds) * time.Second
	}
	return min(max(d, s.Timeout()), limit)
}

// OutputCaps returns the effective caps of one tool result: the bytes of
// text and the bytes of image and audio data the model may get; NoCap
// (-1) means no cap. Defaults are applied and out-of-range values are
// clamped, so even an unvalidated Server yields sane caps.
func (s Server) OutputCaps() (text, media int) {
	return outputCap(s.MaxOutputBytes, DefaultMaxOutputBytes), outputCap(s.MaxMediaBytes, DefaultMaxMediaBytes)
}

func outputCap(n, def int) int {
	switch {
	case n == NoCap:
		return NoCap
	case n <= 0:
		return def
	}
	return min(max(n, MinOutputBytes), MaxOutputBytesLimit)
}

// SupportedProtocolVersions returns the values protocol_version accepts:
// the versions the go-sdk speaks, newest first.
func SupportedProtocolVersions() []string { return mcp.SupportedProtocolVersions() }

// validateLimits checks the connect timeout, call cap, output caps and the
// protocol pin of s, in file order. patch says how the error tells the
// user to get the default back: in a PATCH by sending 0, elsewhere by
// leaving the field out.
func (s Server) validateLimits(patch bool) *FieldError {
	hint := func(def string) string {
		if patch {
			return "(0 puts back the default, " + def + ")"
		}
		return "(leave it out for the default, " + def + ")"
	}
	if s.zeros&zeroConnectTimeout != 0 || s.ConnectTimeoutSeconds < 0 || s.ConnectTimeoutSeconds > MaxTimeoutSeconds {
		return fieldErr("connect_timeout_seconds", fmt.Sprintf(
			"must be between 1 and %d %s", MaxTimeoutSeconds, hint("timeout_seconds")))
	}
	if s.zeros&zeroMaxCall != 0 || s.MaxCallSeconds < 0 || s.MaxCallSeconds > MaxCallSecondsLimit {
		return fieldErr("max_call_seconds", fmt.Sprintf(
			"must be between timeout_seconds and %d %s", MaxCallSecondsLimit, hint("10 × timeout_seconds")))
	}
	if s.MaxCallSeconds > 0 && time.Duration(s.MaxCallSeconds)*time.Second < s.Timeout() {
		return fieldErr("max_call_seconds", fmt.Sprintf(
			"must not be less than timeout_seconds (%d)", int(s.Timeout()/time.Second)))
	}
	if err := validateCap("max_output_bytes", s.MaxOutputBytes, s.zeros&zeroMaxOutput != 0, hint(fmt.Sprint(DefaultMaxOutputBytes))); err != nil {
		return err
	}
	if err := validateCap("max_media_bytes", s.MaxMediaBytes, s.zeros&zeroMaxMedia != 0, hint(fmt.Sprint(DefaultMaxMediaBytes))); err != nil {
		return err
	}
	if s.ProtocolVersion != "" && !slices.Contains(SupportedProtocolVersions(), s.ProtocolVersion) {
		return fieldErr("protocol_version", fmt.Sprintf("unsupported version %s: want one of %s (or leave it out for the newest)",
			quote(s.ProtocolVersion), strings.Join(SupportedProtocolVersions(), ", ")))
	}
	return nil
}

func validateCap(field string, n int, zero bool, hint string) *FieldError {
	if n == NoCap || (!zero && n == 0) || (n >= MinOutputBytes && n <= MaxOutputBytesLimit) {
		return nil
	}
	return fieldErr(field, fmt.Sprintf(
		"must be -1 (no cap) or between %d and %d %s", MinOutputBytes, MaxOutputBytesLimit, hint))
}
