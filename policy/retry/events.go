package retry

import (
	"log/slog"

	"github.com/resilience4go/resilience4go/internal/contract"
)

// The kinds of event a retry publishes, one meaning per kind:
//   - EventAttempt for each failed attempt that will be retried, with Wait the wait
//     before the next attempt;
//   - EventExhausted when every attempt was made and the last one failed with an error
//     the retry would have retried (a result that If retries, returned with its nil
//     error when the attempts run out, publishes nothing);
//   - EventAborted when the retry stops on an outcome it does not retry (AbortOn,
//     outside On and If, policy.NeverRetried), whichever attempt it is, the
//     first included, because the caller's context ended (Err then matches the
//     context's error), or because the wait before the next attempt would end after the
//     context's deadline (Err is the last attempt's error; a result If retries,
//     returned then with its nil error, publishes nothing).
//
// So a call that ends in an error publishes one EventExhausted or one EventAborted (an
// asynchronous call ended by Cancel on its future publishes neither); a call that
// succeeds the first time publishes nothing and allocates nothing. Each attempt goes
// through every inner layer again: it takes its own rate-limiter permit and gets its own
// timeout.
var (
	// EventAttempt ("RetryAttempt"): attempt Attempt failed with Err and the next starts
	// after Wait. Logged at debug level; span event "resilience.retry.attempt".
	EventAttempt = contract.RegisterEvent(Layer, "RetryAttempt", slog.LevelDebug)
	// EventExhausted ("RetryExhausted"): every attempt was made and the last one,
	// Attempt, failed with Err, an error the retry would have retried. Logged as a
	// warning; span event "resilience.retry.exhausted".
	EventExhausted = contract.RegisterEvent(Layer, "RetryExhausted", slog.LevelWarn)
	// EventAborted ("RetryAborted"): the retry stopped on an outcome it does not retry,
	// because the caller's context ended, or because the wait before the next attempt
	// would end after the context's deadline. Attempt Attempt failed with Err, which
	// matches AbortOn or not the retry's conditions, or is the last attempt's error as is
	// when the deadline was too near (Err matches the context's error too when the
	// context ended). A call that ends in an error publishes one of EventExhausted and
	// EventAborted. Logged as a warning; span event "resilience.retry.aborted".
	EventAborted = contract.RegisterEvent(Layer, "RetryAborted", slog.LevelWarn)
)
