package rlcore

import (
	"strings"

	"github.com/resilience4go/resilience4go/internal/r4c"
)

// ParseLimit reads a limit as text: "permits/period" pairs separated by commas, e.g.
// "100/1m, 1000/24h", the first being Permits per Period and the others further windows
// (at most MaxMore). It returns c with Permits, Period and Windows replaced. Errors are
// ParseWindows's (keyed rateLimiter.windows), and R4C-ATR-005 for a text with no pair.
func ParseLimit(text string, c Config) (Config, error) {
	first, rest, _ := strings.Cut(text, ",")
	var w [MaxMore]Window
	n, err := ParseWindows(first, &w)
	if err != nil {
		return c, err
	}
	if n == 0 {
		return c, r4c.Errorf(r4c.BadNumber, "rateLimiter.windows", text,
			"a limit is permits/period, e.g. 100/1m, optionally followed by further windows, e.g. 100/1m, 1000/24h")
	}
	c.Permits, c.Period, c.Windows = w[0].Permits, w[0].Period, strings.TrimSpace(rest)
	return c, Validate(c, All)
}
