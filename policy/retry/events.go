package retry

import (
	"log/slog"

	"github.com/resilience4go/resilience4go/policy"
)

// The kinds of event a retry publishes. A call that succeeds at its first attempt
// publishes nothing.
var (
	// EventAttempt ("RetryAttempt"): attempt Attempt failed with Err and the next starts
	// after Wait. Logged at debug level; span event "resilience.retry.attempt".
	EventAttempt = policy.RegisterEventKind(policy.EventKindInfo{Name: "RetryAttempt",
		Layer: Layer, Level: slog.LevelDebug, SpanEvent: "resilience.retry.attempt"})
	// EventExhausted ("RetryExhausted"): every attempt was made and the last one,
	// Attempt, failed with Err, an error the retry would have retried. Logged as a
	// warning; span event "resilience.retry.exhausted".
	EventExhausted = policy.RegisterEventKind(policy.EventKindInfo{Name: "RetryExhausted",
		Layer: Layer, Level: slog.LevelWarn, SpanEvent: "resilience.retry.exhausted"})
	// EventAborted ("RetryAborted"): the retry stopped on an outcome it does not retry,
	// because the caller's context ended, or because the wait before the next attempt
	// would end after the context's deadline. Attempt Attempt failed with Err, which
	// matches AbortOn or not the retry's conditions, or is the last attempt's error as is
	// when the deadline was too near (Err matches the context's error too when the
	// context ended). A call that ends in an error publishes one of EventExhausted and
	// EventAborted. Logged as a warning; span event "resilience.retry.aborted".
	EventAborted = policy.RegisterEventKind(policy.EventKindInfo{Name: "RetryAborted",
		Layer: Layer, Level: slog.LevelWarn, SpanEvent: "resilience.retry.aborted"})
)
