package policy

import (
	"errors"
	"fmt"
	"unicode/utf8"
)

// The error codes. Every configuration error carries one, in its message and in
// ConfigError.Code.
const (
	CodeBadDuration      = "R4C-ATR-001" // a duration is not valid syntax, e.g. "10 parsecs"
	CodeZeroPeriod       = "R4C-ATR-002" // rateLimiter.period is zero or negative
	CodeBadPermits       = "R4C-ATR-003" // rateLimiter.permits is less than 1
	CodeNegativeDuration = "R4C-ATR-004" // a wait, delay or duration is negative
	CodeBadNumber        = "R4C-ATR-005" // a number is not valid syntax
	CodeBadBoolean       = "R4C-ATR-006" // enabled (or another flag) is not a boolean
	CodeOutOfRange       = "R4C-ATR-007" // a count, percentage or factor is outside its range
	CodeBadAttempts      = "R4C-ATR-008" // a hedge's maxAttempts is outside 2..10
	CodePeriodTooShort   = "R4C-REG-001" // period shorter than 1ns per permit
	CodeUnknownConfig    = "R4C-REG-004" // configs.<name> names no configuration
	CodeConflict         = "R4C-REG-008" // one shared name, two different configurations
	CodeUnknownInstance  = "R4C-REG-009" // no policy instance with that id
	CodeBadSpec          = "R4C-REG-010" // a spec does not fit the function (e.g. fallback type)
	CodeBadOrder         = "R4C-REG-011" // a composition's order names a layer twice, or an unknown one
	CodeNotLive          = "R4C-REG-012" // a setting that cannot change on a running instance
	CodeUnknownKey       = "R4C-CFG-001" // unknown configuration key
	CodeBadSource        = "R4C-CFG-002" // a properties, YAML or env source is malformed
	CodeDuplicateKey     = "R4C-CFG-003" // a key is set twice in one source
)

// ConfigError reports an invalid configuration: a bad attribute value, an unknown key or
// name, a conflict between shared instances. Error() starts with the code, e.g.
// `R4C-ATR-003: rateLimiter.permits = "0": permits must be at least 1`. Read it with
// errors.As; test its code with errors.Is (see Is).
type ConfigError struct {
	Code   string // e.g. "R4C-ATR-003"
	Key    string // the attribute or configuration key, e.g. "rateLimiter.permits"
	Value  string // the offending value as written, if any
	Reason string // what is wrong, in words
}

// Error returns "CODE: key = "value": reason", leaving out the parts that are empty. A
// key or value longer than 160 bytes is shown shortened, its start and end around an
// ellipsis followed by its length, e.g. `instances.xxx…xxx.rateLimiter.permit (20512
// bytes)`; the fields keep it whole.
func (e *ConfigError) Error() string {
	s := e.Code + ": "
	switch {
	case e.Key != "" && e.Value != "":
		s += shorten(e.Key, false) + " = " + shorten(e.Value, true) + ": "
	case e.Key != "":
		s += shorten(e.Key, false) + ": "
	case e.Value != "":
		s += shorten(e.Value, true) + ": "
	}
	return s + e.Reason
}

// The longest key or value that Error shows whole, and how much of a longer one it shows
// from the start and from the end, in bytes.
const (
	maxShown  = 160
	shownHead = 100
	shownTail = 40
)

// shorten returns s as Error shows it, quoted if quote is set: whole up to maxShown bytes,
// else its start and end around an ellipsis, cut between characters, and its length.
func shorten(s string, quote bool) string {
	if len(s) <= maxShown {
		if quote {
			return fmt.Sprintf("%q", s)
		}
		return s
	}
	head, tail := shownHead, len(s)-shownTail
	for head > 0 && !utf8.RuneStart(s[head]) {
		head--
	}
	for tail < len(s) && !utf8.RuneStart(s[tail]) {
		tail++
	}
	short := s[:head] + "…" + s[tail:]
	if quote {
		short = fmt.Sprintf("%q", short)
	}
	return fmt.Sprintf("%s (%d bytes)", short, len(s))
}

// Is reports whether target is a *ConfigError with the same Code and no Key or Reason,
// so that errors.Is(err, &policy.ConfigError{Code: policy.CodeBadPermits}) tests the
// code. A target with a Key or a Reason matches only itself.
func (e *ConfigError) Is(target error) bool {
	var t *ConfigError
	return errors.As(target, &t) && t != nil && t.Code == e.Code && t.Key == "" && t.Reason == ""
}

// Errorf returns a *ConfigError with the reason formatted from format and args.
func Errorf(code, key, value, format string, args ...any) *ConfigError {
	return &ConfigError{Code: code, Key: key, Value: value, Reason: fmt.Sprintf(format, args...)}
}

// CodeOf returns the R4C code of err if it is, or wraps, a *ConfigError; "" otherwise.
func CodeOf(err error) string {
	var ce *ConfigError
	if errors.As(err, &ce) {
		return ce.Code
	}
	return ""
}
