// Package priorityvalue reads a call's priority from the text a client sent (an HTTP
// header's value, a gRPC metadata value) for the server adapters, and writes it for the
// client ones.
package priorityvalue

import (
	"github.com/resilience4go/resilience4go/internal/r4c"
	"github.com/resilience4go/resilience4go/policy"
)

// MaxLen is the longest value Parse reads: every spelling that policy.ParsePriority
// accepts with a little space around it is shorter, and a longer value is not read, so
// that a client's value costs at most this much work.
const MaxLen = 32

// Parse returns the priority that s names, as policy.ParsePriority reads it, and false
// when s names none or is longer than MaxLen. The names as Priority.String writes them
// and the numbers 0 to 3 cost no allocation; other spellings ("Critical",
// "critical-plus") may cost one or two, as may a value that names no priority.
func Parse(s string) (policy.Priority, bool) {
	switch s {
	case "sheddable", "0":
		return policy.PrioritySheddable, true
	case "sheddable_plus", "1":
		return policy.PrioritySheddablePlus, true
	case "critical", "2":
		return policy.PriorityCritical, true
	case "critical_plus", "3":
		return policy.PriorityCriticalPlus, true
	}
	if len(s) == 0 || len(s) > MaxLen {
		return policy.PriorityCritical, false
	}
	p, err := policy.ParsePriority(s)
	return p, err == nil
}

// Valid reports whether p is one of the four levels.
func Valid(p policy.Priority) bool {
	return p >= policy.PrioritySheddable && p <= policy.PriorityCriticalPlus
}

// Nearest returns the level nearest to p: p itself when it is one, else the lowest or
// the highest, as policy.WithPriority clamps it. A server adapter compares it, not p,
// with the priority the context carries, so that a value outside the levels whose nearest
// level is the context's costs nothing.
func Nearest(p policy.Priority) policy.Priority {
	return min(max(p, policy.PrioritySheddable), policy.PriorityCriticalPlus)
}

// Asked returns the priority a client asks for with values, the values of its header or
// metadata: the first one's, as Parse reads it, lowered to highest, what the server grants
// a client at most. False when there is no value or the first names no priority.
func Asked(values []string, highest policy.Priority) (policy.Priority, bool) {
	if len(values) == 0 {
		return 0, false
	}
	p, ok := Parse(values[0])
	if !ok {
		return 0, false
	}
	return min(p, highest), true
}

// CheckHighest returns nil when highest, the highest priority a server grants its
// clients, is a level; else a *policy.ConfigError R4C-ATR-007 under key, the option that
// set it.
func CheckHighest(key string, highest policy.Priority) error {
	if Valid(highest) {
		return nil
	}
	return r4c.Errorf(r4c.OutOfRange, key, highest.String(),
		"the highest priority a client may ask for is a level, from policy.PrioritySheddable to policy.PriorityCriticalPlus")
}
