// Package timeout is resilience4go's timeout policy (layer policy.LayerTimeout): a call
// that runs longer than its Duration fails with ErrTimeout.
//
// A synchronous call runs on the caller's goroutine, with a context that ends at the
// deadline: no goroutine is started per call. Go cannot stop a goroutine from outside, so
// the function must honour its context for the timeout to cut it short. When the deadline
// passes before the function returns, the policy returns the timeout's *TimeoutError
// (matching ErrTimeout and context.DeadlineExceeded) and discards the function's result,
// even a success; a function that ignores its context keeps the caller waiting until it
// returns, and the caller then gets ErrTimeout all the same.
//
// An asynchronous call starts at once with that context, and its future fails with the
// timeout's error at the deadline, scheduled with a clock timer (no goroutine waits); the
// inner future is then canceled. A call that completes in time stops its timer
// at once, so a manual clock's PendingTasks drops as soon as the call is over.
//
// The deadline is measured on the policy's clock (a registry's clock, when the timeout is
// built through one): with a manual clock the context ends when the test advances the
// clock past it. In the default order the timeout sits inside the rate limiter and
// outside the bulkhead, so time spent waiting for a permit does not count, and time spent
// waiting for a bulkhead slot does.
//
// A call whose context is nil or already done when it arrives never runs the function
// and publishes nothing: it returns the context's error as is (policy.ErrNilContext for
// a nil context), or, async, a future failed with it.
//
// A TimeoutExceeded event is published for every call that ran past its deadline, with
// Timeout the Duration it was given.
//
// Defaults: Enabled true; Duration has no default and must be positive.
//
// The timeout's error, a *TimeoutError, is made once per instance: timing out allocates
// no error. It matches ErrTimeout and context.DeadlineExceeded.
package timeout

import (
	"context"
	"time"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/internal/kind"
	"github.com/resilience4go/resilience4go/policy"
)

// Timeout bounds how long calls may run. It is safe for concurrent use; its configuration
// is fixed when it is built. It holds no per-call state: every call has its own deadline.
type Timeout struct {
	d       time.Duration
	enabled bool
	system  bool // the clock is clock.System(): let the runtime's context timer do the work
	clk     clock.Clock
	cfg     Config
	events  kind.Events
	err     *TimeoutError
}

// New builds a timeout of d (positive) with opts. An invalid configuration returns a
// *policy.ConfigError: R4C-ATR-004 (d < 0) or R4C-ATR-007 (d == 0). The instance id is
// WithInstanceID's, else the Name, else "timeout".
func New(d time.Duration, opts ...Option) (*Timeout, error) {
	return kind.New(defaults, build, append([]Option{Duration(d)}, opts...))
}

func build(s settings) (*Timeout, error) {
	if err := s.Config.Validate(); err != nil {
		return nil, err
	}
	id := s.ID("timeout")
	clk := s.ClockOrSystem()
	return &Timeout{
		d:       s.Duration,
		enabled: !s.Disabled,
		system:  clock.IsSystem(clk),
		clk:     clk,
		cfg:     s.Config,
		events:  s.EventsOf(id),
		err:     newTimeoutError(id, s.Duration),
	}, nil
}

// InstanceID returns the timeout's id, which names it in its events and its error.
func (t *Timeout) InstanceID() string { return t.events.ID }

// Config returns the timeout's resolved configuration.
func (t *Timeout) Config() Config { return t.cfg }

// Clock returns the timeout's time source.
func (t *Timeout) Clock() clock.Clock { return t.clk }

// Err returns the timeout's one error (a *TimeoutError matching ErrTimeout and
// context.DeadlineExceeded).
func (t *Timeout) Err() error { return t.err }

// NewPolicy returns t as a policy of layer LayerTimeout, for calls returning T.
func NewPolicy[T any](t *Timeout) policy.Policy[T] {
	return policy.Of(policy.LayerTimeout, t, DecorateFunc[struct{}, T], DecorateAsyncFunc[struct{}, T])
}

// DecorateFunc returns next bounded by t. Each call runs next on the caller's goroutine
// with a context derived from ctx that ends at the deadline, Duration from now on t's
// clock:
//   - next returns before the deadline: its result is returned as is, and the deadline's
//     timer is stopped at once;
//   - the deadline passes first: the call returns the zero T and t's *TimeoutError
//     (matching ErrTimeout and context.DeadlineExceeded), whatever next returned, and a
//     TimeoutExceeded event is published when next returns (Timeout = Duration). The context
//     next ran under reports Err() == context.DeadlineExceeded (exactly, as the standard
//     library's deadlines do) and context.Cause == the *TimeoutError.
//
// The caller waits for next to return in every case: a next that ignores its context
// delays the caller past the deadline (no goroutine is abandoned) and then gets
// ErrTimeout. A deadline of ctx earlier than t's ends next's context first; next's own
// result (typically ctx's error) is then returned as is. A call that returns exactly at
// its deadline may be reported either way. A ctx that is nil or already done when the
// call arrives does not run next and publishes nothing: the call returns ctx's error
// (policy.ErrNilContext for a nil ctx) as is.
//
// Each call allocates its context and timer (as context.WithTimeout does); nothing else. A
// disabled timeout lets every call through to next, but for a nil or done ctx, whose error
// it returns as is.
func DecorateFunc[A, T any](t *Timeout, next policy.Func[A, T]) policy.Func[A, T] {
	if !t.enabled {
		return policy.Guard(next)
	}
	if t.system {
		return func(ctx context.Context, a A) (T, error) {
			if err := policy.ContextErr(ctx); err != nil {
				var zero T
				return zero, err
			}
			cctx, cancel := context.WithTimeoutCause(ctx, t.d, t.err)
			v, err := next(cctx, a)
			cancel()
			if context.Cause(cctx) == error(t.err) {
				return timedOut[T](t)
			}
			return v, err
		}
	}
	return func(ctx context.Context, a A) (T, error) {
		if err := policy.ContextErr(ctx); err != nil {
			var zero T
			return zero, err
		}
		c := newClockCtx(ctx, t)
		timer := t.clk.AfterFunc(t.d, c.expire)
		v, err := next(c, a)
		timer.Stop()
		c.cancel(context.Canceled) // no effect if the deadline ended it first
		if c.expired() {
			return timedOut[T](t)
		}
		return v, err
	}
}

// timedOut discards the result of a call that ran past its deadline.
func timedOut[T any](t *Timeout) (T, error) {
	t.publish()
	var zero T
	return zero, t.err
}

func (t *Timeout) publish() {
	t.events.Publish(policy.Event{Kind: policy.TimeoutExceeded, Timeout: t.d, Err: t.err})
}
