// Package r4c holds the R4C error codes of resilience4go's configuration errors, and the
// helpers that make and read a *policy.ConfigError. Users read a code as
// policy.ConfigError.Code, a string such as "R4C-ATR-003"; docs/SPEC.md lists them all.
package r4c

import (
	"errors"
	"fmt"

	"github.com/resilience4go/resilience4go/policy"
)

// The codes shared by the policies and the registry. A policy's own codes (e.g. the
// hedge's R4C-HDG-*) are declared in its package.
const (
	BadDuration      = "R4C-ATR-001" // a duration is not valid syntax, e.g. "10 parsecs"
	ZeroPeriod       = "R4C-ATR-002" // rateLimiter.period is zero or negative
	BadPermits       = "R4C-ATR-003" // rateLimiter.permits is less than 1
	NegativeDuration = "R4C-ATR-004" // a wait, delay or duration is negative
	BadNumber        = "R4C-ATR-005" // a number is not valid syntax
	BadBoolean       = "R4C-ATR-006" // enabled (or another flag) is not a boolean
	OutOfRange       = "R4C-ATR-007" // a count, percentage or factor is outside its range
	BadAttempts      = "R4C-ATR-008" // a hedge's maxAttempts is outside 2..10
	PeriodTooShort   = "R4C-REG-001" // period shorter than 1ns per permit
	UnknownConfig    = "R4C-REG-004" // configs.<name> names no configuration
	Conflict         = "R4C-REG-008" // one shared name, two different configurations
	UnknownInstance  = "R4C-REG-009" // no policy instance with that id
	BadSpec          = "R4C-REG-010" // a spec does not fit the function (e.g. fallback type)
	BadOrder         = "R4C-REG-011" // a composition's order names a layer twice, or an unknown one
	NotLive          = "R4C-REG-012" // a setting that cannot change on a running instance
	UnknownKey       = "R4C-CFG-001" // unknown configuration key
	BadSource        = "R4C-CFG-002" // a properties, YAML or env source is malformed
	DuplicateKey     = "R4C-CFG-003" // a key is set twice in one source
	LockedOverride   = "R4C-CFG-014" // a key that a locked spec's options in code overrule
)

// Errorf returns a *policy.ConfigError with the reason formatted from format and args.
func Errorf(code, key, value, format string, args ...any) *policy.ConfigError {
	return &policy.ConfigError{Code: code, Key: key, Value: value, Reason: fmt.Sprintf(format, args...)}
}

// CodeOf returns the R4C code of err if it is, or wraps, a *policy.ConfigError; ""
// otherwise.
func CodeOf(err error) string {
	if ce, ok := errors.AsType[*policy.ConfigError](err); ok {
		return ce.Code
	}
	return ""
}
