package contract

import (
	"log/slog"
	"strings"

	"github.com/resilience4go/resilience4go/policy"
)

// RegisterEvent registers, with policy.RegisterEventKind, the kind of event name that
// layer l publishes, logged at level, whose span event is SpanEvent(l, name): the
// registration of a built-in kind that has no attributes of its own and one level.
func RegisterEvent(l policy.Layer, name string, level slog.Level) policy.EventKind {
	return policy.RegisterEventKind(policy.EventKindInfo{Name: name, Layer: l, Level: level, SpanEvent: SpanEvent(l, name)})
}

// SpanEvent returns the span event name of the built-in kind of event name that layer l
// publishes: "resilience.", l in snake_case, ".", then the last word of name (from its
// last upper-case letter) in lower case. E.g. "resilience.rate_limiter.rejected" for
// RateLimiterRejected of layer rateLimiter, "resilience.hedge.hedged" for Hedged.
func SpanEvent(l policy.Layer, name string) string {
	word := name[max(strings.LastIndexFunc(name, isUpper), 0):]
	return "resilience." + snakeCase(string(l)) + "." + strings.ToLower(word)
}

// snakeCase returns camel, a camelCase name, in snake_case: "circuitBreaker" reads
// "circuit_breaker".
func snakeCase(camel string) string {
	var b strings.Builder
	for _, r := range camel {
		if isUpper(r) {
			b.WriteByte('_')
		}
		b.WriteRune(r)
	}
	return strings.ToLower(b.String())
}

// isUpper reports whether r is an ASCII upper-case letter.
func isUpper(r rune) bool { return 'A' <= r && r <= 'Z' }
