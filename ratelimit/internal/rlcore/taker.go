package rlcore

import (
	"time"

	"github.com/resilience4go/resilience4go/ratelimit/backend"
)

// Taker is what a backend's store may implement besides backend.Store, outside the public
// contract: a decision in-process, for a call that cannot wait, with no backend.Request
// or backend.Grant to copy (ratelimit/redis's store with leases). A limiter finds it once,
// when it binds, and asks it first for its calls that never wait.
type Taker interface {
	// TryTake decides n permits, 1..permits, at the clock time now (the limiter's clock,
	// in ns), at the rate of permits per period with the further windows wins (the
	// limiter's, as Reserve gets them): backend.Admitted; backend.Refused with the
	// retry-after in ns; or any other verdict when the store cannot decide it so, and
	// then the call goes to Reserve. It must not block, and never allocates.
	TryTake(now int64, n, permits int, period time.Duration, wins []backend.Window) (v backend.Verdict, wait int64)
}
