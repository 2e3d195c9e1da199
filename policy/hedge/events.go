package hedge

import (
	"log/slog"

	"github.com/resilience4go/resilience4go/internal/contract"
)

// The kinds of event a hedge publishes, one meaning per kind. A call whose first attempt
// answers within the delay publishes nothing.
//
// A call that never started a second attempt publishes neither EventWon nor EventFailed,
// whatever its outcome (it may have published EventSkipped): a call that succeeds or
// fails on its single attempt is the plain call. A call ended by Cancel or by its
// context publishes nothing more. Events are published on the goroutine where the hedge
// decides (the caller's, a clock timer's, or the one that completes an attempt), one
// call's in order; a recorder (a registry's observer) gets them with the context of the
// call.
var (
	// EventHedged ("Hedged"): the hedge started attempt Attempt (2 or more), Wait after
	// the call began, because no result had arrived within its delay or because attempt
	// Attempt-1 failed with an error that starts a hedge at once (Err is that error; nil
	// after the delay). Logged at debug level; span event "resilience.hedge.hedged".
	EventHedged = contract.RegisterEvent(Layer, "Hedged", slog.LevelDebug)
	// EventWon ("HedgeWon"): attempt Attempt succeeded first; the others were canceled.
	// Published only for a call that started at least one hedge. Logged at debug level;
	// span event "resilience.hedge.won".
	EventWon = contract.RegisterEvent(Layer, "HedgeWon", slog.LevelDebug)
	// EventSkipped ("HedgeSkipped"): the hedge budget, or the retry budget of the hedge's
	// composition, refused attempt Attempt, which was not started. Logged at debug level;
	// span event "resilience.hedge.skipped".
	EventSkipped = contract.RegisterEvent(Layer, "HedgeSkipped", slog.LevelDebug)
	// EventFailed ("HedgeFailed"): every attempt of a hedged call failed, or one failed
	// with an error that stops the hedge (AbortOn); Err is the error the call fails with,
	// Attempt the attempt that returned it. Logged as a warning; span event
	// "resilience.hedge.failed".
	EventFailed = contract.RegisterEvent(Layer, "HedgeFailed", slog.LevelWarn)
)
