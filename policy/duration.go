package policy

import (
	"strings"
	"time"
)

// ParseDuration parses a configuration duration: Go's syntax ("100ms", "1s", "1m30s",
// "1.5h", "-2s") or a bare "0". Surrounding spaces are ignored. Bad syntax, an empty
// string or a value beyond ±292 years returns a *ConfigError with code R4C-ATR-001.
// Whether a negative duration is allowed is for the attribute to decide.
func ParseDuration(s string) (time.Duration, error) {
	t := strings.TrimSpace(s)
	d, err := time.ParseDuration(t)
	if err != nil {
		return 0, &ConfigError{Code: CodeBadDuration, Value: s,
			Reason: `not a duration: use a number with a unit, e.g. "100ms", "1s", "1m30s" (units ns, us, ms, s, m, h)`}
	}
	return d, nil
}
