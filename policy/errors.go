package policy

import (
	"errors"
	"fmt"
	"unicode/utf8"
)

// ConfigError reports an invalid configuration: a bad attribute value, an unknown key or
// name, a conflict between shared instances. Every one carries an R4C code (the error
// codes page of the documentation lists them, e.g. R4C-ATR-001 for a duration of bad
// syntax, R4C-CFG-001 for an unknown key, R4C-REG-008 for two configurations of one
// shared name). Error() starts with the code, e.g. `R4C-ATR-003: rateLimiter.permits =
// "0": permits must be at least 1`. Read it with errors.As; test its code with errors.Is
// (see Is).
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
// so that errors.Is(err, &policy.ConfigError{Code: "R4C-ATR-003"}) tests the code. A
// target with a Key or a Reason matches only itself.
func (e *ConfigError) Is(target error) bool {
	var t *ConfigError
	return errors.As(target, &t) && t != nil && t.Code == e.Code && t.Key == "" && t.Reason == ""
}
