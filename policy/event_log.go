package policy

import (
	"fmt"
	"log/slog"
	"strings"
)

// String formats the event on one line, for logs: the kind, the instance (when it has an
// id) and at=, then each of the others that is set, as key=value.
func (e Event) String() string {
	s := e.Kind.String()
	if e.Instance != "" {
		s += " " + e.Instance
	}
	s += fmt.Sprintf(" at=%v", e.At)
	if e.Key != "" {
		s += fmt.Sprintf(" key=%q", e.Key)
	}
	for _, a := range e.Attrs {
		if a.Key != "" {
			s += " " + a.Key + "=" + a.Value.String()
		}
	}
	if e.Attempt > 0 {
		s += fmt.Sprintf(" attempt=%d", e.Attempt)
	}
	if e.Wait > 0 {
		s += fmt.Sprintf(" wait=%v", e.Wait)
	}
	if e.RetryAfter > 0 {
		s += fmt.Sprintf(" retry-after=%v", e.RetryAfter)
	}
	if len(e.Changed) > 0 {
		s += " changed=" + strings.Join(e.Changed, ",")
	}
	if e.Err != nil {
		s += " err=" + e.Err.Error()
	}
	return s
}

// LogValue makes Event a slog.LogValuer: logged as an attribute, e.g.
// slog.Any("event", e), an event is a group of the attributes below, with snake_case
// keys. kind (the kind's name, as String), instance and at are always present; each of
// the others only when its field is not zero, which is when it applies to the kind:
//
//   - kind: string, e.g. "RateLimiterRejected"
//   - instance: string, the instance id
//   - at: duration, the time on the policy's clock (Event.At)
//   - wait, retry_after: durations
//   - attempt: int
//   - key: string
//   - the attributes of the kind's own (Attrs), as they are: e.g. from and to, the states
//     of a breaker's transition
//   - changed: []string, the names of the settings that changed, sorted
//   - err: string, Err's message
//
// Durations are slog duration values: a text handler writes them as Go durations
// ("100ms"), the JSON handler as integer nanoseconds. Through slog.NewTextHandler a
// rejection logged as logger.Warn("rejected", "event", e) reads:
//
//	level=WARN msg=rejected event.kind=RateLimiterRejected event.instance=SearchAPI.Search event.at=1s event.retry_after=100ms event.err="ratelimit: rate limit exceeded for \"SearchAPI.Search\""
//
// It allocates the group's attributes once, sized to the fields present, plus what
// Err's Error method allocates and, with Changed, the boxing of the slice, which is not
// copied. It is safe for concurrent use, as long as nobody changes Changed meanwhile.
func (e Event) LogValue() slog.Value {
	n := 3
	for _, set := range [...]bool{e.Wait != 0, e.RetryAfter != 0, e.Attempt != 0, e.Key != "",
		len(e.Changed) > 0, e.Err != nil} {
		if set {
			n++
		}
	}
	for _, a := range e.Attrs {
		if a.Key != "" {
			n++
		}
	}
	as := make([]slog.Attr, 0, n)
	as = append(as,
		slog.String("kind", e.Kind.String()),
		slog.String("instance", e.Instance),
		slog.Duration("at", e.At))
	if e.Wait != 0 {
		as = append(as, slog.Duration("wait", e.Wait))
	}
	if e.RetryAfter != 0 {
		as = append(as, slog.Duration("retry_after", e.RetryAfter))
	}
	if e.Attempt != 0 {
		as = append(as, slog.Int("attempt", e.Attempt))
	}
	if e.Key != "" {
		as = append(as, slog.String("key", e.Key))
	}
	for _, a := range e.Attrs {
		if a.Key != "" {
			as = append(as, a)
		}
	}
	if len(e.Changed) > 0 {
		as = append(as, slog.Any("changed", e.Changed))
	}
	if e.Err != nil {
		as = append(as, slog.String("err", e.Err.Error()))
	}
	return slog.GroupValue(as...)
}
