package policy

import (
	"math"
	"strings"
	"time"
)

// ParseDuration parses a configuration duration: Go's syntax ("100ms", "1s", "1m30s",
// "1.5h", "-2s") or a bare "0". Surrounding spaces are ignored. Bad syntax, an empty
// string, or a value of good syntax beyond the range of time.Duration (from
// -2562047h47m16.854775808s to 2562047h47m16.854775807s, about ±292 years) returns a
// *ConfigError with code R4C-ATR-001, whose reason says which of the two it is. Whether a
// negative duration is allowed is for the attribute to decide.
func ParseDuration(s string) (time.Duration, error) {
	t := strings.TrimSpace(s)
	d, err := time.ParseDuration(t)
	switch {
	case err == nil:
		return d, nil
	case durationSyntax(t) && strings.HasPrefix(t, "-"):
		return 0, &ConfigError{Code: codeBadDuration, Value: s,
			Reason: "out of range: a duration is at least " + time.Duration(math.MinInt64).String() + " (about -292 years)"}
	case durationSyntax(t):
		return 0, &ConfigError{Code: codeBadDuration, Value: s,
			Reason: "out of range: a duration is at most " + time.Duration(math.MaxInt64).String() + " (about 292 years)"}
	}
	return 0, &ConfigError{Code: codeBadDuration, Value: s,
		Reason: `not a duration: use a number with a unit, e.g. "100ms", "1s", "1m30s" (units ns, us, ms, s, m, h)`}
}

// codeBadDuration is the code of a duration ParseDuration rejects.
const codeBadDuration = "R4C-ATR-001"

// durationSyntax reports whether s has the syntax of time.ParseDuration, whatever its
// magnitude: an optional sign, then one or more numbers with a unit (ns, us, µs, μs, ms,
// s, m, h), each number with at least one digit before or after its optional point; or
// "0".
func durationSyntax(s string) bool {
	if s != "" && (s[0] == '-' || s[0] == '+') {
		s = s[1:]
	}
	if s == "0" {
		return true
	}
	if s == "" {
		return false
	}
	for s != "" {
		digits := 0
		for s != "" && '0' <= s[0] && s[0] <= '9' {
			s, digits = s[1:], digits+1
		}
		if s != "" && s[0] == '.' {
			s = s[1:]
			for s != "" && '0' <= s[0] && s[0] <= '9' {
				s, digits = s[1:], digits+1
			}
		}
		if digits == 0 {
			return false
		}
		unit := 0
		for unit < len(s) && s[unit] != '.' && (s[unit] < '0' || s[unit] > '9') {
			unit++
		}
		switch s[:unit] {
		case "ns", "us", "µs", "μs", "ms", "s", "m", "h":
		default:
			return false
		}
		s = s[unit:]
	}
	return true
}
