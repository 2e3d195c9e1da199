package r4c

import (
	"math"
	"strconv"
	"strings"
	"time"
)

// The checks below are the range checks that several policies make of their
// configurations, with one wording. Each takes the key of the attribute it checks (e.g.
// "bulkhead.maxWait"), whose last segment begins the reason, and the value as it is, which
// it formats only when it fails. A why that is not "" is added to the reason in
// parentheses. A policy's validate lists them in the order it checks them, in First.

// First returns the first error of errs that is not nil; nil when all are.
func First(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// AtLeast returns nil when n >= least, else an OutOfRange error: "<attr> must be at least
// <least>".
func AtLeast(key string, n, least int, why string) error {
	if n >= least {
		return nil
	}
	return Errorf(OutOfRange, key, strconv.Itoa(n), "%s must be at least %d%s", attr(key), least, paren(why))
}

// NotNegative returns nil when d >= 0, else a NegativeDuration error: "<attr> must not be
// negative".
func NotNegative(key string, d time.Duration, why string) error {
	if d >= 0 {
		return nil
	}
	return Errorf(NegativeDuration, key, d.String(), "%s must not be negative%s", attr(key), paren(why))
}

// Positive returns nil when d > 0, else NotNegative's error for a negative d and an
// OutOfRange error for 0: "<attr> must be positive".
func Positive(key string, d time.Duration, why string) error {
	if d > 0 {
		return nil
	}
	if err := NotNegative(key, d, ""); err != nil {
		return err
	}
	return Errorf(OutOfRange, key, d.String(), "%s must be positive%s", attr(key), paren(why))
}

// FiniteAtLeast returns nil when f >= least and f is finite, else an OutOfRange error:
// "<attr> must be a finite number of at least <least>". NaN fails.
func FiniteAtLeast(key string, f, least float64, why string) error {
	if f >= least && !math.IsInf(f, 1) {
		return nil
	}
	return Errorf(OutOfRange, key, FormatFloat(f), "%s must be a finite number of at least %s%s",
		attr(key), FormatFloat(least), paren(why))
}

// Between returns nil when lo <= f <= hi, else an OutOfRange error: "<attr> must be
// between <lo> and <hi>". NaN fails.
func Between(key string, f, lo, hi float64) error {
	if f >= lo && f <= hi {
		return nil
	}
	return Errorf(OutOfRange, key, FormatFloat(f), "%s must be between %s and %s", attr(key), FormatFloat(lo), FormatFloat(hi))
}

// FormatFloat formats f as a configuration value is written: the shortest decimal that
// reads back as f, e.g. "0.5", "1e+06".
func FormatFloat(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

// attr returns the attribute a key names: its last segment.
func attr(key string) string { return key[strings.LastIndexByte(key, '.')+1:] }

// paren returns why in parentheses after a space; "" for an empty why.
func paren(why string) string {
	if why == "" {
		return ""
	}
	return " (" + why + ")"
}
