package policy

import (
	"context"
	"strconv"
	"strings"
)

// Priority is how much a call matters when a policy must shed load: a bulkhead or an
// adaptive limit that keeps part of its capacity for higher priorities admits, queues and
// sheds by it. Higher is more important. The four named levels are the usual ones;
// any value from PrioritySheddable to PriorityCriticalPlus is valid. A call that carries
// none is PriorityCritical.
type Priority int8

// The priority levels, from the first shed to the last.
const (
	// PrioritySheddable is work whose loss nobody notices at once: batch jobs,
	// prefetches, retries of background tasks.
	PrioritySheddable Priority = iota
	// PrioritySheddablePlus is work a user may notice, but that can be done again later.
	PrioritySheddablePlus
	// PriorityCritical is the work a service exists for: a user waits for it. It is the
	// priority of a call that carries none.
	PriorityCritical
	// PriorityCriticalPlus is the work that must go through when everything else is
	// shed: health checks, payments, the control plane.
	PriorityCriticalPlus
)

// priorityNames are the levels' names, in order, as String and ParsePriority spell them.
var priorityNames = [...]string{"sheddable", "sheddable_plus", "critical", "critical_plus"}

// String returns the level's name ("sheddable", "sheddable_plus", "critical",
// "critical_plus"), or its number for a value outside the levels.
func (p Priority) String() string {
	if p >= PrioritySheddable && p <= PriorityCriticalPlus {
		return priorityNames[p]
	}
	return strconv.Itoa(int(p))
}

// ParsePriority parses a level's name, in any ASCII case and with '-' for '_'
// ("critical-plus"), or its number, one digit from 0 to 3, with surrounding spaces
// ignored. Anything else ("+1", "01", a name with non-ASCII letters) fails with a
// *ConfigError of code R4C-ATR-007 (a choice out of range) and returns
// PriorityCritical. It takes time linear in len(s).
func ParsePriority(s string) (Priority, error) {
	name := []byte(strings.TrimSpace(s))
	for i, c := range name {
		switch {
		case c >= 'A' && c <= 'Z':
			name[i] = c + 'a' - 'A'
		case c == '-':
			name[i] = '_'
		}
	}
	for i, n := range priorityNames {
		if string(name) == n {
			return Priority(i), nil
		}
	}
	if len(name) == 1 && name[0] >= '0' && name[0] <= '3' {
		return Priority(name[0] - '0'), nil
	}
	return PriorityCritical, &ConfigError{Code: codeBadChoice, Key: "priority", Value: s,
		Reason: "not a priority: want one of " + strings.Join(priorityNames[:], ", ") + ", or 0 to 3"}
}

// codeBadChoice is the code of a choice out of range.
const codeBadChoice = "R4C-ATR-007"

// priorityKey is the context key of a call's priority.
type priorityKey struct{}

// WithPriority returns a copy of ctx whose calls carry priority p. A p outside the levels
// is clamped to the nearest one. It allocates one context.
func WithPriority(ctx context.Context, p Priority) context.Context {
	return context.WithValue(ctx, priorityKey{}, min(max(p, PrioritySheddable), PriorityCriticalPlus))
}

// PriorityFrom returns the priority ctx carries: PriorityCritical when it carries none
// or ctx is nil. It allocates nothing.
func PriorityFrom(ctx context.Context) Priority {
	if ctx != nil {
		if p, ok := ctx.Value(priorityKey{}).(Priority); ok {
			return p
		}
	}
	return PriorityCritical
}
